"""Jericho answers as the player saw them (issue 14): each test is a case the library once answered
wrongly, on a hand-made episode, checked through the compiled SQL and against the reference evaluator."""

from __future__ import annotations

import pytest
from support.ground_truth import differences, library, reference_candidates, sql_candidates, store_of
from support.strategies import jericho_episode

from qtc.dsl.render import make_environment, render_question


def template(template_id: str):
    return next(c for c in library() if c.id == template_id)


def answers(template_id: str, episode) -> dict:
    """The compiled SQL's candidates by bindings, checked to be the reference evaluator's."""
    compiled, store = template(template_id), store_of([episode])
    sql = sql_candidates(store.con, compiled, None)
    assert not differences(sql, reference_candidates(store, compiled, None))
    return {tuple(c.params.values()): c.answer for c in sql if not c.adversarial}


@pytest.mark.parametrize("reason, first", [
    ("Use the 2.5 key. Then go north.", "Use the 2.5 key."),
    ("My score is 0.5 points. Keep going.", "My score is 0.5 points."),
    ("Wait... then look. Go.", "Wait... then look."),
    ("Take the light source, i.e. the lamp. Then go.", "Take the light source, i.e. the lamp."),
    ("Open things, e.g. the mailbox, first. Then read.", "Open things, e.g. the mailbox, first."),
    ("Mr. Smith said to explore. I will.", "Mr. Smith said to explore."),
    ("Ask Dr. Who.", "Ask Dr. Who."),
    ('The game said "North of House." That is odd.', 'The game said "North of House."'),
    ("Grab keys, coins, etc. Then leave.", "Grab keys, coins, etc."),
    ("look around\n", "look around"),
    ("\tGo north!\nThen east.", "Go north!"),
])
def test_first_sentence_ends_at_a_sentence_end_only(reason, first):
    assert answers("jericho.reason_at", jericho_episode([(("idle", "look"), reason, 0)])) == {(1,): first}


def test_a_blank_reasoning_has_no_first_sentence_to_ask_about():
    episode = jericho_episode([(("idle", "look"), " \n", 0), (("idle", "wait"), None, 0),
                               (("idle", "look"), "Look again.", 0)])
    assert answers("jericho.reason_at", episode) == {(3,): "Look again."}


def rendered(template_id: str, **variables) -> str:
    return render_question(make_environment(), template(template_id).checked.template.questions[0].text, variables)


def test_the_valid_action_list_is_never_asked_about():
    assert "jericho.was_valid" not in {c.id for c in library()}


def test_steps_after_an_anchor_are_counted_in_actions_with_ordinals_in_words():
    assert rendered("jericho.after_gain_action", delta=4, item="lamp") == \
        "What was the fourth action you took after you first got the lamp?"
    assert "just after each of your actions at steps 3 to 12" in rendered("jericho.distinct_rooms_in_range", L=3, R=12)


# North from 10 to 20 (step 1), east to 21 (3), west back to 20 (5).
GRAPH = [(("move", "north", 20), None, 0), (("idle", "look"), None, 0), (("move", "east", 21), None, 0),
         (("idle", "look"), None, 0), (("move", "west", 20), None, 0), (("idle", "look"), None, 0)]


def test_known_graph_questions_skip_rooms_never_left_and_cite_the_moves():
    episode = jericho_episode(GRAPH)
    compiled, store = template("jericho.rooms_within_k"), store_of([episode])
    candidates = sql_candidates(store.con, compiled, None)
    assert not differences(candidates, reference_candidates(store, compiled, None))
    # Only from room 20 at step 6 was a move out known (east, step 3; 10 lies only behind a move into 20);
    # elsewhere the answer was 0.
    assert {(c.params["t"], c.params["k"]): c.answer for c in candidates} == {(6, 1): 1, (6, 2): 1, (6, 3): 1}
    assert all(c.evidence == [1, 3, 5, 6] for c in candidates)
    assert "each only in the direction you made it" in rendered("jericho.rooms_within_k", t=6, k=1, here="Forest")


def test_one_command_written_two_ways_is_one_action():
    # Raw, 'look' (3 times) beats each spelling of the attack (2 and 2); as commands the attack was
    # made 4 times, and 'n' and 'north' are one command too.
    commands = ["Kill thief with nasty knife", "look", "kill thief with nasty knife", "look",
                "Kill thief with nasty knife", "look", "kill thief with  nasty knife", "n", "north", "go n"]
    episode = jericho_episode([(("idle", c), None, 0) for c in commands])
    assert answers("jericho.most_frequent_action", episode)[(1, 10)] == "kill thief with nasty knife"
    store = store_of([episode])
    assert store.con.execute("SELECT list(command ORDER BY step) FROM jericho_steps").fetchone()[0][-3:] == \
        ["north"] * 3


def test_an_exit_that_sometimes_fails_is_never_followed():
    # 10 -north-> 20 -east-> 21 -south-> 10, then north from 10 leaves the player in 10 (step 4), as
    # advent's Swiss Cheese room sometimes does: from step 5 on, north from 10 is not followed.
    episode = jericho_episode([(("move", "north", 20), None, 0), (("move", "east", 21), None, 0),
                               (("move", "south", 10), None, 0), (("move", "north", 10), None, 0),
                               (("idle", "look"), None, 0)])
    compiled, store = template("jericho.follow_moves"), store_of([episode])
    candidates = sql_candidates(store.con, compiled, None)
    assert not differences(candidates, reference_candidates(store, compiled, None))
    walks = {(c.params["t"], tuple(c.params["moves"])): c.answer for c in candidates if not c.adversarial}
    assert walks == {(4, ("north", "east")): 21}
    assert store.con.execute("SELECT tried_direction FROM jericho_steps WHERE step = 4").fetchone() == ("north",)
