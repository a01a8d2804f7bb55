"""`qtc --version`, and the notes that tell a user how long a slow command will take before it starts."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from qtc.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"qtc {version('qtc')}\n"


def test_play_jericho_warns_that_the_valid_action_finder_is_slow(tmp_path, zork1_rom, capsys):
    assert main(["play", "jericho", "--rom", str(zork1_rom), "--agent", "walkthrough", "--max-steps", "1",
                 "--out", str(tmp_path), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "the valid-action finder takes 1-3 s a step" in err and "--no-valid-actions skips it" in err
    assert main(["play", "jericho", "--rom", str(zork1_rom), "--agent", "walkthrough", "--max-steps", "1",
                 "--out", str(tmp_path / "fast"), "--quiet", "--no-valid-actions"]) == 0
    assert "valid-action finder" not in capsys.readouterr().err
