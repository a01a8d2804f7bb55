"""What question text says (issue "Ground truth as the player saw it", items 15, 17 and 18): names shown
the same way in true and false premises, false premises drawn from plausible pools, walks in the game's
words, and no tie rule offered where a tie is never asked. Hand-made episodes, through `qtc generate`."""

from __future__ import annotations

import json

import pytest
from support.strategies import crafter_episode, write_episodes, jericho_episode

from qtc.cli import main
from qtc.dsl import crafter_data


def generate(tmp_path, episodes) -> list[dict]:
    write_episodes(episodes, tmp_path / "traces")
    out = tmp_path / "qa.jsonl"
    assert main(["generate", "--traces", str(tmp_path / "traces"), "--out", str(out), "--quiet",
                 "--adversarial-ratio", "0.5", "--max-per-template", "40"]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def intent(action: str) -> tuple:
    return action, f"I chose {action}.", (0, 0, 0), None, [], False


# Grass around a pool: the player drinks from it ten times (do, facing left, at steps 2..11) with its
# drink already full (9), then places stones (Crafter's `place_stone`, shown as "place stone") and walks.
CRAFTER_MAP = [["grass"] * 6 for _ in range(4)]
CRAFTER_MAP[1][1] = "water"
CRAFTER_ACTIONS = ["move_left"] + ["do"] * 10 + ["move_down", "place_stone", "move_right", "move_right",
                                                 "move_up", "place_stone", "move_left", "move_left", "noop"] * 3


@pytest.fixture(scope="module")
def crafter_questions(tmp_path_factory) -> list[dict]:
    episode = crafter_episode(CRAFTER_MAP, (3, 1), [intent(a) for a in CRAFTER_ACTIONS])
    return generate(tmp_path_factory.mktemp("crafter"), [episode])


def test_names_are_words_in_true_and_false_premises_alike(crafter_questions):
    texts = {q["question"] for q in crafter_questions}
    assert any("'place stone'" in t for t in texts)
    assert not [t for t in texts if "_" in t]
    false_premises = [q for q in crafter_questions if q["adversarial"]]
    assert false_premises and not [q["question"] for q in false_premises if "_" in q["question"]]


def false_premises(questions: list[dict], template_id: str, param: str) -> set[str]:
    return {q["bindings"][param] for q in questions if q["template_id"] == template_id and q["adversarial"]}


def test_false_premises_name_what_could_have_been(crafter_questions):
    # Stood only on grass: the false terrains are the others one can stand on, never iron or a table.
    terrains = false_premises(crafter_questions, "crafter.nth_terrain_step", "terrain")
    terrains |= false_premises(crafter_questions, "crafter.action_offset_from_terrain", "terrain")
    assert terrains and terrains <= {"sand", "path", "lava"}
    # Collected only drink: the false collections are other things one collects, never a made sword.
    collected = false_premises(crafter_questions, "crafter.collections_in_range", "item")
    collected |= false_premises(crafter_questions, "crafter.collection_steps", "item")
    assert collected and collected <= set(crafter_data.COLLECTED_FROM) - {"drink"}


def test_no_tie_rule_is_offered_where_a_tie_is_never_asked(crafter_questions):
    moves = [q for q in crafter_questions if q["template_id"] == "crafter.most_common_move_in_range"]
    assert moves and not [q for q in moves if "tie" in q["question"]]


def test_a_walk_is_written_in_the_games_words(tmp_path):
    # 10 -north-> 20 -east-> 21 -south-> 10: from 10, north then east leads to 21.
    episode = jericho_episode([(("move", "north", 20), None, 0), (("move", "east", 21), None, 0),
                               (("move", "south", 10), None, 0), (("idle", "look"), None, 0)])
    walks = [q for q in generate(tmp_path, [episode]) if q["template_id"] == "jericho.follow_moves"]
    assert walks
    for question in walks:
        assert "[" not in question["question"] and "'" not in question["bindings"]["moves"]
    assert {q["bindings"]["moves"] for q in walks} >= {"north, then east"}
    assert any("moving north, then east take you" in q["question"] for q in walks)


def test_collections_at_a_full_inventory_count_and_the_question_says_so(crafter_questions):
    (steps,) = [q for q in crafter_questions if q["template_id"] == "crafter.collection_steps"
                and not q["adversarial"]]
    assert steps["answer"] == ", ".join(str(s) for s in range(2, 12))  # none of them raised drink above 9
    assert "already held as much of it as you can" in steps["question"]
    counts = [q for q in crafter_questions if q["template_id"] == "crafter.collections_in_range"
              and not q["adversarial"]]
    assert counts and all("already held as much of it as you can" in q["question"] for q in counts)


def test_the_collection_note_is_only_on_collections(crafter_questions):
    steps = [q for q in crafter_questions if q["template_id"] == "crafter.event_steps"]
    assert {"collect drink", "place stone"} <= {q["bindings"]["event"].replace("_", " ") for q in steps}
    for q in steps:
        collection = q["bindings"]["event"].startswith("collect_")
        assert ("A collection counts" in q["question"]) == collection, q["question"]


def test_a_count_of_steps_next_to_a_material_does_not_say_sometimes(crafter_questions):
    beside = [q for q in crafter_questions if q["template_id"] == "crafter.adjacent_steps_in_range"]
    assert beside and not any("sometimes" in q["question"] for q in beside)
