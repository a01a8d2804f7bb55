"""Episodes in shards: groups of trace files, each loaded into a DuckDB of its own, where the compiled
statements run and give their candidate rows as Arrow tables.

A template's statement draws each episode's bindings by a seeded order of that episode alone
(dsl/ir/sample.py), so a shard computes for its episodes the very rows the whole store would, and
the rows of all shards together are the rows of one store: which file goes to which shard, and how
many shards there are, changes nothing but speed and memory. Nothing downstream depends on the
order of the rows (run.py), so shards are joined in any fixed order.

`run_shard` is what a worker process (--jobs) or a Ray task (--ray) runs; it takes and returns only
plain data and Arrow tables, and opens its own connection, so nothing of DuckDB crosses processes.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import duckdb
import pyarrow as pa

from qtc.dsl.ir.emit import Probe, probes_statement
from qtc.dsl.ir.sql import CAP_VARIABLE, CAPS_VARIABLE, HORIZON_VARIABLE, SEED_VARIABLE
from qtc.errors import UserError
from qtc.runtime.arrow import arrow_rows
from qtc.runtime.trace.format import read_header, trace_files
from qtc.runtime.trace.store import episode_files, open_store

from .records import EpisodeInfo

# A shard holds at most this much trace text (unless one file is larger), which bounds the memory of
# its DuckDB; more shards than workers come from this alone.
SHARD_BYTES = 64 * 2**20
# A shard costs a process's start and the planning of every statement (tens of ms each), which one
# episode never repays: a shard holds two episodes at least.
MIN_EPISODES_PER_SHARD = 2
# Up to this many steps (the episodes', up to the horizon), worker processes cost more wall time than
# the cores give back (process starts, a load and every statement's fixed cost per shard), so generate
# runs in one process whatever --jobs says. bench/bench_jobs.py, --jobs 2 against 1, wall: 5,952 steps
# 1.43, 19,816 steps 1.15, 59,710 steps 0.75; 1.0 near 30,000 (docs/scale.md).
SHARDS_PAY_STEPS = 30_000
# Up to this many steps, a statement's operators are too small for DuckDB's threads to share out: a
# second thread costs CPU (the scheduling of tasks with nothing to split) and gains no wall time, so the
# store runs on one. Whole generate, DuckDB's threads (2) against one, 2 cores nearly idle: 679 Jericho
# steps CPU -11% and 1,000 Crafter steps -15%, wall the same; 3,325 Jericho steps +10% CPU and 6,000
# Crafter steps the same CPU, both +25-45% wall (docs/speed.md).
SMALL_STORE_STEPS = 1_000
# DuckDB's optimizers left out on a small store, where the time they take to plan a statement is more than
# they save it (every template's statement at cap 16, summed, on one thread; the rows the same):
# - six that pay only on large data: 679 Jericho steps -10%, 1,000 Crafter steps -10%. On 6,000 Crafter
#   steps and two threads they were -5% to +4%, and on 10,000 +-2%: not worth a plan's risk there;
# - six whose rewrites a small statement's few rows do not repay (the order of joins, expressions rewritten,
#   common subexpressions, self-join aggregates, top-N windows, duplicate groups): a further -9% on 679
#   Jericho steps, -8% on 1,000 Crafter steps and -12% on two TextWorld games.
SMALL_STORE_OFF_OPTIMIZERS = ("compressed_materialization", "common_subplan", "late_materialization",
                              "join_filter_pushdown", "statistics_propagation", "projection_pullup",
                              "join_order", "expression_rewriter", "common_subexpressions", "self_join_aggregate",
                              "top_n_window_elimination", "duplicate_groups")


@dataclass(frozen=True)
class Request:
    """One compiled template's statement, to run with at most `cap` bindings per episode and side; its
    rows say too which of them the `smaller` caps sample and which caps cut a sample (dsl/ir/lower.py)."""
    template_id: str
    env: str  # the env of the episodes it reads, or "any"
    cap: int
    sql: str
    smaller: tuple[int, ...] = ()
    probe: Probe | None = None  # TRUE where the template has no rows (compile.CompiledTemplate.probe): sql not run

    @property
    def key(self) -> tuple[str, int]:
        return self.template_id, self.cap


@dataclass(frozen=True)
class Settings:
    """What every shard's connection is set to: the sampling seed, the horizon, DuckDB's threads and memory."""
    seed: int
    horizon: int | None
    threads: int | None = None  # None: one on a small store (prepare), else DuckDB's default (every core)
    memory_limit: str | None = None  # DuckDB's memory_limit ("2GB"), checked by run.Options; None: DuckDB's default


@dataclass(frozen=True)
class Shard:
    files: tuple[str, ...]  # as given, so that a fault names the file as one process would
    envs: tuple[tuple[str, int], ...]  # (env, number of episodes), sorted

    def runs(self, request: Request) -> int:
        """The template x episode runs `request` makes on this shard (0: nothing of its env here)."""
        return episode_runs(request, dict(self.envs))


def episode_runs(request: Request, episodes_per_env: dict[str, int]) -> int:
    if request.env == "any":
        return sum(episodes_per_env.values())
    return episodes_per_env.get(request.env, 0)


@dataclass(frozen=True)
class _TraceFile:
    path: Path
    size: int
    env: str


def read_episodes(sources: tuple[Path, ...]) -> tuple[dict[str, EpisodeInfo], list[_TraceFile]]:
    """The episodes of the trace files under `sources`, from their headers alone (the steps are read by
    the shards), and the files; a UserError for a bad header or an episode in two files."""
    files, _partial = trace_files(sources)
    headers = [(path, read_header(path)) for path in files]
    episode_files(headers)
    episodes = {h["episode_id"]: EpisodeInfo(h["env"], h["game"], h["n_steps"]) for _, h in headers}
    return episodes, [_TraceFile(path, path.stat().st_size, h["env"]) for path, h in headers]


def plan_shards(files: list[_TraceFile], workers: int) -> list[Shard]:
    """The files in shards of at most SHARD_BYTES (one larger file alone), at least one per worker
    while each holds MIN_EPISODES_PER_SHARD episodes; each file goes to the lightest shard, the
    largest first, so shards come out about even in size."""
    total = sum(f.size for f in files)
    count = min(max(workers, math.ceil(total / SHARD_BYTES)), len(files) // MIN_EPISODES_PER_SHARD)
    if count <= 1:
        return [_shard(files)] if files else []
    groups: list[list[_TraceFile]] = [[] for _ in range(count)]
    sizes = [0] * count
    for trace in sorted(files, key=lambda f: (-f.size, str(f.path))):
        lightest = min(range(count), key=lambda i: (sizes[i], i))
        groups[lightest].append(trace)
        sizes[lightest] += trace.size
    return [_shard(group) for group in groups]


def _shard(files: list[_TraceFile]) -> Shard:
    return Shard(tuple(str(f.path) for f in sorted(files, key=lambda f: str(f.path))),
                 tuple(sorted(Counter(f.env for f in files).items())))


# Trace files are loaded into DuckDB's memory; a database made by qtc load is read from disk.
_READ_IN_PLACE = "; a database made by qtc load --db is read from disk, not held in memory"


def prepare(con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
    con.execute("SET enable_progress_bar = false")  # a worker's bar would write over the driver's
    con.execute(f"SET VARIABLE {SEED_VARIABLE} = {settings.seed}")
    if settings.horizon is not None:
        con.execute(f"SET VARIABLE {HORIZON_VARIABLE} = {settings.horizon}")
    if settings.threads is not None:
        con.execute(f"SET threads = {settings.threads}")
    elif steps(store_episodes(con), settings.horizon) <= SMALL_STORE_STEPS:
        con.execute("SET threads = 1")
        con.execute(f"SET disabled_optimizers = '{','.join(SMALL_STORE_OFF_OPTIMIZERS)}'")
    if settings.memory_limit is not None:
        try:
            con.execute(f"SET memory_limit = '{settings.memory_limit}'")
        except duckdb.OutOfMemoryException:
            raise UserError(f"the episodes loaded take more memory than --memory-limit {settings.memory_limit} "
                            f"already; give more, or fewer episodes to each process (--jobs N){_READ_IN_PLACE}") from None


def candidate_rows(con: duckdb.DuckDBPyConnection, request: Request) -> pa.Table:
    """The template's candidates with at most `cap` bindings per episode (and side), premises checked."""
    con.execute(f"SET VARIABLE {CAP_VARIABLE} = {request.cap}")
    con.execute(f"SET VARIABLE {CAPS_VARIABLE} = {[*request.smaller, request.cap]}")
    try:
        return arrow_rows(con, request.sql)
    except duckdb.OutOfMemoryException:
        limit = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
        raise UserError(f"template {request.template_id} needs more memory than DuckDB's limit of {limit} for "
                        "the episodes queried together: give more with --memory-limit, or query fewer episodes at "
                        "once (--jobs N splits them into shards of their own), or fewer steps (--horizon)"
                        f"{_READ_IN_PLACE}") from None
    except duckdb.Error as error:
        raise UserError(f"template {request.template_id} failed to run: {str(error).splitlines()[0]}") from None


