"""`qtc generate --jobs N`: the episodes in shards, each in a worker process with a DuckDB of its own,
give the bytes of one process over one store, whatever N and the order of the files; a trace that
fails in a shard fails the run as it fails one process (fixtures: conftest.py). Traces too small for
shards to pay stay in one process whatever N: the sharded runs here lower that size to nothing.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from support.recordings import SMALL_RUN_FLAGS
from qtc.cli import main
from qtc.runtime.generate import shards
from qtc.runtime.generate.shards import SHARDS_PAY_BYTES, default_jobs, plan_shards, read_episodes, workers


@pytest.fixture
def sharded(monkeypatch) -> None:
    """--jobs N shards the small traces of these tests too."""
    monkeypatch.setattr(shards, "SHARDS_PAY_BYTES", 0)


def test_jobs_2_and_3_write_the_bytes_of_jobs_1_whatever_the_file_order(tmp_path, small_traces,
                                                                         one_process_output, sharded):
    _, files = read_episodes(tuple(small_traces))
    assert [len(plan_shards(files, jobs)) for jobs in (2, 3)] == [2, 3]  # so the runs below are sharded
    assert one_process_output[0].count(b"\n") > 100
    for jobs in (2, 3):
        order = list(small_traces)
        random.Random(jobs).shuffle(order)
        out = tmp_path / f"jobs{jobs}.jsonl"
        assert main(["generate", "--traces", *map(str, order), "--out", str(out), "--jobs", str(jobs), *SMALL_RUN_FLAGS]) == 0
        assert (out.read_bytes(), out.with_name(out.stem + ".summary.json").read_bytes()) == one_process_output


def test_a_trace_that_fails_in_a_shard_fails_the_run_with_the_message_of_one_process(tmp_path, broken_traces, capsys,
                                                                                     sharded):
    folder, broken = broken_traces
    messages = []
    for jobs in ("1", "2"):
        assert main(["generate", "--traces", str(folder), "--out", str(tmp_path / "qa.jsonl"), "--jobs", jobs,
                     *SMALL_RUN_FLAGS]) == 2
        messages.append(capsys.readouterr().err)
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"qtc generate: error: {broken}:5: not valid JSON")
    assert not (tmp_path / "qa.jsonl").exists()


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_jobs_below_one_is_refused_with_a_message(jobs, crafter_trace_dir, tmp_path, capsys):
    assert main(["generate", "--traces", str(crafter_trace_dir), "--out", str(tmp_path / "qa.jsonl"),
                 "--jobs", jobs]) == 2
    assert capsys.readouterr().err == f"qtc generate: error: --jobs must be at least 1, got {jobs}\n"


def test_small_traces_stay_in_one_process_whatever_jobs_and_large_ones_use_the_jobs_or_every_core(small_traces):
    """Sharding a few megabytes costs more than it gives (process starts, statement planning per shard),
    so --jobs 2 is never slower than --jobs 1 there; past one shard's worth of trace text --jobs N
    workers run, by default the machine's cores."""
    _, files = read_episodes(tuple(small_traces))
    assert [workers(files, jobs) for jobs in (None, 1, 2, 3)] == [1, 1, 1, 1]
    large = [replace(f, size=SHARDS_PAY_BYTES // 4) for f in files]
    assert sum(f.size for f in large) > SHARDS_PAY_BYTES
    assert [workers(large, jobs) for jobs in (None, 1, 2, 3)] == [default_jobs(), 1, 2, 3]
