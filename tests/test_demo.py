"""`qtc demo` as a new user runs it: with a story file, and with none to be found."""

from __future__ import annotations

import json
import shlex

from qtc.cli import main


def test_demo_records_both_games_and_shows_questions(tmp_path, zork1_rom, capsys):
    assert main(["demo", "--out", str(tmp_path / "demo"), "--rom", str(zork1_rom)]) == 0
    out = capsys.readouterr().out
    qa = tmp_path / "demo" / "qa.jsonl"
    records = [json.loads(line) for line in qa.read_text().splitlines()]
    assert {r["env"] for r in records} == {"crafter", "jericho"}
    assert {r["category"] for r in records} == {"single_hop", "multi_hop", "induction", "spatial", "temporal",
                                                "logical"}
    assert "$ qtc play crafter --agent scripted --seed 1 --max-steps 200" in out
    assert f"$ qtc play jericho --rom {zork1_rom} --agent walkthrough" in out
    assert out.count("  Q: ") >= 6 and "evidence: step" in out
    assert f"questions  {qa}" in out and (tmp_path / "demo" / "qa.summary.json").is_file()
    # The next steps include serving a local model and asking it: the printed answer line runs as given
    # (with --dry-run, which sends nothing).
    commands = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert any(c.startswith("python -m llama_cpp.server ") for c in commands)
    answer = next(c for c in commands if c.startswith("qtc answer "))
    assert any(c.startswith("qtc score ") for c in commands)
    assert main(shlex.split(answer)[1:] + ["--dry-run"]) == 0
    # A second run keeps the recorded episodes and writes the same questions (the same templates: the
    # choice per category depends on how many templates share it).
    first = qa.read_bytes()
    assert main(["demo", "--out", str(tmp_path / "demo"), "--rom", str(zork1_rom)]) == 0
    assert "skipped 1 already complete" in capsys.readouterr().out and qa.read_bytes() == first


def test_demo_without_a_story_file_records_a_textworld_game(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no ./roms and no ../shared/roms here
    monkeypatch.delenv("QTC_ROMS", raising=False)
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "no Jericho story file found (looked for zork1.z5 in roms, ../shared/roms); a TextWorld cooking game" in out
    assert "$ qtc play textworld --make cooking --seed 1 --agent walkthrough" in out
    records = [json.loads(line) for line in (tmp_path / "out" / "demo" / "qa.jsonl").read_text().splitlines()]
    assert {r["env"] for r in records} == {"crafter", "textworld"}
