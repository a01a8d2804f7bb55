"""A step that fails (the agent or the game raises) keeps every step played before it: the trace is
finished as `ended_by: crashed`, qtc play prints one line naming the step and the error and exits
non-zero, the trace loads, and the next run records the episode again."""

from __future__ import annotations

import pytest

from support.openai_stub_server import ChatCompletionServer, Reply
from qtc.cli import main
from qtc.runtime.record.agents import Choice
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import RecordingCrashed, record_episode
from qtc.runtime.trace.format import episode_path, is_complete, read_episode
from qtc.runtime.trace.store import open_store


class FailingAgent:
    """Moves left, and raises when asked for its action at step `failing`."""

    def __init__(self, failing: int):
        self.failing = failing
        self.asked = 0

    def choose(self, state: dict) -> Choice:
        self.asked += 1
        if self.asked == self.failing:
            raise RuntimeError("the agent broke")
        return Choice("move_left", "walk west")


def test_a_failing_step_keeps_the_steps_before_it(tmp_path):
    session = CrafterSession(0, "scripted", 20)
    with pytest.raises(RecordingCrashed) as raised:
        record_episode(session, FailingAgent(5), tmp_path, 20)
    path = episode_path(tmp_path, session.episode_id)
    assert str(raised.value) == (f"crafter-scripted-s0: step 5 failed (RuntimeError: the agent broke); its 4 "
                                 f"step(s) before are kept in {path} (ended_by: crashed)")
    episode = read_episode(path)
    assert (episode.header["ended_by"], episode.header["n_steps"]) == ("crashed", 4)
    assert [s["action"] for s in episode.steps] == ["move_left"] * 4
    assert not list(tmp_path.glob("*.partial")) and not is_complete(path)
    con = open_store(path)
    assert con.execute("SELECT ended_by, n_steps FROM episodes").fetchall() == [("crashed", 4)]
    con.close()


def test_qtc_play_says_which_step_failed_and_exits_non_zero(tmp_path, capsys):
    replies = iter([Reply('{"action": "move_left", "reason": "go west"}'),
                    Reply('{"action": "do", "reason": "hit the tree"}'),
                    Reply(status=400, message="model unloaded")])
    with ChatCompletionServer(lambda body: next(replies)) as server:
        code = main(["play", "crafter", "--agent", "llm", "--base-url", server.url, "--model", "stub",
                     "--max-steps", "5", "--out", str(tmp_path), "--quiet"])
    error = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in error and "Traceback" not in error
    assert error.startswith("qtc play: error: crafter-llm-s0: step 3 failed") and "model unloaded" in error
    episode = read_episode(tmp_path / "crafter-llm-s0.jsonl")
    assert episode.header["ended_by"] == "crashed"
    assert [(s["action"], s["reason"]) for s in episode.steps] == [("move_left", "go west"), ("do", "hit the tree")]
