"""Wrong answers and leaks found by checking every question of the library against independent
re-implementations on recorded episodes (issue 30), each shown on a small episode whose answers are worked
out below, through the compiled SQL and against the reference evaluator."""

from __future__ import annotations

from support.ground_truth import differences, library, reference_candidates, sql_candidates, store_of
from support.strategies import jericho_episode, seeded_episode


def candidates(template_id: str, episodes: list, horizon: int | None = None) -> list:
    """The compiled SQL's candidates, checked to be the reference evaluator's."""
    compiled, store = next(c for c in library() if c.id == template_id), store_of(episodes)
    sql = sql_candidates(store.con, compiled, horizon)
    assert not differences(sql, reference_candidates(store, compiled, horizon))
    return sql


# Step 2 gets the egg with the lamp inside it ("get egg": a container and its contents), so "the first
# thing you got after step 1" has two right options; after step 2 it is the sword alone.
#  step  action       got
#   1    look         -
#   2    take egg     egg, lamp
#   3    take sword   sword
#   4    take rope    rope
#   5    take leaflet leaflet
TWO_AT_ONCE = [(("idle", "look"), None, 0), (("take", "egg", "lamp"), None, 0), (("take", "sword"), None, 0),
               (("take", "rope"), None, 0), (("take", "leaflet"), None, 0)]


def test_a_multiple_choice_is_not_asked_where_two_things_were_got_at_once():
    asked = {c.params["t"]: c for c in candidates("jericho.choice_first_gain_after", [jericho_episode(TWO_AT_ONCE)])
             if not c.adversarial}
    assert 1 not in asked
    assert asked[2].answer == "sword" and "sword" not in asked[2].distractors


# Two rooms titled Forest (20, 21); the second is first entered at step 5, after the horizon of 4.
#  step  action   room after
#   1    north    20 Forest
#   2    east     30 Clearing
#   3    up       40 Attic
#   4    down     10 West of House
#   5    west     21 Forest
#   6    east     10 West of House
TWO_FORESTS = [(("move", "north", 20), None, 0), (("move", "east", 30), None, 0), (("move", "up", 40), None, 0),
               (("move", "down", 10), None, 0), (("move", "west", 21), None, 0), (("move", "east", 10), None, 0)]


def test_options_under_a_horizon_name_no_room_first_entered_after_it():
    asked = candidates("jericho.choice_room_before", [jericho_episode(TWO_FORESTS)], horizon=4)
    assert asked and all(not any(option.startswith("Forest (") for option in c.distractors) for c in asked)
    whole = candidates("jericho.choice_room_before", [jericho_episode(TWO_FORESTS)])
    assert any("Forest (1)" in c.distractors for c in whole)


def test_rooms_sharing_a_title_are_numbered_among_those_entered_by_the_horizon():
    at = {c.params["room"]: c.displays["room"] for c in
          candidates("jericho.choice_room_before", [jericho_episode(TWO_FORESTS)], horizon=4) if not c.adversarial}
    assert at[20] == "Forest"  # one Forest by step 4: "Forest (1)" would tell that there is another
    whole = {c.params["room"]: c.displays["room"] for c in
             candidates("jericho.choice_room_before", [jericho_episode(TWO_FORESTS)]) if not c.adversarial}
    assert (whole[20], whole[21]) == ("Forest (1)", "Forest (2)")


def test_no_reasoning_question_true_or_false_on_an_episode_without_reasoning():
    episode = jericho_episode(TWO_AT_ONCE)  # no step gives a reason
    reasoning = ["jericho.keyword_count_reason", "jericho.keyword_in_reason_step", "jericho.after_keyword_action",
                 "jericho.after_keyword_room", "jericho.after_keyword_obs", "jericho.after_keyword_score"]
    for template_id in reasoning:
        assert not candidates(template_id, [episode]), template_id
    with_reasons = jericho_episode([(intent, "Take the egg, then the sword.", reward)
                                    for intent, _, reward in TWO_AT_ONCE])
    assert any(c.adversarial for c in candidates("jericho.keyword_in_reason_step", [with_reasons]))


def test_a_crafter_false_premise_never_has_a_tool_leave_the_inventory():
    store = store_of([seeded_episode("crafter", 0)])
    lost = {s for (s,) in store.con.execute("SELECT subject FROM event_subjects WHERE kind = 'item_lost'").fetchall()}
    assert lost == {"wood", "stone", "coal", "iron", "sapling"}


def test_no_false_premise_names_a_numbered_room():
    """"the second step at which you entered Forest (2)" at horizon 4 would tell there are two Forests."""
    store = store_of([jericho_episode(TWO_FORESTS)])
    rooms = {s for (s,) in store.con.execute("SELECT subject FROM event_subjects WHERE kind = 'room_entered'").fetchall()}
    assert "Forest" in rooms and not any("(" in room for room in rooms)


def test_events_name_rooms_as_the_rooms_entered_by_the_horizon_do():
    subjects = lambda horizon: {c.params["subject"] for c in candidates("events.event_kth", [jericho_episode(TWO_FORESTS)],
                                                                        horizon) if c.params["kind"] == "room_entered"}
    assert "Forest" in subjects(4) and not any("(" in s for s in subjects(4))
    assert {"Forest (1)", "Forest (2)"} <= subjects(None)
