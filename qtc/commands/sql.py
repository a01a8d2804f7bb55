"""Run an SQL query over trace files or a trace database and print the result as a table.

Trace files and folders are loaded into an in-memory store first; a .duckdb file made by
`qtc load` is opened read-only. Table names are those of dsl/schema.py (episodes, vocab,
jericho_steps, crafter_inventory, ...). The spatial primitives are registered as functions
qtc_<name>(episode_id, ...) (docs/spatial.md), so the SQL of every compiled template runs here.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
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
    parser.add_argument("query", help="the SQL statements (separated by ';'), or a .sql file holding them "
                                      "(e.g. from qtc compile --emit-sql)")
    parser.add_argument("sources", nargs="+", type=Path, metavar="TRACES-or-DB",
                        help="trace files or folders, or one .duckdb database")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table: DuckDB's own rendering, with column types (default); csv, json (one "
                             "object a line) or markdown, for other tools")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="rows to print at most per statement (default: 100 for a table, all otherwise)")


FORMATS = ("table", "csv", "json", "markdown")
TABLE_ROWS = 100


def run(args: argparse.Namespace) -> int:
    import duckdb

    from qtc.errors import UserError
    from qtc.runtime.trace.store import open_store

    query = args.query
    if query.strip().endswith(".sql") and "\n" not in query.strip():
        path = Path(query.strip())
        if not path.is_file():
            raise UserError(f"{path}: no such file")
        query = path.read_text(encoding="utf-8")
    limit = args.limit if args.limit is not None else TABLE_ROWS if args.format == "table" else None
    if limit is not None and limit < 0:
        raise UserError(f"--limit must not be negative, got {limit}")
    con = open_store(*args.sources)
    try:
        try:
            statements = con.extract_statements(query)
            for statement in statements:
                relation = con.sql(statement.query)
                # Rows are printed for statements that only give rows (queries, PRAGMA, DESCRIBE); a SET,
                # CREATE or INSERT runs silently.
                if relation is not None and statement.expected_result_type == [duckdb.ExpectedResultType.QUERY_RESULT]:
                    _print(con, relation, args.format, limit)
        except duckdb.Error as error:
            raise UserError(f"SQL error: {error}") from None
        return 0
    finally:
        con.close()


def _print(con, relation, form: str, limit: int | None) -> None:
    """One statement's rows in `form`: at most `limit` of them, then a line saying more were left out."""
    table = (relation if limit is None else relation.limit(limit + 1)).to_arrow_table()
    more = limit is not None and table.num_rows > limit
    if more:
        table = table.slice(0, limit)
    if form == "table":
        con.from_arrow(table).show(max_width=1_000_000, max_rows=max(table.num_rows, 1))
    else:
        sys.stdout.write(RENDERERS[form](table))
    if more:
        print("(more rows not shown; use --limit)", file=sys.stderr)


def _csv(table) -> str:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(table.column_names)
    writer.writerows(["" if v is None else v for v in row.values()] for row in table.to_pylist())
    return text.getvalue()


def _json(table) -> str:
    from qtc.files import jsonl_line

    return "".join(jsonl_line(json.loads(json.dumps(row, default=str))) for row in table.to_pylist())


def _markdown(table) -> str:
    def cell(value) -> str:
        return "NULL" if value is None else str(value).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(table.column_names) + " |", "|" + "---|" * len(table.column_names)]
    lines += ["| " + " | ".join(cell(v) for v in row.values()) + " |" for row in table.to_pylist()]
    return "\n".join(lines) + "\n\n"


RENDERERS = {"csv": _csv, "json": _json, "markdown": _markdown}
