"""The recorder of a loop of the user's own (qtc.record) and `qtc play --agent package.module:factory`.

The recorder writes the bytes `qtc play` writes: the session fixtures' episodes (Crafter's scripted one,
three Jericho games' walkthroughs with refused commands put in), their actions and reasons replayed
through it, come out the same files. A choice the game does not have ends
the episode as crashed, its steps kept; a step after the end is refused; close() finishes an episode the
game had not ended as the agent stopping; an error or Ctrl-C in a `with` block finishes it as qtc play
would. The documented example (docs/examples/my_agent.py) runs, and gives the same file through both routes.
"""

from __future__ import annotations

import re
import runpy
import sys

import numpy as np
import pytest

import qtc.record
from qtc.cli import main
from qtc.errors import UserError
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.jericho import JerichoSession
from qtc.runtime.trace.format import is_complete, read_episode
from qtc.runtime.trace.frames import frames_path

from support.paths import REPO, ROMS
from support.refusals import ROMS as REFUSALS, STEPS as REFUSAL_STEPS
from support.recordings import CRAFTER_STEPS

EXAMPLES = REPO / "docs" / "examples"


def replay(path, out, **options):
    """The episode at `path` played again through a recorder, its actions and reasons given step by step."""
    episode = read_episode(path)
    header = episode.header
    with qtc.record.open(header["env"], out=out, seed=header["seed"], agent=header["agent"], **options) as env:
        env.reset()
        for step in episode.steps:
            _, reward, ended = env.step(step["action"], reason=step["reason"])
            assert (reward, ended) == (step["reward"], step is episode.steps[-1] and header["ended_by"] != "walkthrough_end")
    return env


def test_the_recorder_writes_the_bytes_qtc_play_writes_for_crafter(crafter_recording, tmp_path):
    env = replay(crafter_recording.path, tmp_path, max_steps=CRAFTER_STEPS)
    assert env.path.name == crafter_recording.path.name
    assert env.path.read_bytes() == crafter_recording.path.read_bytes()


@pytest.mark.parametrize("game", sorted(REFUSALS))
def test_the_recorder_writes_the_bytes_qtc_play_writes_for_jericho(game, refusal_traces, tmp_path):
    """The walkthrough prefixes with refused commands put in (recorded without the valid-action finder,
    which takes most of a Jericho recording's time)."""
    [recorded] = refusal_traces.glob(f"{game}-*.jsonl")
    env = replay(recorded, tmp_path, rom=ROMS / REFUSALS[game], max_steps=REFUSAL_STEPS, valid_actions=False)
    assert env.path.name == recorded.name and env.path.read_bytes() == recorded.read_bytes()


def test_a_choice_the_game_does_not_have_keeps_the_steps_before_it(tmp_path):
    env = qtc.record.open("crafter", out=tmp_path, seed=3, agent="mine")
    assert env.reset()["step"] == 0 and "noop" in env.actions
    env.step("move_left", reason="west")
    env.step("do")
    with pytest.raises(qtc.record.InvalidAction) as raised:
        env.step("noop", reason=7)
    assert isinstance(raised.value, UserError) and str(raised.value) == (
        f"crafter-mine-s3: step 3 failed (the reason must be text or None, got int); its 2 step(s) before are "
        f"kept in {env.path} (ended_by: crashed)")
    episode = read_episode(env.path)
    assert (episode.header["ended_by"], episode.header["n_steps"]) == ("crashed", 2)
    assert [(s["action"], s["reason"]) for s in episode.steps] == [("move_left", "west"), ("do", None)]
    assert not list(tmp_path.glob("*.partial")) and not is_complete(env.path)


def test_an_action_is_one_the_game_has():
    assert CrafterSession.action_problem("do") is None
    for action in ("jump", 3, None):
        assert CrafterSession.action_problem(action).startswith(f"{action!r} is not a Crafter action (one of noop, ")
    for command in ("open the mailbox", "x", "go north"):
        assert JerichoSession.action_problem(command) is None
    for command, problem in ((None, "a line of text"), ("", "a line of text"), ("  ", "a line of text"),
                             ("look\nnorth", "a line break"), ("x" * 199, "longer than the 198 bytes")):
        assert problem in JerichoSession.action_problem(command)


def test_close_before_the_end_finishes_it_as_the_agent_stopping_and_a_step_after_is_refused(tmp_path):
    env = qtc.record.open("crafter", out=tmp_path, agent="mine")
    env.step("noop")
    assert env.close() == env.path and env.close() == env.path
    assert read_episode(env.path).header["ended_by"] == "walkthrough_end" and is_complete(env.path)
    written = env.path.read_bytes()
    with pytest.raises(qtc.record.EpisodeOver, match="no step 2: the episode ended at step 1 \\(walkthrough_end\\)"):
        env.step("noop")
    with pytest.raises(UserError, match="records one episode"):
        env.reset()
    assert env.path.read_bytes() == written


