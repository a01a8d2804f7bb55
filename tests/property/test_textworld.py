"""Oracle checks on a recorded TextWorld episode (the cooking walkthrough of the session fixture):

- the reference evaluator reads TextWorld's tables: every template of textworld and of every game (events)
  asks the same questions through its compiled SQL as through the reference (under a horizon too in the
  deep profile);
- the store's facts, rooms and sightings agree with a fresh game: the episode's commands played again in a
  new TextWorld environment of the same game file, whose facts are read from TextWorld itself at every step;
  each answer of the room and sighting templates is worked out again from those facts;
- the room graph of the moves made (the spatial templates Jericho and TextWorld share): the walkthrough
  moves twice in a line, so a random walk of the same game (60 steps, 14 moves over 5 rooms) asks them all;
  their compiled SQL agrees with the reference, and every move is an exit of the game's true map;
- the game with keys (support/textworld_keys.py): every template agrees with the reference on its walkthrough,
  whole and cut between its two unlocks, and what unlocked a lock is the key the game printed and the
  command named.
"""

from __future__ import annotations

import pytest
import textworld

from support.ground_truth import Store, checked_templates, differences, reference_candidates, sql_candidates
from support.hypothesis_profiles import cases

from qtc.cli import main
from qtc.dsl.compile import statement
from qtc.dsl.library import load_library
from qtc.dsl.reference.evaluator import read_tables
from qtc.runtime.record.textworld import entity_names, fact_list
from qtc.runtime.trace.format import read_episode
from qtc.runtime.trace.store import open_store
from qtc.runtime.trace.textworld import in_view, room_of
from support.paths import TEMPLATES
from support.textworld_keys import UNLOCKED


def _disagreements(con, templates, horizon) -> list[str]:
    """Where each template's compiled SQL and the reference evaluator ask or answer differently on `con`."""
    store = Store(con, read_tables(con))
    report = []
    for compiled in templates:
        problems = differences(sql_candidates(con, compiled, horizon), reference_candidates(store, compiled, horizon))
        report += [f"{compiled.id}, horizon {horizon}:", *problems] if problems else []
    con.execute("RESET VARIABLE qtc_horizon")
    con.execute("RESET VARIABLE qtc_max_candidates")
    return report


# Under a horizon only in the deep profile (the run's slowest part otherwise); every run checks TextWorld
# under a horizon on the room-graph templates (the random walk below), and the other games under drawn
# horizons (test_reference_differential.py).
@pytest.mark.parametrize("horizon", cases(ci=(None,), deep=(None, 12)))
def test_compiled_sql_agrees_with_the_reference_on_textworld(textworld_db, horizon):
    report = _disagreements(textworld_db, checked_templates("textworld"), horizon)
    assert not report, "\n".join(report)


# The game with keys: whole, and cut between its two unlocks (the door at step 6, the chest at step 9).
@pytest.mark.parametrize("horizon", [None, 7])
def test_compiled_sql_agrees_with_the_reference_on_the_game_with_keys(textworld_keys_db, horizon):
    report = _disagreements(textworld_keys_db, checked_templates("textworld"), horizon)
    assert not report, "\n".join(report)


def test_what_unlocked_a_lock_is_the_key_the_game_printed_and_the_command_named(textworld_keys_db):
    """A careful reader of the log: the key a locked thing was unlocked with is named, as the game printed it
    before the step (in a room's description), by the command of the step that unlocked it, whose reply says
    so; and a thing in a locked container is not in view until the container is opened."""
    steps = {step: (action, before, after) for step, action, before, after in textworld_keys_db.execute(
        "SELECT step, action, obs_before, obs_after FROM textworld_steps").fetchall()}
    rows = [row for row in _answers(textworld_keys_db, "textworld.unlocked_with") if not row["adversarial"]]
    assert {row["p_door"]: (row["answer"], *row["evidence"]) for row in rows} == UNLOCKED
    for row in rows:
        [step] = row["evidence"]
        action, _, reply = steps[step]
        assert action == f"unlock {row['p_door']} with {row['answer']}"
        assert "You unlock" in reply and row["p_door"] in reply
        assert any(f"a {row['answer']}" in steps[s][1] for s in range(1, step + 1)), row
    first_seen = dict(textworld_keys_db.execute(
        "SELECT subject, step FROM events WHERE kind = 'first_seen' AND subject = 'red gem'").fetchall())
    assert first_seen == {"red gem": 10} and "revealing a red gem" in steps[10][2]


