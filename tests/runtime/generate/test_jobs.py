"""`qtc generate --jobs N`: the episodes in shards, each in a worker process with a DuckDB of its own,
give the bytes of one process over one store, whatever N and the order of the files; a trace that
fails in a shard fails the run as it fails one process.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from qtc.cli import main
from qtc.runtime.generate.shards import plan_shards, read_episodes

FLAGS = ["--max-per-template", "6", "--horizon", "40", "--quiet"]


@pytest.fixture(scope="module")
def small_traces(tmp_path_factory, zork1_rom) -> list[Path]:
    """Six short recorded episodes, both games: four scripted Crafter ones and two random Zork ones."""
    folder = tmp_path_factory.mktemp("small_traces")
    assert main(["play", "crafter", "--episodes", "4", "--max-steps", "60", "--out", str(folder), "--quiet"]) == 0
    assert main(["play", "jericho", "--rom", str(zork1_rom), "--agent", "random", "--seed", "1", "--episodes", "2",
                 "--max-steps", "15", "--no-valid-actions", "--out", str(folder), "--quiet"]) == 0
    return sorted(folder.glob("*.jsonl"))


def test_jobs_1_2_and_3_write_the_same_bytes_whatever_the_file_order(tmp_path, small_traces):
    _, files = read_episodes(tuple(small_traces))
    assert [len(plan_shards(files, jobs)) for jobs in (2, 3)] == [2, 3]  # so the runs below are sharded
    outputs = []
    for jobs in (1, 2, 3):
        order = list(small_traces)
        random.Random(jobs).shuffle(order)
        out = tmp_path / f"jobs{jobs}.jsonl"
        assert main(["generate", "--traces", *map(str, order), "--out", str(out), "--jobs", str(jobs), *FLAGS]) == 0
        outputs.append((out.read_bytes(), out.with_name(out.stem + ".summary.json").read_bytes()))
    assert outputs[0][0].count(b"\n") > 100
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]


def test_a_trace_that_fails_in_a_shard_fails_the_run_with_the_message_of_one_process(tmp_path, small_traces, capsys):
    folder = tmp_path / "traces"
    folder.mkdir()
    for path in small_traces:
        shutil.copy(path, folder)
    broken = sorted(folder.glob("crafter-*.jsonl"))[1]
    lines = broken.read_text(encoding="utf-8").split("\n")
    lines[4] = lines[4][:-1]  # step 4 cut short: not JSON any more
    broken.write_text("\n".join(lines), encoding="utf-8")
    messages = []
    for jobs in ("1", "2"):
        assert main(["generate", "--traces", str(folder), "--out", str(tmp_path / "qa.jsonl"), "--jobs", jobs,
                     *FLAGS]) == 2
        messages.append(capsys.readouterr().err)
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"qtc generate: error: {broken}:5: not valid JSON")
    assert not (tmp_path / "qa.jsonl").exists()


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_jobs_below_one_is_refused_with_a_message(jobs, crafter_trace_dir, tmp_path, capsys):
    assert main(["generate", "--traces", str(crafter_trace_dir), "--out", str(tmp_path / "qa.jsonl"),
                 "--jobs", jobs]) == 2
    assert capsys.readouterr().err == f"qtc generate: error: --jobs must be at least 1, got {jobs}\n"
