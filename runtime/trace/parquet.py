"""A corpus at rest as Parquet: every table of the store in a folder of its own, partitioned by game
and episode (`<table>/game=<game>/episode_id=<id>/*.parquet`; the vocabulary by game alone), which
DuckDB, `qtc generate`, `qtc sql` and any Parquet reader read where it lies.

`qtc load --parquet DIR` writes it (into a sibling folder first, renamed into place when complete);
open_store reads it through views, one per table, over the partition files. A folder is a corpus when
it holds MARKER, which names the tables and the trace format they were loaded from.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
from pathlib import Path

import duckdb

from qtc.dsl import schema
from qtc.dsl.sql import sql_string
from qtc.errors import UserError

from .format import DERIVATIONS, FORMAT_VERSION, derived_by_other_rules
from .frames import TABLE as FRAMES_TABLE, record_frames

MARKER = "qtc-corpus.json"
# Every table qtc makes in a store, in the order of dsl/schema.py, then where the frames are.
STORE_TABLES = (*(t.sql_name for t in schema.TABLES), FRAMES_TABLE)
_COLUMN = re.compile(r"[a-z_][a-z0-9_]*")  # how the store's columns are named (dsl/schema.py)


def is_corpus(path: os.PathLike | str) -> bool:
    return (Path(path) / MARKER).is_file()


def _tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Each physical table of the store and its columns, in order (the frames table too)."""
    return {name: [column for (column,) in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index", [name]).fetchall()]
        for name in STORE_TABLES}


def _partitions(columns: list[str]) -> list[str]:
    return ["game", "episode_id"] if "episode_id" in columns else ["game"]


def check_new(directory: Path) -> None:
    if directory.exists():
        raise UserError(f"{directory}: already exists; give a new folder (a corpus is written whole)")


def write_corpus(con: duckdb.DuckDBPyConnection, directory: Path) -> None:
    """Every table of `con` as Parquet under `directory`, which must not exist yet."""
    check_new(directory)
    staging = directory.with_name(f".{directory.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        tables = _tables(con)
        for name, columns in tables.items():
            # A table without the game has it from its episode, for the partition.
            rows = (f"SELECT * FROM {name}" if "game" in columns else
                    f"SELECT t.*, e.game FROM {name} t JOIN episodes e USING (episode_id)")
            con.execute(f"COPY ({rows}) TO {sql_string(str(staging / name))} "
                        f"(FORMAT parquet, PARTITION_BY ({', '.join(_partitions(columns))}))")
        rows = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in tables}
        (staging / MARKER).write_text(json.dumps({"format_version": FORMAT_VERSION, "derivations": DERIVATIONS,
                                                  "tables": tables, "rows": rows},
                                                 indent=1), encoding="utf-8")
        os.replace(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _marker_tables(directory: Path) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The tables of the corpus at `directory` and their columns, as its marker names them, checked to be
    qtc's tables and plain column names: they become a view's SQL and a folder's path, and a corpus is
    shared like a package; and the rows each table was written with (none in a corpus written before
    qtc counted them)."""
    path = directory / MARKER
    try:
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise UserError(f"{path}: cannot read the corpus marker ({error})") from None
    tables = marker.get("tables") if isinstance(marker, dict) else None
    if not isinstance(tables, dict):
        raise UserError(f"{path}: not a corpus marker written by `qtc load --parquet`")
    if marker.get("format_version") != FORMAT_VERSION:
        raise UserError(f"{directory}: a corpus of trace format {marker.get('format_version')!r}; this qtc reads "
                        f"{FORMAT_VERSION}: load the traces again")
    if marker.get("derivations") != DERIVATIONS:
        raise derived_by_other_rules(directory, "write the corpus again with `qtc load --parquet`")
    for name, columns in tables.items():
        if name not in STORE_TABLES:
            raise UserError(f"{path}: names a table {name!r}, which qtc does not make")
        if not isinstance(columns, list) or not all(isinstance(c, str) and _COLUMN.fullmatch(c) for c in columns):
            raise UserError(f"{path}: the columns of {name} are not a list of column names")
    rows = marker.get("rows", {})
    if not (isinstance(rows, dict) and rows.keys() <= tables.keys()
            and all(type(count) is int for count in rows.values())):
        raise UserError(f"{path}: 'rows' is not a count of rows for each of its tables")
    return tables, rows


def _check_rows(con: duckdb.DuckDBPyConnection, directory: Path, rows: dict[str, int]) -> None:
    """A UserError naming the first table whose rows are not those its corpus was written with: a
    partition lost or copied twice would change the QA set silently."""
    for name, expected in rows.items():
        try:
            (found,) = con.execute(f"SELECT count(*) FROM {name}").fetchone()
        except duckdb.Error as error:
            raise UserError(f"{directory / name}: not the Parquet qtc wrote: {str(error).splitlines()[0]}") from None
        if found != expected:
            raise UserError(f"{directory / name}: holds {found} rows, written with {expected}: a partition is missing "
                            "or repeated; write the corpus again with `qtc load --parquet`")


def attach_corpus(con: duckdb.DuckDBPyConnection, directory: Path) -> None:
    """Views of the corpus at `directory` under the store's table names (an empty table where a table
    has no rows, as Parquet holds no file for it)."""
    tables, rows = _marker_tables(directory)
    declared = {t.sql_name: t for t in schema.TABLES}
    # DuckDB reads the path as a glob: the folder's own name is escaped ('[' and '*' in it are characters).
    root = glob.escape(os.path.abspath(directory))
    for name, columns in tables.items():
        files = os.path.join(root, name, "**", "*.parquet")
        if any((directory / name).glob("**/*.parquet")):
            selected = ", ".join(f'"{c}"' for c in columns)
            # Every table is partitioned by game, and by episode where it has one (_partitions); the
            # partitions read as text, never an episode id as a number.
            types = "{" + ", ".join(f"'{c}': VARCHAR" for c in _partitions(columns)) + "}"
            try:
                con.execute(f"CREATE VIEW {name} AS SELECT {selected} FROM read_parquet({sql_string(files)}, "
                            f"hive_partitioning = true, hive_types = {types})")
            except duckdb.Error as error:  # a corrupted file, another schema
                raise UserError(f"{directory / name}: not the Parquet qtc wrote: {str(error).splitlines()[0]}") from None
        elif name in declared:
            con.execute(schema.table_ddl(declared[name]))
        else:
            record_frames(con, [])
    for name in sorted(declared.keys() - tables.keys()):  # a table added since the corpus was written
        con.execute(schema.table_ddl(declared[name]))
    _check_rows(con, directory, rows)
