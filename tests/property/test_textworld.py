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
