"""What a store that generation queries is set to (shards.prepare): a small store (up to
SMALL_STORE_STEPS steps up to the horizon) runs on one DuckDB thread without the optimizers that do
not pay there; a larger one, or a thread count given, keeps DuckDB's defaults. The settings change no row
(bench/golden.py); these tests pin where they apply."""

from __future__ import annotations

import duckdb
import pytest

from qtc.runtime.generate import shards
from qtc.runtime.generate.shards import SMALL_STORE_OFF_OPTIMIZERS, Settings, prepare, read_episodes, steps
from qtc.runtime.trace.store import open_store


def store_settings(traces, settings: Settings) -> tuple[int, set[str]]:
    """The threads and the disabled optimizers of a store of `traces` prepared with `settings`."""
    con = open_store(*traces, configure=lambda con: prepare(con, settings))
    try:
        threads, disabled = con.execute(
            "SELECT current_setting('threads'), current_setting('disabled_optimizers')").fetchone()
    finally:
        con.close()
    return int(threads), set(filter(None, disabled.split(",")))


@pytest.fixture(scope="module")
def default_threads() -> int:
    with duckdb.connect() as con:
        return int(con.execute("SELECT current_setting('threads')").fetchone()[0])


@pytest.fixture(scope="module")
def traces_steps(small_traces) -> int:
    return steps(read_episodes(tuple(small_traces))[0], None)


def test_a_store_of_up_to_the_threshold_runs_on_one_thread_without_the_optimizers_that_do_not_pay_there(
        small_traces, traces_steps, monkeypatch):
    monkeypatch.setattr(shards, "SMALL_STORE_STEPS", traces_steps)
    assert store_settings(small_traces, Settings(42, None)) == (1, set(SMALL_STORE_OFF_OPTIMIZERS))


def test_a_store_above_the_threshold_keeps_duckdbs_defaults(small_traces, traces_steps, default_threads, monkeypatch):
    monkeypatch.setattr(shards, "SMALL_STORE_STEPS", traces_steps - 1)
    assert store_settings(small_traces, Settings(42, None)) == (default_threads, set())


def test_steps_are_counted_up_to_the_horizon(small_traces, monkeypatch):
    episodes = read_episodes(tuple(small_traces))[0]
    assert steps(episodes, 10) < steps(episodes, 11) < steps(episodes, None)
    monkeypatch.setattr(shards, "SMALL_STORE_STEPS", steps(episodes, 10))
    assert store_settings(small_traces, Settings(42, 10)) == (1, set(SMALL_STORE_OFF_OPTIMIZERS))
    assert store_settings(small_traces, Settings(42, 11))[1] == set()


def test_a_thread_count_given_is_kept_on_a_small_store(small_traces, traces_steps, monkeypatch):
    monkeypatch.setattr(shards, "SMALL_STORE_STEPS", traces_steps)
    assert store_settings(small_traces, Settings(42, None, threads=2)) == (2, set())
