"""Run an SQL query over trace files or a trace database and print the result as a table.

Trace files and folders are loaded into an in-memory store first; a .duckdb file made by
`qtc load` is opened read-only. Table names are those of dsl/schema.py (episodes, vocab,
jericho_steps, crafter_inventory, ...). The spatial primitives are registered as functions
qtc_<name>(episode_id, ...) (docs/spatial.md), so the SQL of every compiled template runs here.
"""

from __future__ import annotations

import argparse
from pathlib import Path

COMMAND = "sql"
HELP = "run ad hoc SQL over traces or a trace database"
EXAMPLES = """examples:
  qtc sql "SELECT episode_id, n_steps, ended_by FROM episodes" traces/
  qtc sql "SELECT step, action, room_after FROM jericho_steps WHERE moved LIMIT 10" traces.duckdb
  qtc sql "SELECT item, count(*) FROM crafter_collections GROUP BY item" traces/crafter-scripted-s0.jsonl
  qtc sql build/sql/crafter.route_to_nearest.sql traces.duckdb
  qtc sql "SELECT step, qtc_nearest_distance(episode_id, step, 'water', 'seen') FROM crafter_steps" traces/
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="the SQL statement, or a .sql file holding it (e.g. from qtc compile --emit-sql)")
    parser.add_argument("sources", nargs="+", type=Path, metavar="TRACES-or-DB",
                        help="trace files or folders, or one .duckdb database")
    parser.add_argument("--limit", type=int, default=100, help="rows to print at most (default 100)")


def run(args: argparse.Namespace) -> int:
    import duckdb
    from rich.console import Console
    from rich.table import Table

    from qtc.errors import UserError
    from qtc.runtime.trace.store import open_store

    query = args.query
    if query.endswith(".sql") and Path(query).is_file():
        query = Path(query).read_text(encoding="utf-8")
    con = open_store(*args.sources)
    try:
        try:
            result = con.execute(query)
            if result.description is None:
                return 0
            table = Table(*(d[0] for d in result.description))
            for row in result.fetchmany(args.limit):
                table.add_row(*("NULL" if v is None else str(v) for v in row))
            more = len(result.fetchall())
        except duckdb.Error as error:
            raise UserError(f"SQL error: {error}") from None
        Console().print(table)
        if more:
            print(f"({more} more rows not shown; use --limit)")
        return 0
    finally:
        con.close()