@pytest.mark.parametrize("raised, ending", [(RuntimeError("my model broke"), "crashed"),
                                            (KeyboardInterrupt(), "interrupted")])
def test_an_error_or_ctrl_c_in_the_with_block_finishes_the_file_as_qtc_play_would(raised, ending, tmp_path):
    with pytest.raises(qtc.record.RecordingCrashed if ending == "crashed" else KeyboardInterrupt) as caught:
        with qtc.record.open("crafter", out=tmp_path, agent="mine") as env:
            env.step("noop")
            raise raised
    episode = read_episode(env.path)
    assert (episode.header["ended_by"], episode.header["n_steps"]) == (ending, 1)
    if ending == "crashed":
        assert str(caught.value).startswith("crafter-mine-s0: step 2 failed (RuntimeError: my model broke); its 1 ")
        assert caught.value.__cause__ is raised


def test_bad_options_are_one_line_errors(tmp_path, zork1_rom):
    for game, options, message in (("chess", {}, "unknown game 'chess' (one of crafter, jericho, textworld)"),
                                   ("jericho", {}, "rom is needed"),
                                   ("jericho", {"rom": zork1_rom, "frames": True}, "frames is for Crafter"),
                                   ("crafter", {"rom": zork1_rom}, "rom is for Jericho"),
                                   ("crafter", {"agent": "my/agent"}, "is not a file-name word")):
        with pytest.raises(UserError, match=re.escape(message)):
            qtc.record.open(game, out=tmp_path, **options)
    assert not list(tmp_path.iterdir())


def test_the_documented_example_and_qtc_play_agent_module_factory_write_the_same_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "my_agent", raising=False)
    monkeypatch.chdir(tmp_path)
    example = (EXAMPLES / "my_agent.py").read_text()
    assert example[example.index("import random"):] in (REPO / "docs" / "recording.md").read_text()
    runpy.run_path(str(EXAMPLES / "my_agent.py"), run_name="__main__")
    written = tmp_path / "traces" / "crafter-my-random-s0.jsonl"
    episode = read_episode(written)
    assert episode.header["n_steps"] == 100 and episode.steps[0]["reason"].startswith("a random step from (")
    monkeypatch.chdir(EXAMPLES)
    assert main(["play", "crafter", "--agent", "my_agent:make_agent", "--agent-name", "my-random",
                 "--max-steps", "100", "--out", str(tmp_path / "play"), "--quiet"]) == 0
    assert (tmp_path / "play" / written.name).read_bytes() == written.read_bytes()


AGENT_MODULE = '''
class Agent:
    def __init__(self, seed):
        self.moves = iter([("move_left", "west"), "do", ("noop", None)])

    def choose(self, state):
        return next(self.moves, None)


def make(seed):
    return Agent(seed)


def broken(seed):
    return object()
'''


def test_qtc_play_agent_module_factory_with_frames_is_the_recorder_with_frames(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "scripted_moves", raising=False)
    (tmp_path / "scripted_moves.py").write_text(AGENT_MODULE)
    monkeypatch.chdir(tmp_path)
    assert main(["play", "crafter", "--agent", "scripted_moves:make", "--frames", "--seed", "2",
                 "--out", "play", "--quiet"]) == 0
    played = tmp_path / "play" / "crafter-scripted_moves-s2.jsonl"
    episode = read_episode(played)
    assert episode.header["ended_by"] == "walkthrough_end"
    assert [(s["action"], s["reason"]) for s in episode.steps] == [("move_left", "west"), ("do", None), ("noop", None)]
    # qtc play's agent stopped at its 4th choice; the recorder's loop closes there (max_steps as qtc play's).
    env = replay(played, tmp_path / "own", frames=True, max_steps=200)
    assert env.path.read_bytes() == played.read_bytes()
    assert np.array_equal(np.load(frames_path(env.path))["frames"], np.load(frames_path(played))["frames"])
    capsys.readouterr()
    for spec, message in (("no_such_module:make", "cannot import no_such_module (ModuleNotFoundError"),
                          ("scripted_moves:missing", "scripted_moves has no 'missing'"),
                          ("scripted_moves:broken", "what it made (object) has no method choose(state)")):
        assert main(["play", "crafter", "--agent", spec, "--out", "bad", "--quiet"]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and error.startswith(f"qtc play: error: --agent {spec}: ") and message in error
    assert not list((tmp_path / "bad").glob("*.jsonl")) if (tmp_path / "bad").exists() else True
