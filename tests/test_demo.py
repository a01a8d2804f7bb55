"""`qtc demo` as a new user runs it: with a story file, and with none to be found.

Both runs record the same Crafter episode; it is recorded once, by the command the demo prints, and put
in each run's folder, where the demo finds it complete and keeps it (as on a second run)."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from qtc.cli import main

CRAFTER_PLAY = "qtc play crafter --agent scripted --seed 1 --max-steps 200"


@pytest.fixture(scope="session")
def demo_crafter_trace(tmp_path_factory) -> Path:
    """The demo's Crafter episode, recorded by the command it prints."""
    folder = tmp_path_factory.mktemp("demo_crafter")
    assert main([*shlex.split(CRAFTER_PLAY)[1:], "--out", str(folder), "--quiet"]) == 0
    [trace] = folder.glob("*.jsonl")
    return trace


def _with_crafter_episode(out: Path, trace: Path) -> Path:
    """`out` with the demo's Crafter episode already recorded in its traces folder."""
    (out / "traces").mkdir(parents=True)
    shutil.copy(trace, out / "traces" / trace.name)
    return out


def test_demo_records_both_games_and_shows_questions(tmp_path, zork1_rom, demo_crafter_trace, capsys):
    out_dir = _with_crafter_episode(tmp_path / "demo", demo_crafter_trace)
    assert main(["demo", "--out", str(out_dir), "--rom", str(zork1_rom)]) == 0
    out = capsys.readouterr().out
    qa = out_dir / "qa.jsonl"
    records = [json.loads(line) for line in qa.read_text().splitlines()]
    assert {r["env"] for r in records} == {"crafter", "jericho"}
    assert {r["category"] for r in records} == {"single_hop", "multi_hop", "induction", "spatial", "temporal",
                                                "logical"}
    # The Crafter episode put there is the one the demo asks for: kept, not recorded again beside it.
    assert f"$ {CRAFTER_PLAY}" in out and out.count("recorded 0 episode(s), skipped 1 already complete") == 1
    assert len(list((out_dir / "traces").glob("crafter-*.jsonl"))) == 1
    assert f"$ qtc play jericho --rom {zork1_rom} --agent walkthrough" in out
    assert out.count("  Q: ") >= 6 and "evidence: step" in out
    assert f"questions  {qa}" in out and (out_dir / "qa.summary.json").is_file()
    # The next steps include serving a local model and asking it: the printed answer line runs as given
    # (with --dry-run, which sends nothing).
    commands = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert any(c.startswith("python -m llama_cpp.server ") for c in commands)
    answer = next(c for c in commands if c.startswith("qtc answer "))
    assert any(c.startswith("qtc score ") for c in commands)
    assert main(shlex.split(answer)[1:] + ["--dry-run"]) == 0
    # A second run keeps the recorded episodes (the Jericho one too) and writes the same questions (the
    # same templates: the choice per category depends on how many templates share it).
    first = qa.read_bytes()
    assert main(["demo", "--out", str(out_dir), "--rom", str(zork1_rom)]) == 0
    assert capsys.readouterr().out.count("recorded 0 episode(s), skipped 1 already complete") == 2
    assert qa.read_bytes() == first


def test_demo_without_a_story_file_records_a_textworld_game(tmp_path, monkeypatch, demo_crafter_trace, capsys):
    monkeypatch.chdir(tmp_path)  # no ./roms and no ../shared/roms here
    monkeypatch.delenv("QTC_ROMS", raising=False)
    _with_crafter_episode(tmp_path / "out" / "demo", demo_crafter_trace)
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "no Jericho story file found (looked for zork1.z5 in roms, ../shared/roms); a TextWorld cooking game" in out
    assert "$ qtc play textworld --make cooking --seed 1 --agent walkthrough" in out
    records = [json.loads(line) for line in (tmp_path / "out" / "demo" / "qa.jsonl").read_text().splitlines()]
    assert {r["env"] for r in records} == {"crafter", "textworld"}
