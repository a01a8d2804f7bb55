"""Recording TextWorld: `qtc play textworld --make` generates the game into the output folder and records its
walkthrough with the world's facts; the header says how to make the game again (and making it again gives
the same game); qtc.record.open writes the bytes `qtc play --game` writes; the store rebuilds the facts at
every step; bad input is one line and exit 2, nothing written.
"""

from __future__ import annotations

import json
import shutil

import pytest

import qtc.record
from qtc.cli import main
from qtc.runtime.trace.format import read_episode
from qtc.runtime.trace.textworld import replay_facts


def _episode(directory):
    [path] = directory.glob("*.jsonl")
    return read_episode(path)


def test_play_makes_the_game_and_records_its_walkthrough_with_the_facts(textworld_trace_dir):
    episode = _episode(textworld_trace_dir)
    header = episode.header
    assert (header["env"], header["game"], header["episode_id"]) == ("textworld", "cooking_s1", "cooking_s1-walkthrough-s1")
    assert (textworld_trace_dir / "cooking_s1.z8").is_file() and (textworld_trace_dir / "cooking_s1.json").is_file()
    assert header["make"]["challenge"] == "tw-cooking" and header["make"]["seed"] == 1
    assert header["make"]["settings"]["go"] == 6 and header["make"]["settings"]["open"] is True
    assert [step["action"] for step in episode.steps] == header["walkthrough"]
    assert header["ended_by"] == "done" and episode.steps[-1]["score"] == header["max_score"]
    states = list(replay_facts(header["initial"]["facts"], episode.steps))
    names = {room["room"]: room["name"] for room in header["rooms"]}
    score = header["initial"]["score"]
    for step, facts in zip(episode.steps, states[1:]):
        assert ("at", "P", names[step["room_after"]]) in facts
        assert step["inventory_after"] == sorted(fact[1] for fact in facts if fact[0] == "in" and fact[2] == "I")
        assert step["reward"] == step["score"] - score
        score = step["score"]


def test_the_recorder_writes_the_bytes_qtc_play_writes(textworld_trace_dir, tmp_path):
    game = textworld_trace_dir / "cooking_s1.z8"
    played = tmp_path / "played"
    assert main(["play", "textworld", "--game", str(game), "--seed", "1", "--agent", "walkthrough",
                 "--out", str(played), "--quiet"]) == 0
    recorded = _episode(played)
    assert recorded.header["make"] is None
    with qtc.record.open("textworld", out=tmp_path / "own", seed=1, agent="walkthrough", game_file=game) as env:
        env.reset()
        for step in recorded.steps:
            env.step(step["action"])
    assert env.path.name == recorded.path.name and env.path.read_bytes() == recorded.path.read_bytes()


def test_the_store_holds_the_facts_rooms_exits_and_sightings(textworld_db):
    def one(sql):
        return textworld_db.execute(sql).fetchall()

    assert one("SELECT count(*) FROM textworld_steps") == [(23,)]
    assert one("SELECT count(*) FROM textworld_rooms") == [(6,)]
    # The fridge is opened at step 5 and stays open; the frosted-glass door is never opened.
    assert one("SELECT step, last_step FROM textworld_facts WHERE predicate = 'open' AND arg1 = 'fridge'") == [(5, 23)]
    assert one("SELECT step, last_step FROM textworld_facts WHERE predicate = 'closed' AND arg1 = 'frosted-glass door'") == [(0, 23)]
    assert one("SELECT r.name, x.direction, t.name, x.door FROM textworld_exits x JOIN textworld_rooms r USING (episode_id, room) "
               "JOIN textworld_rooms t ON t.episode_id = x.episode_id AND t.room = x.target WHERE r.name = 'kitchen' "
               "ORDER BY 2") == [("kitchen", "east", "livingroom", None), ("kitchen", "north", "pantry", "frosted-glass door")]
    # What the fridge holds is in view once it is open (step 5), not before.
    assert one("SELECT min(step) FROM textworld_sightings WHERE holder = 'fridge'") == [(5,)]
    assert one("SELECT step FROM textworld_steps WHERE NOT changed ORDER BY step") == [(1,), (4,), (8,)]
    kinds = {kind for (kind,) in one("SELECT DISTINCT kind FROM events")}
    assert {"item_gained", "room_entered", "score_changed", "first_seen", "action"} <= kinds


def test_named_items_are_the_things_a_reader_sees_named(textworld_db):
    """The walkthrough (inventory, go north, go west, examine cookbook, open fridge, take red bell pepper from
    fridge, take red potato from counter, open fridge, take yellow bell pepper from fridge, cook ..., take
    knife from counter, ..., prepare meal, eat meal) names each of the game's portable things by a word of
    its name at the first command a reader finds one in: "red", "bell" and "pepper" at step 6 name every
    red thing and both peppers (CONVENTIONS.md, False premises)."""
    named = dict(textworld_db.execute("SELECT item, step FROM textworld_named_items").fetchall())
    assert named == {"cookbook": 4, "red bell pepper": 6, "red hot pepper": 6, "red potato": 6, "red apple": 6,
                     "yellow bell pepper": 6, "purple potato": 7, "yellow onion": 9, "knife": 13, "meal": 22}
    # Every portable thing of the game is met by name: none is a false premise about getting a thing.
    [(vocab,)] = textworld_db.execute("SELECT list(value ORDER BY value) FROM vocab WHERE kind = 'item'").fetchall()
    assert sorted(named) == vocab


