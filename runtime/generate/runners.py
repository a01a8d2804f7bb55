"""Where generation's statements run: over one store in this process, or over shards of the episodes in
worker processes (--jobs) or Ray tasks (--ray, ray_cluster.py). Each runner knows the episodes and
gives, for a list of requests, every template's candidate rows as one Arrow table; run.py does the rest
the same way whichever ran them.

A runner over shards loads every shard again in each round of requests, so run.py asks it for every
cap a template may be raised to at once (`fetch_ahead`); one store answers each round as it comes.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import replace
from typing import Callable, Protocol

import pyarrow as pa

from qtc.errors import UserError
from qtc.processes import die_with_parent, interrupts_left_to_parent, stop_pool
from qtc.runtime.trace.store import open_store, read_in_place

from .records import EpisodeInfo
from .shards import (SHARDS_PAY_STEPS, Request, Settings, Shard, answers, default_jobs, episode_runs, plan_shards,
                     prepare, read_episodes, run_shard, steps, store_episodes, workers)

# Called with the template x episode runs just done.
OnDone = Callable[[int], None]
# Each request's candidate rows, by its key (template id, cap); None: none, its probe said (shards.answers).
Rows = dict[tuple[str, int], pa.Table | None]


class Runner(Protocol):
    episodes: dict[str, EpisodeInfo]
    fetch_ahead: bool  # a round of requests costs a load of every shard
    how: str  # where the statements run, for the progress line ("in one process")

    def rows(self, requests: list[Request], on_done: OnDone | None = None) -> Rows: ...

    def close(self) -> None: ...


def open_runner(options) -> Runner:
    """The runner for generate's `options` (run.Options): Ray tasks if `options.ray` names a cluster;
    else worker processes if shards.workers (`options.jobs`, None: every core, once the traces have
    steps enough for shards to pay) is more than 1 and the episodes make more than one shard; else this process. A .duckdb database or a Parquet corpus is read where it is, by this process."""
    if any(read_in_place(source) for source in options.traces):
        if options.ray:
            raise UserError("--ray reads trace files (each task loads its own); a .duckdb database or a "
                            "Parquet corpus is read by one process: leave out --ray, or give the trace files")
        return InProcess(options)
    settings = Settings(options.seed, options.horizon, memory_limit=options.memory_limit)
    if options.ray:
        from .ray_cluster import RayCluster

        return RayCluster(options.ray, options.traces, settings)
    if options.jobs != 1:
        episodes, files = read_episodes(options.traces)
        jobs = workers(episodes, options.jobs, options.horizon)
        if jobs == 1:
            return InProcess(options, f"in one process ({steps(episodes, options.horizon):,} steps: workers pay "
                                      f"past {SHARDS_PAY_STEPS:,})")
        shards = plan_shards(files, jobs)
        if len(shards) > 1:
            return ProcessPool(episodes, shards, jobs, settings)
        return InProcess(options, f"in one process ({len(episodes)} episodes make one shard)")
    return InProcess(options)


class InProcess:
    """Every statement over one store of all the episodes, in this process."""
    fetch_ahead = False

    def __init__(self, options, how: str = "in one process"):
        self.how = how
        settings = Settings(options.seed, options.horizon, memory_limit=options.memory_limit)
        self.con = open_store(*options.traces, configure=lambda con: prepare(con, settings))
        try:
            self.episodes = store_episodes(self.con)
        except BaseException:
            self.con.close()
            raise
        self.per_env = Counter(e.env for e in self.episodes.values())

    def rows(self, requests: list[Request], on_done: OnDone | None = None) -> Rows:
        rows = {}
        for request, table in answers(self.con, requests):
            rows[request.key] = table
            if on_done:
                on_done(episode_runs(request, self.per_env))
        return rows

    def close(self) -> None:
        self.con.close()


class ProcessPool:
    """Each shard in a worker process of its own (spawned: a DuckDB connection must not cross a fork),
    `jobs` at a time; DuckDB's threads shared out among them."""
    fetch_ahead = True

    def __init__(self, episodes: dict[str, EpisodeInfo], shards: list[Shard], jobs: int, settings: Settings):
        self.episodes = episodes
        self.shards = shards
        workers = min(jobs, len(shards))
        self.how = f"in {workers} worker processes ({len(shards)} shards)"
        self.settings = replace(settings, threads=max(1, default_jobs() // workers))
        import multiprocessing  # here, not at the top: only --jobs workers need it and concurrent.futures (~6 ms)
        from concurrent.futures import ProcessPoolExecutor
        # Workers die with this process; Ctrl-C is this process's to handle (close stops them).
        self.executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=die_with_parent, initargs=(os.getpid(),))

    def rows(self, requests: list[Request], on_done: OnDone | None = None) -> Rows:
        from concurrent.futures import FIRST_COMPLETED, Future, wait
        from concurrent.futures.process import BrokenProcessPool
        futures: dict[Future, int] = {}
        with interrupts_left_to_parent():  # submit starts the workers
            for number, shard in enumerate(self.shards):
                own = [request for request in requests if shard.runs(request)]
                if own:
                    futures[self.executor.submit(run_shard, shard.files, self.settings, own)] = number
        results: dict[int, Rows] = {}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                number = futures[future]
                try:
                    results[number] = future.result()
                except BrokenProcessPool:
                    raise UserError("a worker process died (out of memory?); try fewer --jobs") from None
                if on_done:
                    on_done(sum(self.shards[number].runs(request) for request in requests))
        return join_shards(results, requests)

    def close(self) -> None:
        stop_pool(self.executor)  # after an error or Ctrl-C, the shards under way are not waited for


def join_shards(results: dict[int, Rows], requests: list[Request]) -> Rows:
    """Each request's rows from every shard that ran it, in shard order (None: no shard had any, by its probe)."""
    rows = {}
    for request in requests:
        tables = [results[number][request.key] for number in sorted(results)
                  if results[number].get(request.key) is not None]
        rows[request.key] = pa.concat_tables(tables) if tables else None
    return rows

