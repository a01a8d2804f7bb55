"""Load recorded episodes into a DuckDB trace database (the tables of dsl/schema.py), or into a
Parquet corpus.

Every file is validated before anything is inserted, and all of them are inserted in one
transaction: a malformed file (named with its line and field) loads nothing. Partial recordings
(*.jsonl.partial, left by a crash) are skipped and reported. --parquet DIR writes the tables as Parquet
partitioned by game and episode (DIR/<table>/game=<game>/episode_id=<id>/), a new folder written whole,
which qtc generate, qtc sql and DuckDB read in place.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

COMMAND = "load"
HELP = "load trace files into a DuckDB database"
EXAMPLES = """examples:
  qtc load traces/ --db traces.duckdb
  qtc load traces/zork1-walkthrough-s12.jsonl traces/crafter-scripted-s0.jsonl --db run.duckdb
  duckdb traces.duckdb "SELECT * FROM crafter_collections LIMIT 5"
  qtc load traces/ --parquet corpus/ && qtc generate --traces corpus/ --out qa.jsonl
  duckdb -c "SELECT * FROM read_parquet('corpus/crafter_steps/**/*.parquet', hive_partitioning = true) LIMIT 5"
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("traces", nargs="+", type=Path, metavar="TRACES",
                        help="trace files or folders of them")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--db", type=Path, metavar="FILE.duckdb", help="database to create or add to")
    target.add_argument("--parquet", type=Path, metavar="DIR",
                        help="a new folder to write the tables to as Parquet, by game and episode")


def run(args: argparse.Namespace) -> int:
    from qtc.runtime.trace.format import ADDED_HEADER_FIELDS
    from qtc.runtime.trace.lockdown import connect_memory
    from qtc.runtime.trace.parquet import check_new, write_corpus
    from qtc.runtime.trace.store import check_current, connect_database, load_traces

    if args.parquet:
        check_new(args.parquet)
    start = time.perf_counter()
    with connect_database(args.db) if args.db else connect_memory() as con:
        if args.db:  # episodes of an earlier qtc's rules are not mixed with this one's
            check_current(con, args.db, loading=True)
        report = load_traces(con, args.traces)
        if args.parquet:
            write_corpus(con, args.parquet)
    seconds = time.perf_counter() - start
    print(f"loaded {report.episodes} episode(s), {report.steps} steps into {args.db or args.parquet} in {seconds:.2f}s "
          f"({report.steps / seconds:.0f} steps/s)")
    for path in report.partial_skipped:
        print(f"skipped partial recording {path}")
    for name, paths in report.lacking.items():
        lack = next(added[name] for added in ADDED_HEADER_FIELDS.values() if name in added)
        print(f"{len(paths)} episode(s) recorded before the header field '{name}' existed (the first: {paths[0]}) "
              f"lack {lack}; record them again to have it")
    return 0