def _door_sightings(con) -> dict[str, dict]:
    """Per door of the game: the rooms it links, the steps (0: the start) after which the player was in one of
    them and the room, the step whose text (0: the opening text) first named it, its sightings as
    (step, room, moved) and the step of its first_seen event (None: none)."""
    rooms = dict(con.execute("SELECT room, name FROM textworld_rooms").fetchall())
    steps = con.execute("SELECT step, room_before, room_after, obs_before, obs_after FROM textworld_steps ORDER BY step").fetchall()
    where = [rooms[steps[0][1]]] + [rooms[step[2]] for step in steps]
    texts = [steps[0][3]] + [step[4] for step in steps]
    doors = {}
    for door, sides in con.execute("SELECT arg2, list(arg1) FROM textworld_facts WHERE predicate = 'link' GROUP BY arg2").fetchall():
        sightings = con.execute("SELECT step, room, moved FROM textworld_sightings WHERE item = ? ORDER BY step", [door]).fetchall()
        events = con.execute("SELECT step FROM events WHERE kind = 'first_seen' AND subject = ?", [door]).fetchall()
        doors[door] = {"sides": set(sides), "in_a_side": [(s, room) for s, room in enumerate(where) if room in sides],
                       "named": next((s for s, text in enumerate(texts) if door in text), None),
                       "sightings": [(s, rooms[room], moved) for s, room, moved in sightings],
                       "first_seen": events[0][0] if events else None}
    return doors


def test_a_door_is_in_view_from_both_rooms_it_links_from_the_step_the_game_names_it(textworld_keys_db, textworld_db,
                                                                                random_walk_db):
    """A door has no `at` fact (TextWorld places it by link(room, door, other)), while the description of either
    room it links names it, open or shut ("There is a closed oak door leading east."): it is in view after
    every step that leaves the player in one of them, in that room, never seen to have moved; so it is first
    seen at the step a reader first reads its name, and that is its first_seen event (none at the start)."""
    seen_in_both = set()
    for con in (textworld_keys_db, textworld_db, random_walk_db):
        for door, facts in _door_sightings(con).items():
            assert facts["sightings"] == [(s, room, False) for s, room in facts["in_a_side"]], door
            first = facts["sightings"][0][0] if facts["sightings"] else None
            assert first == facts["named"], door
            assert facts["first_seen"] == (first if first else None), door
            if {room for _, room, _ in facts["sightings"]} == facts["sides"]:
                seen_in_both.add(door)
    keys = _door_sightings(textworld_keys_db)["oak door"]
    # Named in the hall's description at the start, then in the study's after "go east" (step 8).
    assert keys["named"] == 0 and keys["first_seen"] is None
    assert [(s, room) for s, room, _ in keys["sightings"]] == [(s, "hall") for s in (0, 1, 2, 5, 6, 7)] + [
        (s, "study") for s in (8, 9, 10, 11)]
    # The cooking walkthrough sees the frosted-glass door from the kitchen, first at step 3.
    assert _door_sightings(textworld_db)["frosted-glass door"]["first_seen"] == 3
    assert "oak door" in seen_in_both


def test_a_door_s_state_is_asked_only_when_the_text_told_it(textworld_keys_db, textworld_db):
    """The game describes a locked door as closed ("There is a closed oak door leading east."): the keys
    walkthrough unlocks the oak door at step 6 ("You unlock oak door.") and opens it at 7, so a reader knows
    it was locked before, closed after 6 and open from 7; the cooking walkthrough never touches its
    frosted-glass door, closed (or locked, for all its text says) throughout: never asked."""
    rows = [row for row in _answers(textworld_keys_db, "textworld.door_state_at") if not row["adversarial"]]
    assert {row["p_t"]: row["answer"] for row in rows} == {
        **{t: "locked" for t in range(1, 6)}, 6: "closed", **{t: "open" for t in range(7, 12)}}
    assert all(6 in row["evidence"] or row["answer"] == "open" for row in rows)
    assert not _answers(textworld_db, "textworld.door_state_at")


