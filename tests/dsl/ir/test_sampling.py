"""Sampling: the streaming top-N aggregate keeps exactly the bindings that sorting every binding by the
seeded hash order would keep (the window form, which caps beyond DuckDB's top-N limit use), so the
questions do not depend on which form runs; and a larger cap keeps every binding a smaller one kept.
Checked row for row (columns, values, order) on rich episodes of both games and on the real recorded
episodes, for caps 1, 3 and 16, with two seeds."""

from __future__ import annotations

import pytest
from support.ground_truth import library, store_of, templates_for
from support.strategies import seeded_episode

from qtc.dsl.ir.emit import emit
from qtc.dsl.ir.lower import lower

CAPS = (1, 3, 16)
RICH_SEEDS = {"jericho": (3,), "crafter": (5, 6)}


def rows(con, compiled, sampling: str, cap: int, seed: int) -> list[tuple]:
    con.execute(f"SET VARIABLE qtc_seed = {seed}")
    con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
    result = con.execute(emit(lower(compiled.checked, sampling, premise=True), compiled.checked))
    return [tuple(d[0] for d in result.description), *result.fetchall()]


def assert_same_rows(con, compiled, cap: int, seed: int) -> None:
    top_n, window = (rows(con, compiled, mode, cap, seed) for mode in ("top_n", "window"))
    assert top_n == window, f"{compiled.id}, cap {cap}, seed {seed}: {len(top_n) - 1} vs {len(window) - 1} rows"


def keys(table: list[tuple]) -> set[str]:
    """The (episode, adversarial, bindings...) of each row."""
    columns = table[0]
    wanted = [i for i, c in enumerate(columns) if c in ("episode_id", "adversarial") or c.startswith("p_")]
    return {repr(tuple(row[i] for i in wanted)) for row in table[1:]}


@pytest.mark.parametrize("env", sorted(RICH_SEEDS))
@pytest.mark.parametrize("cap", CAPS)
def test_the_top_n_aggregate_keeps_the_bindings_of_the_hash_order_on_rich_episodes(env, cap):
    store = store_of([seeded_episode(env, seed) for seed in RICH_SEEDS[env]])
    store.con.execute("RESET VARIABLE qtc_horizon")
    for compiled in templates_for(env):
        for seed in (42, 7):
            assert_same_rows(store.con, compiled, cap, seed)


def test_the_top_n_aggregate_keeps_the_bindings_of_the_hash_order_on_recorded_episodes(trace_db):
    for horizon in (None, 12):
        trace_db.execute("RESET VARIABLE qtc_horizon" if horizon is None else f"SET VARIABLE qtc_horizon = {horizon}")
        for compiled in library():
            assert_same_rows(trace_db, compiled, 16, 42)
    trace_db.execute("RESET VARIABLE qtc_horizon")


def test_a_larger_cap_keeps_every_binding_a_smaller_one_kept(trace_db):
    """What generate relies on when it doubles a template's cap: raising it only adds bindings."""
    trace_db.execute("RESET VARIABLE qtc_horizon")
    for compiled in library():
        small, large = (keys(rows(trace_db, compiled, "top_n", cap, 42)) for cap in (3, 6))
        assert small <= large, compiled.id
