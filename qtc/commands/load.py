"""Load recorded episodes into a DuckDB trace database (the tables of dsl/schema.py).

Every file is validated before anything is inserted, and all of them are inserted in one
transaction: a malformed file (named with its line and field) loads nothing. Partial recordings
(*.jsonl.partial, left by a crash) are skipped and reported.
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
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("traces", nargs="+", type=Path, metavar="TRACES",
                        help="trace files or folders of them")
    parser.add_argument("--db", type=Path, required=True, metavar="FILE.duckdb",
                        help="database to create or add to")


def run(args: argparse.Namespace) -> int:
    from qtc.runtime.trace.store import connect_database, load_traces

    start = time.perf_counter()
    with connect_database(args.db) as con:
        report = load_traces(con, args.traces)
    seconds = time.perf_counter() - start
    print(f"loaded {report.episodes} episode(s), {report.steps} steps into {args.db} in {seconds:.2f}s "
          f"({report.steps / seconds:.0f} steps/s)")
    for path in report.partial_skipped:
        print(f"skipped partial recording {path}")
    return 0
