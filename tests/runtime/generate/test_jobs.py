"""`qtc generate --jobs N`: the episodes in shards, each in a worker process with a DuckDB of its own,
give the bytes of one process over one store, whatever N and the order of the files; a trace that
fails in a shard fails the run as it fails one process (fixtures: conftest.py). Traces too small for
shards to pay stay in one process whatever N: the sharded runs here lower that size to nothing.
"""

from __future__ import annotations

import random
from contextlib import closing
from dataclasses import replace

import pytest

from support.recordings import SMALL_RUN_FLAGS
from qtc.cli import main
from qtc.runtime.generate import shards
from qtc.runtime.generate.run import Options
from qtc.runtime.generate.runners import open_runner
from qtc.runtime.generate.shards import SHARDS_PAY_STEPS, default_jobs, plan_shards, read_episodes, steps, workers


@pytest.fixture
def sharded(monkeypatch) -> None:
    """--jobs N shards the small traces of these tests too."""
    monkeypatch.setattr(shards, "SHARDS_PAY_STEPS", 0)


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


def test_a_total_shared_among_templates_gives_the_bytes_of_one_process(tmp_path, small_traces, sharded):
    """With --total, each template draws for its share, set after the first round: the workers, which get
    every raise in one round, make the same draws as one process."""
    flags = [flag for flag in SMALL_RUN_FLAGS if flag not in ("--max-per-template", "6")] + ["--total", "60"]
    outputs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}.jsonl"
        assert main(["generate", "--traces", *map(str, small_traces), "--out", str(out), "--jobs", jobs, *flags]) == 0
        outputs.append((out.read_bytes(), out.with_name(out.stem + ".summary.json").read_bytes()))
    assert outputs[0] == outputs[1] and outputs[0][0].count(b"\n") == 60


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
    """Sharding a few thousand steps costs more than it gives (process starts, every statement's fixed
    cost per shard), so --jobs 2 is never slower than --jobs 1 there; past SHARDS_PAY_STEPS steps (up
    to the horizon) --jobs N workers run, by default the machine's cores."""
    episodes, _ = read_episodes(tuple(small_traces))
    assert [workers(episodes, jobs, None) for jobs in (None, 1, 2, 3)] == [1, 1, 1, 1]
    large = {eid: replace(e, n_steps=SHARDS_PAY_STEPS // 4) for eid, e in episodes.items()}
    assert steps(large, None) > SHARDS_PAY_STEPS
    assert [workers(large, jobs, None) for jobs in (None, 1, 2, 3)] == [default_jobs(), 1, 2, 3]
    assert workers(large, 2, SHARDS_PAY_STEPS // 8) == 1  # the steps read: up to the horizon


def test_the_progress_line_says_where_the_statements_run(small_traces, monkeypatch):
    def how(jobs: int) -> str:
        with closing(open_runner(Options(tuple(small_traces), jobs=jobs))) as runner:
            return runner.how
    total = steps(read_episodes(tuple(small_traces))[0], None)
    assert how(2) == f"in one process ({total:,} steps: workers pay past {SHARDS_PAY_STEPS:,})"
    monkeypatch.setattr(shards, "SHARDS_PAY_STEPS", 0)
    assert how(2) == "in 2 worker processes (2 shards)"
