"""EMemBench's logs (runtime/record/emembench.py, emembench_import.py, `qtc import emembench`).

A qtc episode written in EMemBench's log format by the converter and imported back is the same episode:
byte for byte for Crafter (with its screens too), and for Jericho the same actions, observations, reasons
and header (its valid actions are left out, to keep the test short). A log the game does not match stops
the import at the step that differs, naming the file, the line and the step, and leaves nothing of that
episode behind; a log missing a field, a folder without logs and an unknown game are one-line errors.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from qtc.cli import main
from qtc.dsl import crafter_data
from qtc.errors import UserError
from qtc.runtime.record.agents import RandomAgent, ScriptedCrafterAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.crafter_despawns import DespawnChoices
from qtc.runtime.record.emembench import write_emembench
from qtc.runtime.record.emembench_crafter import frame_name
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.trace.format import read_episode
from qtc.runtime.trace.frames import frames_path
from support.paths import ROMS

FRAMED_STEPS = 12


def rewrite(path: Path, change) -> None:
    """Change a log's rows in place (`change` edits the list of rows)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    change(rows)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def run_import(capsys, logs: Path, out: Path, *flags: str) -> tuple[int, str, str]:
    code = main(["import", "emembench", str(logs), "--out", str(out), "--quiet", *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def everything_in(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")) if folder.exists() else []


@pytest.fixture(scope="module")
def crafter_logs(crafter_recording, tmp_path_factory) -> Path:
    logs = tmp_path_factory.mktemp("emembench_crafter")
    write_emembench(crafter_recording.path, logs)
    return logs


def test_a_crafter_episode_comes_back_byte_for_byte_and_a_rerun_skips_it(crafter_recording, crafter_logs,
                                                                          tmp_path, capsys):
    log = crafter_logs / "seed0" / "scripted" / "logs.jsonl"
    assert everything_in(crafter_logs) == ["seed0", "seed0/scripted", "seed0/scripted/logs.jsonl",
                                           "seed0/scripted/map_seed0.txt"]
    code, out, error = run_import(capsys, crafter_logs, tmp_path)
    assert (code, error) == (0, "")
    assert everything_in(tmp_path) == [crafter_recording.path.name]
    assert (tmp_path / crafter_recording.path.name).read_bytes() == crafter_recording.path.read_bytes()
    reasons = [json.loads(line)["reason"] for line in log.read_text().splitlines()]
    assert [step["reason"] for step in read_episode(crafter_recording.path).steps] == reasons and all(reasons)
    code, out, error = run_import(capsys, crafter_logs, tmp_path)
    assert code == 0 and "imported 0 episode(s), skipped 1" in out


@pytest.fixture(scope="module")
def framed(tmp_path_factory) -> tuple[Path, Path]:
    """A short scripted Crafter episode recorded with its screens, and its EMemBench log."""
    directory = tmp_path_factory.mktemp("emembench_framed")
    session = CrafterSession(2, "scripted", FRAMED_STEPS, keep_frames=True)
    trace = record_episode(session, ScriptedCrafterAgent(2), directory / "traces", FRAMED_STEPS)
    write_emembench(trace, directory / "logs")
    return trace, directory / "logs"


def test_screens_are_checked_and_kept_as_qtc_play_frames_keeps_them(framed, tmp_path, capsys):
    trace, logs = framed
    pngs = sorted(path.name for path in (logs / "seed2" / "scripted" / "frames").iterdir())
    assert pngs == [frame_name(step) for step in range(FRAMED_STEPS + 1)]
    code, _, error = run_import(capsys, logs, tmp_path)
    assert (code, error) == (0, "")
    assert (tmp_path / trace.name).read_bytes() == trace.read_bytes()
    with np.load(frames_path(trace)) as recorded, np.load(frames_path(tmp_path / trace.name)) as imported:
        assert np.array_equal(recorded["frames"], imported["frames"])


def test_a_screen_that_differs_stops_the_import_at_its_step(framed, tmp_path, capsys):
    _, logs = framed
    copy = tmp_path / "logs"
    shutil.copytree(logs, copy)
    png = copy / "seed2" / "scripted" / "frames" / frame_name(7)
    pixels = np.asarray(Image.open(png).convert("RGB")).copy()
    pixels[0, 0] = 255 - pixels[0, 0]
    Image.fromarray(pixels).save(png)
    code, _, error = run_import(capsys, copy, tmp_path / "out")
    assert code == 2 and "\n" not in error
    assert error == (f"qtc import: error: {copy / 'seed2' / 'scripted' / 'logs.jsonl'}:7: step 7: the screen after it "
                     f"differs from the game's ({png})")
    assert everything_in(tmp_path / "out") == []


def test_a_run_of_unmodified_crafter_is_replayed_despawning_the_creatures_it_despawned(tmp_path, capsys):
    """Unmodified Crafter despawns by memory address: here the second despawn draw took another creature
    than the insertion order gives, and the game differs from step 11 on (found by trying seeds); the
    screens, which EMemBench's runs keep, show it."""
    session = CrafterSession(1, "random", 20, keep_frames=True)
    DespawnChoices({1: 1}).install(session.env)
    session.ordered_objects = False
    trace = record_episode(session, RandomAgent(1, crafter_data.ACTIONS), tmp_path / "traces", 20)
    write_emembench(trace, tmp_path / "logs")
    code, _, error = run_import(capsys, tmp_path / "logs", tmp_path / "out")
    assert (code, error) == (0, "")
    assert (tmp_path / "out" / trace.name).read_bytes() == trace.read_bytes()
    assert read_episode(trace).header["ordered_objects"] is False


def test_a_jericho_episode_comes_back_with_the_logged_reasons(jericho_trace_dir, tmp_path, capsys):
    original = read_episode(next(jericho_trace_dir.glob("*.jsonl")))
    log = write_emembench(original.path, tmp_path / "logs")
    assert log == tmp_path / "logs" / "zork1" / f"seed{original.header['seed']}" / "walkthrough_logs.jsonl"

    def give_reasons(rows):
        for row in rows[:-1]:
            row["agent"]["reason"] = f"reason {row['step']}"
    rewrite(log, give_reasons)
    code, _, error = run_import(capsys, tmp_path / "logs", tmp_path / "out", "--rom", str(ROMS), "--no-valid-actions")
    assert (code, error) == (0, "")
    imported = read_episode(tmp_path / "out" / original.path.name)
    assert imported.header == original.header
    assert imported.steps == [{**step, "valid_actions": None, "reason": f"reason {step['step']}"}
                              for step in original.steps]


def test_an_observation_that_differs_stops_the_import_and_leaves_nothing_half(
        crafter_recording, crafter_logs, jericho_trace_dir, tmp_path, capsys):
    logs, out = tmp_path / "logs", tmp_path / "out"
    shutil.copytree(crafter_logs, logs)
    log = write_emembench(next(jericho_trace_dir.glob("*.jsonl")), logs)
    rewrite(log, lambda rows: rows[4]["env_feedback"].update(text="You are eaten by a grue.\n\n"))
    out.mkdir()
    shutil.copy(crafter_recording.path, out)  # imported before: skipped (the rerun resumes)
    code, _, error = run_import(capsys, logs, out, "--rom", str(ROMS), "--no-valid-actions")
    assert code == 2 and "\n" not in error
    assert error.startswith(f"qtc import: error: {log}:5: step 5: field 'env_feedback.text' differs from the "
                            f"game's: the log has 'You are eaten by a grue.\\n\\n', the game ")
    assert everything_in(out) == [crafter_recording.path.name]


def test_a_log_missing_a_field_names_the_file_line_and_field(crafter_logs, tmp_path, capsys):
    shutil.copytree(crafter_logs, tmp_path / "logs")
    log = tmp_path / "logs" / "seed0" / "scripted" / "logs.jsonl"
    rewrite(log, lambda rows: rows[2]["info"].pop("player_pos"))
    code, _, error = run_import(capsys, tmp_path / "logs", tmp_path / "out")
    assert (code, error) == (2, f"qtc import: error: {log}:3: missing field 'info.player_pos'")
    assert everything_in(tmp_path / "out") == []


def test_a_folder_without_logs_and_unknown_games_are_one_line_errors(crafter_logs, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, _, error = run_import(capsys, tmp_path / "empty", tmp_path / "out")
    assert (code, error) == (2, f"qtc import: error: {tmp_path / 'empty'}: no EMemBench logs in it (Jericho runs "
                                "write <run>_logs.jsonl, Crafter runs seed<N>/<run>/logs.jsonl)")

    shutil.copytree(crafter_logs, tmp_path / "crafter")
    log = tmp_path / "crafter" / "seed0" / "scripted" / "logs.jsonl"
    rewrite(log, lambda rows: [row.update(env="minecraft") for row in rows])
    code, _, error = run_import(capsys, tmp_path / "crafter", tmp_path / "out")
    assert (code, error) == (2, f"qtc import: error: {log}:1: field 'env': unknown game 'minecraft' (EMemBench's "
                                "Crafter runs log 'crafter')")

    log = tmp_path / "jericho" / "gpt-5.1_history30_20251119_135936_logs.jsonl"
    log.parent.mkdir()
    log.write_text(json.dumps({
        "step": 1, "game": {"name": "nosuch", "rom": "game_envs/nosuch.z5"}, "observation": "",
        "agent": {"action": "look", "reason": ""}, "env_feedback": {"text": "", "reward": 0, "done": False}}) + "\n")
    code, _, error = run_import(capsys, log.parent, tmp_path / "out", "--rom", str(tmp_path))
    assert code == 2 and "\n" not in error
    assert error.startswith(f"qtc import: error: {log}:1: field 'game.rom': unknown game 'nosuch': no story file "
                            f"nosuch.z5 found (looked in {tmp_path}, ")
    assert error.endswith("); give --rom PATH")
    assert everything_in(tmp_path / "out") == []


def test_a_textworld_episode_has_no_emembench_format(textworld_trace_dir, tmp_path):
    trace = sorted(textworld_trace_dir.glob("*.jsonl"))[0]
    with pytest.raises(UserError) as refused:
        write_emembench(trace, tmp_path)
    assert str(refused.value) == f"{trace}: a textworld episode: EMemBench logs only jericho and crafter runs"
    assert everything_in(tmp_path) == []