@pytest.fixture(scope="module")
def random_walk_db(textworld_trace_dir, tmp_path_factory):
    """A store of a random agent's 60 steps in the fixture's cooking game (seed 2: 14 moves over 5 rooms)."""
    [game] = textworld_trace_dir.glob("*.z8")
    directory = tmp_path_factory.mktemp("textworld_random")
    assert main(["play", "textworld", "--game", str(game), "--agent", "random", "--seed", "2", "--max-steps", "60",
                 "--out", str(directory), "--quiet"]) == 0
    con = open_store(directory)
    yield con
    con.close()


def test_room_graph_answers_agree_with_the_reference_on_a_random_walk(random_walk_db):
    spatial = [c for c in checked_templates("textworld") if c.category == "spatial"]
    assert {c.id for c in spatial} >= {"textworld.path_length_between_steps", "textworld.rooms_within_k",
                                       "textworld.reachable_within_k", "textworld.follow_moves",
                                       "textworld.closer_of_two_rooms", "textworld.moves_in_direction"}
    for compiled in spatial:
        assert sql_candidates(random_walk_db, compiled, None), f"{compiled.id} asks nothing on the random walk"
    report = [line for horizon in (None, 30) for line in _disagreements(random_walk_db, spatial, horizon)]
    assert not report, "\n".join(report)


def test_every_move_made_is_an_exit_of_the_true_map(random_walk_db):
    """The room graph's moves (rooms.py) are the game's own exits (textworld_exits, TextWorld's facts)."""
    moves = random_walk_db.execute("SELECT room_before, direction, room_after FROM textworld_steps WHERE moved").fetchall()
    exits = set(random_walk_db.execute("SELECT room, direction, target FROM textworld_exits").fetchall())
    assert len(moves) >= 10 and set(moves) <= exits


@pytest.fixture(scope="module")
def fresh_states(textworld_trace_dir):
    """The facts after each step (0: before the first) of the episode's commands played in a fresh game."""
    [path] = textworld_trace_dir.glob("*.jsonl")
    episode = read_episode(path)
    env = textworld.start(str(textworld_trace_dir / episode.header["game_file"]),
                          request_infos=textworld.EnvInfos(facts=True, game=True))
    state = env.reset()
    names = entity_names(state["game"])
    states = [{tuple(fact) for fact in fact_list(state["facts"], names)}]
    for step in episode.steps:
        state, _, _ = env.step(step["action"])
        states.append({tuple(fact) for fact in fact_list(state["facts"], names)})
    env.close()
    return states


def test_the_stored_facts_are_the_fresh_game_s_at_every_step(textworld_db, fresh_states):
    for step, facts in enumerate(fresh_states):
        stored = textworld_db.execute("SELECT predicate, arg1, arg2, arg3 FROM textworld_facts "
                                      "WHERE step <= ? AND last_step >= ?", [step, step]).fetchall()
        assert {tuple(value for value in row if value is not None) for row in stored} == facts, step


def _answers(con, template_id: str) -> list[dict]:
    [compiled] = [c for c in load_library([TEMPLATES]).compiled if c.id == template_id]
    relation = con.sql(statement(compiled, None))
    return [dict(zip(relation.columns, row)) for row in relation.fetchall()]


def test_room_answers_are_the_fresh_game_s(textworld_db, fresh_states):
    rows = [row for row in _answers(textworld_db, "textworld.room_before") if not row["adversarial"]]
    assert len(rows) == len(fresh_states) - 1
    for row in rows:
        assert row["display_answer"] == room_of(fresh_states[row["p_t"] - 1])


def test_sighting_answers_are_the_fresh_game_s(textworld_db, fresh_states):
    rows = [row for row in _answers(textworld_db, "textworld.last_seen_room") if not row["adversarial"]]
    assert rows
    for row in rows:
        seen = [step for step in range(row["p_t"]) if row["p_item"] in in_view(fresh_states[step])]
        assert row["evidence"] == [seen[-1]]
        assert row["display_answer"] == room_of(fresh_states[seen[-1]])
    # A false premise names a thing of the game never in view and never carried.
    for row in _answers(textworld_db, "textworld.last_seen_room"):
        if row["adversarial"]:
            assert not any(row["p_item"] in in_view(facts) or ("in", row["p_item"], "I") in facts for facts in fresh_states)