def test_making_the_game_again_gives_the_same_game(textworld_trace_dir, tmp_path):
    """The header's `make` is enough: the same challenge, seed and settings make the same world."""
    from qtc.runtime.record.textworld import make_game

    made = _episode(textworld_trace_dir).header["make"]
    options = {key: str(value).lower() for key, value in made["settings"].items()
               if key in ("recipe", "take", "go", "open", "cook", "cut")}
    path, again = make_game("cooking", made["seed"], options, tmp_path)
    assert again == made
    original = json.loads((textworld_trace_dir / "cooking_s1.json").read_text())
    assert json.loads(path.with_suffix(".json").read_text())["world"] == original["world"]


@pytest.mark.parametrize("arguments, message", [
    (["--game", "{tmp}/story.z8"], "not a TextWorld game (no story.json beside it"),
    (["--game", "{tmp}/notes.txt"], "not a TextWorld game (expected a .z8 or .ulx file)"),
    (["--game", "{tmp}/missing.z8"], "no such game file"),
    (["--make", "cooking", "--make-option", "spice=3"], "cooking has no option 'spice'"),
    (["--make", "cooking", "--make-option", "recipe=many"], "recipe takes a whole number"),
    (["--make", "cooking", "--make-option", "go=7"], "go is one of 1, 6, 9, 12"),
    (["--make", "cooking", "--make-option", "open"], "expected KEY=VALUE"),
    (["--make", "cooking", "--make-option", "open=maybe"], "open is on or off"),
    (["--make", "cooking", "--game", "{tmp}/story.z8"], "not both"),
])
def test_bad_input_is_one_line_and_exit_2_with_nothing_written(arguments, message, tmp_path, capsys):
    (tmp_path / "story.z8").write_bytes(b"not a game")
    (tmp_path / "notes.txt").write_text("hello")
    out = tmp_path / "out"
    code = main(["play", "textworld", *[a.format(tmp=tmp_path) for a in arguments], "--out", str(out), "--quiet"])
    error = capsys.readouterr().err
    assert code == 2 and message in error and error.count("\n") == 1, error
    assert not out.exists() or not any(out.iterdir())


def test_a_missing_inform7_compiler_is_one_line_and_nothing_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("INFORM_HOME", str(tmp_path / "no-inform7"))
    out = tmp_path / "out"
    code = main(["play", "textworld", "--make", "simple", "--seed", "2", "--out", str(out), "--quiet"])
    error = capsys.readouterr().err
    assert code == 2 and "Inform 7 compiler TextWorld needs is missing" in error and error.count("\n") == 1, error
    assert not any(path.suffix in (".z8", ".json") for path in out.rglob("*"))


def test_the_random_agent_plays_admissible_commands(textworld_trace_dir, tmp_path):
    game = tmp_path / "game.z8"
    for suffix in (".z8", ".json"):
        shutil.copy(textworld_trace_dir / f"cooking_s1{suffix}", game.with_suffix(suffix))
    assert main(["play", "textworld", "--game", str(game), "--agent", "random", "--seed", "3", "--max-steps", "8",
                 "--out", str(tmp_path), "--quiet"]) == 0
    episode = read_episode(tmp_path / "game-random-s3.jsonl")
    assert len(episode.steps) == 8 and all(step["action"] in step["valid_actions"] for step in episode.steps)


OWN_AGENT = '''
class Agent:
    def __init__(self, seed):
        self.commands = iter([("go north", "to the living room"), "inventory"])

    def choose(self, state):
        return next(self.commands, None)


def make(seed):
    return Agent(seed)
'''


def test_an_agent_of_one_s_own_plays_textworld(textworld_trace_dir, tmp_path, monkeypatch):
    (tmp_path / "my_tw_agent.py").write_text(OWN_AGENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    assert main(["play", "textworld", "--game", str(textworld_trace_dir / "cooking_s1.z8"), "--agent",
                 "my_tw_agent:make", "--out", str(tmp_path / "out"), "--quiet"]) == 0
    episode = read_episode(tmp_path / "out" / "cooking_s1-my_tw_agent-s0.jsonl")
    assert [(s["action"], s["reason"]) for s in episode.steps] == [("go north", "to the living room"), ("inventory", None)]
    assert episode.header["ended_by"] == "walkthrough_end" and episode.steps[0]["moved"]
    assert episode.steps[0]["direction"] == "north"
