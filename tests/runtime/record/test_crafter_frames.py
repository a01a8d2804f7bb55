"""Crafter's screens kept beside the trace (qtc play crafter --frames, runtime/trace/frames.py): recorded
from a real game, written with the trace, kept on resume, located by qtc load, read back as PNG; and the
llm agent playing from the screen and the HUD line through a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import io

import crafter
import numpy as np
import pytest
from PIL import Image

from support.openai_stub_server import ChatCompletionServer, Reply, message_images, message_text
from qtc.cli import main
from qtc.errors import UserError
from qtc.dsl import crafter_data
from qtc.runtime.record.agents import ScriptedCrafterAgent
from qtc.runtime.record.crafter import VISION_SCALE, CrafterSession, order_chunk_objects
from qtc.runtime.record.episodes import EpisodeSpec, record_episode, record_episodes
from qtc.runtime.trace.format import read_episode
from qtc.runtime.trace.frames import FRAMES_SUFFIX, episode_frames, frames_file, frames_path, png_bytes, write_frames
from qtc.runtime.trace.store import open_store

STEPS = 40
EPISODE = "crafter-scripted-s0"


def _record(directory, frames: bool = True, steps: int = STEPS, seed: int = 0):
    session = CrafterSession(seed, "scripted", steps, keep_frames=frames)
    return record_episode(session, ScriptedCrafterAgent(seed), directory, steps)


def _frames(path) -> np.ndarray:
    with np.load(frames_path(path)) as archive:
        return archive["frames"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return _record(tmp_path_factory.mktemp("frames"))


def test_frames_are_the_games_screens(recorded):
    frames = _frames(recorded)
    steps = read_episode(recorded).steps
    assert frames_path(recorded).name == EPISODE + FRAMES_SUFFIX
    assert frames.shape == (len(steps) + 1, 64, 64, 3) and frames.dtype == np.uint8
    # The same actions played in a fresh game (chunks ordered as the recorder orders them) show the same screens.
    env = crafter.Env(seed=0, length=STEPS)
    assert np.array_equal(env.reset(), frames[0])
    order_chunk_objects(env._world)
    for step in steps:
        screen, *_ = env.step(crafter_data.ACTIONS.index(step["action"]))
        assert np.array_equal(screen, frames[step["step"]]), step["step"]
    assert len({frame.tobytes() for frame in frames}) > len(frames) // 2  # the screens change as the player moves


def test_keeping_frames_changes_nothing_in_the_episode(recorded, tmp_path):
    # Rendering a screen again would draw the night's noise from the game's random state.
    plain = _record(tmp_path, frames=False)
    assert plain.read_bytes() == recorded.read_bytes()
    assert not frames_path(plain).exists()


def test_storage_is_small(recorded):
    per_step = frames_path(recorded).stat().st_size / len(_frames(recorded))
    assert per_step < 1000, per_step  # daytime screens: docs/trace-format.md states 0.66 KB a step for this episode


def test_load_records_where_frames_are_and_reads_them_back(recorded, tmp_path):
    plain = _record(tmp_path, frames=False, steps=5, seed=1)
    con = open_store(recorded, plain)
    assert con.execute("SELECT episode_id, path, frames, height, width FROM episode_frames").fetchall() == [
        (EPISODE, str(frames_path(recorded).resolve()), STEPS + 1, 64, 64)]
    frames = _frames(recorded)
    png = png_bytes(episode_frames(con, EPISODE)[7])
    assert png.startswith(b"\x89PNG") and np.array_equal(np.asarray(Image.open(io.BytesIO(png))), frames[7])
    assert len(episode_frames(con, EPISODE)) == STEPS + 1  # no screen after the last step
    assert frames_file(con, "crafter-scripted-s1") is None  # a trace without frames loads, and has none


def test_a_database_keeps_the_frames_location(recorded, tmp_path):
    db = tmp_path / "t.duckdb"
    assert main(["load", str(recorded), "--db", str(db)]) == 0
    with open_store(db) as con:
        assert np.array_equal(episode_frames(con, EPISODE)[0], _frames(recorded)[0])


def test_frames_that_do_not_match_the_trace_are_refused(recorded, tmp_path, capsys):
    trace = tmp_path / recorded.name
    trace.write_bytes(recorded.read_bytes())
    write_frames(trace, list(_frames(recorded)[:10]))
    with pytest.raises(UserError, match=r"holds 10 frames; its trace .* has 40 steps, so 41 frames"):
        open_store(trace)
    frames_path(trace).write_bytes(b"not a zip")
    assert main(["load", str(trace), "--db", str(tmp_path / "x.duckdb")]) == 2
    assert "not a frames archive" in capsys.readouterr().err


def test_frames_are_written_with_the_trace_and_kept_on_resume(tmp_path):
    spec = EpisodeSpec(EPISODE, lambda: (CrafterSession(0, "scripted", 12, keep_frames=True), ScriptedCrafterAgent(0)))
    recorded, _ = record_episodes([spec], tmp_path, 12, show_progress=False)
    written = frames_path(recorded[0]).stat().st_mtime_ns
    again, skipped = record_episodes([spec], tmp_path, 12, show_progress=False)
    assert again == [] and skipped == recorded and frames_path(recorded[0]).stat().st_mtime_ns == written

    class Interrupt:
        def __init__(self):
            self.agent, self.calls = ScriptedCrafterAgent(0), 0

        def choose(self, state):
            self.calls += 1
            if self.calls == 5:
                raise KeyboardInterrupt
            return self.agent.choose(state)

    with pytest.raises(KeyboardInterrupt):
        record_episode(CrafterSession(0, "scripted", 12, keep_frames=True), Interrupt(), tmp_path, 12)
    assert read_episode(recorded[0]).header["ended_by"] == "interrupted" and len(_frames(recorded[0])) == 5
    # The interrupted episode is recorded again, frames and all; without frames, the stale ones go.
    assert record_episodes([spec], tmp_path, 12, show_progress=False)[0] == recorded
    assert len(_frames(recorded[0])) == 13
    record_episode(CrafterSession(0, "scripted", 12), ScriptedCrafterAgent(0), tmp_path, 12)
    assert not frames_path(recorded[0]).exists()


def test_qtc_play_frames_and_its_flags(tmp_path, capsys):
    out = tmp_path / "traces"
    assert main(["play", "crafter", "--max-steps", "6", "--out", str(out), "--quiet"]) == 0
    assert main(["play", "crafter", "--frames", "--episodes", "2", "--max-steps", "6", "--out", str(out),
                 "--quiet"]) == 0
    assert (out / "crafter-scripted-s1.frames.npz").exists() and not (out / "crafter-scripted-s0.frames.npz").exists()
    assert "crafter-scripted-s0.jsonl; delete them to record them again with frames" in capsys.readouterr().err
    for flags, message in ((["jericho", "--frames"], "--frames is for Crafter (Jericho has no screen)"),
                           (["crafter", "--vision"], "--vision is for Crafter's llm agent")):
        assert main(["play", *flags, "--out", str(out)]) == 2
        assert message in capsys.readouterr().err


def test_the_llm_agent_plays_from_the_screen(tmp_path):
    replies = iter([Reply('{"action": "move_left", "reason": "a tree is to the west"}'),
                    Reply('{"action": "do", "reason": "collect the wood in front"}'),
                    Reply('{"action": "noop", "reason": "wait"}')])
    with ChatCompletionServer(lambda body: next(replies)) as server:
        assert main(["play", "crafter", "--agent", "llm", "--vision", "--frames", "--base-url", server.url,
                     "--model", "stub", "--max-steps", "3", "--out", str(tmp_path), "--quiet"]) == 0
    trace = tmp_path / "crafter-llm-s0.jsonl"
    steps = read_episode(trace).steps
    assert [(s["action"], s["reason"]) for s in steps] == [
        ("move_left", "a tree is to the west"), ("do", "collect the wood in front"), ("noop", "wait")]
    frames = _frames(trace)
    for t, request in enumerate(server.requests):
        shown = request["messages"][-1]
        [png] = message_images(shown)
        screen = np.asarray(Image.open(io.BytesIO(png)))
        assert np.array_equal(screen, frames[t].repeat(VISION_SCALE, 0).repeat(VISION_SCALE, 1))  # the screen before step t+1
        text = message_text(shown)
        assert f"after step {t}" in text and "health 9, food 9, drink 9, energy 9 | inventory:" in text
        assert "move_left" in text


def test_a_frames_header_claiming_more_than_the_archive_holds_is_refused_unread(recorded, tmp_path):
    """Issue 32, item 10: a header claiming 65,536 x 65,536 frames allocated until MemoryError."""
    import zipfile

    trace = tmp_path / recorded.name
    trace.write_bytes(recorded.read_bytes())
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "|u1", "fortran_order": False,
                                                  "shape": (STEPS + 1, 65536, 65536, 3)})
    with zipfile.ZipFile(frames_path(trace), "w") as archive:
        archive.writestr("frames.npy", header.getvalue() + b"\x00" * 64)
    with pytest.raises(UserError, match=r"not a frames archive \(its header says \(41, 65536, 65536, 3\) of uint8, 64 bytes"):
        open_store(trace)