def answers(con: duckdb.DuckDBPyConnection, requests: list[Request]) -> Iterator[tuple[Request, pa.Table | None]]:
    """Each request with its candidate rows, or None where its probe finds the template without rows
    on these episodes (its statement, which would return none, is not run)."""
    empty = _without_rows(con, requests)
    for request in requests:
        yield request, None if request.template_id in empty else candidate_rows(con, request)


def _without_rows(con: duckdb.DuckDBPyConnection, requests: list[Request]) -> set[str]:
    """The templates whose probe is true, all probed in one statement (a statement costs tens of ms
    however few its rows). A probe that fails leaves every statement to run, and to fail with its
    template named."""
    probed = [request for request in requests if request.probe is not None]
    if not probed:
        return set()
    try:
        empty = con.execute(probes_statement([request.probe for request in probed])).fetchone()
    except duckdb.Error:
        return set()
    return {request.template_id for request, is_empty in zip(probed, empty) if is_empty}


def run_shard(files: tuple[str, ...], settings: Settings,
              requests: list[Request]) -> dict[tuple[str, int], pa.Table | None]:
    """The candidate rows of each request over the episodes of `files`, by request key (None: none, by
    its probe)."""
    con = open_store(*files, configure=lambda con: prepare(con, settings))
    try:
        return {request.key: rows for request, rows in answers(con, requests)}
    finally:
        con.close()


def workers(episodes: dict[str, EpisodeInfo], jobs: int | None, horizon: int | None) -> int:
    """The worker processes of `qtc generate --jobs jobs` (None: this machine's cores) over `episodes`:
    one (this process) up to SHARDS_PAY_STEPS steps."""
    return (jobs or default_jobs()) if steps(episodes, horizon) > SHARDS_PAY_STEPS else 1


def store_episodes(con: duckdb.DuckDBPyConnection) -> dict[str, EpisodeInfo]:
    """The episodes of a loaded store."""
    return {episode: EpisodeInfo(env, game, n_steps) for episode, env, game, n_steps
            in con.execute("SELECT episode_id, env, game, n_steps FROM episodes").fetchall()}


def steps(episodes: dict[str, EpisodeInfo], horizon: int | None) -> int:
    """The steps the statements read: each episode's, up to the horizon."""
    return sum(e.n_steps if horizon is None else min(e.n_steps, horizon) for e in episodes.values())


def default_jobs() -> int:
    """The cores this process may use."""
    count = os.process_cpu_count() if hasattr(os, "process_cpu_count") else os.cpu_count()
    return count or 1
