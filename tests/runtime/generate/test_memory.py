"""`qtc generate --memory-limit SIZE`: DuckDB's memory limit in each process that queries episodes. Within
it DuckDB spills to disk, and the set is the same bytes; a template that needs more is named with the
ways out. The limits measured on a long episode are in docs/testing.md (Memory)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.strategies import seeded_episode, write_episodes

from qtc.cli import main

SPATIAL = Path(__file__).parents[3] / "templates" / "crafter" / "spatial.qtpl"


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("memory")
    write_episodes([seeded_episode("crafter", seed, 30) for seed in range(2)], folder)
    return folder


def _generate(traces: Path, out: Path, *flags: str) -> int:
    return main(["generate", "--traces", str(traces), "--templates", str(SPATIAL), "--out", str(out), "--quiet",
                 "--jobs", "1", *flags])


def test_a_limit_the_queries_fit_in_gives_the_same_set(traces, tmp_path):
    assert _generate(traces, tmp_path / "free.jsonl") == 0
    assert _generate(traces, tmp_path / "limited.jsonl", "--memory-limit", "256MB") == 0
    assert (tmp_path / "free.jsonl").read_bytes() == (tmp_path / "limited.jsonl").read_bytes()


def test_a_template_beyond_the_limit_is_named_with_the_ways_out(traces, tmp_path, capsys):
    store = tmp_path / "store.duckdb"
    assert main(["load", str(traces), "--db", str(store)]) == 0
    assert _generate(store, tmp_path / "qa.jsonl", "--memory-limit", "1MB") == 2
    error = capsys.readouterr().err
    assert error.startswith("qtc generate: error: template crafter.") and "DuckDB's limit of 976.5 KiB" in error
    assert all(way in error for way in ("--memory-limit", "--jobs", "--horizon", "qtc load --db")), error
    assert not (tmp_path / "qa.jsonl").exists()


def test_episodes_loaded_beyond_the_limit_are_refused_with_the_ways_out(traces, tmp_path, capsys):
    assert _generate(traces, tmp_path / "qa.jsonl", "--memory-limit", "100KB") == 2
    assert capsys.readouterr().err.startswith("qtc generate: error: the episodes loaded take more memory than "
                                              "--memory-limit 100KB already; give more, or fewer episodes to each "
                                              "process (--jobs N); a database made by qtc load --db is read from disk")


def test_a_limit_that_is_not_a_size_is_refused(traces, tmp_path, capsys):
    assert _generate(traces, tmp_path / "qa.jsonl", "--memory-limit", "lots") == 2
    assert capsys.readouterr().err.strip() == ("qtc generate: error: --memory-limit must be a size such as 500MB or "
                                               "4GB, got 'lots'")
