"""`qtc play --jobs N`: episodes recorded by worker processes are the files one process records, for
both games, and an interrupted run (an episode missing) resumes by recording only what is missing.
"""

from __future__ import annotations

import pytest

from qtc.cli import main


def _files(folder) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.jsonl"))}


@pytest.mark.parametrize("game", ["crafter", "jericho"])
def test_episodes_recorded_in_parallel_are_those_of_one_process_and_resume(game, tmp_path, capsys, request):
    flags = ["--episodes", "2", "--max-steps", "12", "--quiet"]
    if game == "jericho":
        flags += ["--rom", str(request.getfixturevalue("zork1_rom")), "--agent", "random", "--seed", "1",
                  "--no-valid-actions"]
    assert main(["play", game, *flags, "--out", str(tmp_path / "one")]) == 0
    assert main(["play", game, *flags, "--out", str(tmp_path / "many"), "--jobs", "2"]) == 0
    one = _files(tmp_path / "one")
    assert len(one) == 2 and _files(tmp_path / "many") == one
    (tmp_path / "many" / sorted(one)[1]).unlink()  # as if the run had stopped before it
    capsys.readouterr()
    assert main(["play", game, *flags, "--out", str(tmp_path / "many"), "--jobs", "2"]) == 0
    assert "recorded 1 episode(s), skipped 1 already complete" in capsys.readouterr().out
    assert _files(tmp_path / "many") == one


def test_jobs_below_one_is_refused(tmp_path, capsys):
    assert main(["play", "crafter", "--jobs", "0", "--out", str(tmp_path)]) == 2
    assert "--episodes, --max-steps and --jobs must be at least 1" in capsys.readouterr().err
