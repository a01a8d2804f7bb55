"""Fixtures of the generation tests that run it more than once over several episodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.recordings import SMALL_RUN_FLAGS
from qtc.cli import main


@pytest.fixture(scope="session")
def small_traces(tmp_path_factory, zork1_rom) -> list[Path]:
    """Six short recorded episodes, both games: four scripted Crafter ones and two random Zork ones."""
    folder = tmp_path_factory.mktemp("small_traces")
    assert main(["play", "crafter", "--episodes", "4", "--max-steps", "60", "--out", str(folder), "--quiet"]) == 0
    assert main(["play", "jericho", "--rom", str(zork1_rom), "--agent", "random", "--seed", "1", "--episodes", "2",
                 "--max-steps", "15", "--no-valid-actions", "--out", str(folder), "--quiet"]) == 0
    return sorted(folder.glob("*.jsonl"))


@pytest.fixture(scope="session")
def one_process_output(tmp_path_factory, small_traces) -> tuple[bytes, bytes]:
    """The QA set and summary of `small_traces` made by one process over one store (--jobs 1)."""
    out = tmp_path_factory.mktemp("one_process") / "qa.jsonl"
    assert main(["generate", "--traces", *map(str, small_traces), "--out", str(out), "--jobs", "1", *SMALL_RUN_FLAGS]) == 0
    return out.read_bytes(), out.with_name("qa.summary.json").read_bytes()


@pytest.fixture
def broken_traces(tmp_path, small_traces) -> tuple[Path, Path]:
    """A copy of `small_traces` in which one Crafter file is cut short at step 4; the folder and that file."""
    folder = tmp_path / "traces"
    folder.mkdir()
    for path in small_traces:
        (folder / path.name).write_bytes(path.read_bytes())
    broken = sorted(folder.glob("crafter-*.jsonl"))[1]
    lines = broken.read_text(encoding="utf-8").split("\n")
    lines[4] = lines[4][:-1]  # no longer JSON
    broken.write_text("\n".join(lines), encoding="utf-8")
    return folder, broken
