"""The trace store: episodes loaded into the DuckDB tables declared in dsl/schema.py.

Every file is read and validated before anything is inserted, and then all of them are inserted in
one transaction, so a bad file loads nothing. DuckDB reads the step lines, into temporary tables of
a cursor of the loader's own: json_transform_strict reads each line into the types of its environment's
step spec (a missing field or a repeated key is an error there), json_structure shows which JSON types the
line held, and the rest of the spec is checked on what was read. Every table is then built from it.

A file with anything DuckDB does not vouch for, or might read otherwise than Python's json, goes to
the careful reader (format.read_episode), whose UserError names the file, the line and the field at
fault; a file the careful reader accepts is loaded from its steps as Python read them.

Each environment's tables are derived by its trace record (environment.py, registry.py: its tables' SQL
over the step lines, then what it derives otherwise), once, for every consumer; then the events of every
game (events.py). Nothing here knows one environment from another.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import duckdb
import pyarrow as pa

from qtc.dsl import schema
from qtc.dsl.events import KINDS as event_kinds, WHOLE_KINDS
from qtc.errors import UserError

from qtc.runtime.arrow import arrow_rows
from qtc.runtime.spatial.udf import register_primitives
from .consistency import check_consistency
from . import events
from .environment import arrow_table, structure_sql
from .frames import find_frames, record_frames
from . import lockdown
from .parquet import attach_corpus, is_corpus
from .format import (ADDED_HEADER_FIELDS, DERIVATIONS, TraceText, derived_by_other_rules, duckdb_checks_sql, read_text,
                     read_text_carefully, shape_fits, trace_files)
from .registry import TRACE_ENVIRONMENTS, by_environment

DB_SUFFIX = ".duckdb"
# A database file is written in DuckDB 1.4's storage format, which the released DuckDB CLIs open.
STORAGE_VERSION = "v1.4.0"
# What DuckDB's JSON reader accepts and Python's json does not, or reads otherwise: a trailing comma,
# NaN or Infinity (spelled in more ways); looked for outside strings, each string made empty (RE2).
_LENIENT = r"',\s*[\]}]|[:,\[]\s*-?(?i:na|in)'"
_STRING = r"""'"(?:[^"\\]|\\.)*"'"""


# ---- reading: the step lines of each env's files, read by DuckDB into the table <env>_lines ----

def _fits(shape: str, spec) -> bool:
    """Whether a line's JSON structure (DuckDB's json_structure) fits `spec`; a structure nested too deeply
    for Python to decode fits none (the line is then read carefully, and refused with its place)."""
    try:
        return shape_fits(json.loads(shape), spec)
    except RecursionError:
        return False


def _read_lines(reader: duckdb.DuckDBPyConnection, env: str, traces: dict[int, TraceText],
                as_written: bool = True) -> dict[int, int]:
    """Read the step lines of `traces` (by file number) into `<env>_lines` (file, line, rec); the first
    line of each file that does not pass every check, by file number. Lines written by Python's json
    (`as_written` false) are not looked at as text: DuckDB reads them as Python wrote them."""
    numbers, lines, texts = [], [], []
    for number, trace in traces.items():
        numbers += [number] * len(trace.steps)
        lines += range(2, len(trace.steps) + 2)
        texts += trace.steps
    reader.register("qtc_text", pa.table({"file": pa.array(numbers, pa.int64()), "line": pa.array(lines, pa.int64()),
                                          "text": pa.array(texts, pa.string())}))
    record = TRACE_ENVIRONMENTS[env]
    spec = record.step_spec
    reader.execute(f"CREATE OR REPLACE TEMP TABLE {env}_lines AS SELECT file, line, "
                   f"try(json_transform_strict(text, {structure_sql(spec)})) AS rec, try(json_structure(text)) AS shape, "
                   f"CASE WHEN regexp_matches(text, {_LENIENT}) "
                   f"THEN regexp_matches(regexp_replace(text, {_STRING}, '\"\"', 'g'), {_LENIENT}) END AS lenient "
                   "FROM qtc_text")
    reader.unregister("qtc_text")
    shapes = reader.execute(f"SELECT DISTINCT shape FROM {env}_lines WHERE shape IS NOT NULL").fetchall()
    fitting = [shape for (shape,) in shapes if _fits(shape, spec)]
    checks = ["rec IS NOT NULL", "list_contains($fitting, shape)", "rec.step = line - 1",
              duckdb_checks_sql("rec", spec) or "true"]
    if as_written:
        checks.append("lenient IS NOT true")
    checks += record.line_checks
    parameters = {"fitting": fitting, **record.line_parameters}
    failing = reader.execute(f"SELECT file, min(line) FROM {env}_lines "
                             f"WHERE NOT coalesce({' AND '.join(checks)}, false) GROUP BY file", parameters)
    return dict(failing.fetchall())


def _read(reader: duckdb.DuckDBPyConnection, files: list[Path]) -> list[TraceText]:
    """Every file read and validated, its steps read into `<env>_lines`; a UserError names the first
    fault, file by file and line by line, as read_episode would."""
    traces = [read_text(path) for path in files]

    def read_env(env: str, as_written: bool = True) -> dict[int, int]:
        return _read_lines(reader, env, {number: trace for number, trace in enumerate(traces)
                                         if trace is not None and trace.header["env"] == env}, as_written)
    envs = {trace.header["env"] for trace in traces if trace is not None}
    failing = {number: line for env in envs for number, line in read_env(env).items()}
    careful = set()
    for number, path in enumerate(files):
        if traces[number] is None or number in failing:
            traces[number] = read_text_carefully(path)
            careful.add(traces[number].header["env"])
    for env in careful:  # the files that passed above pass again
        for number, line in sorted(read_env(env, as_written=False).items())[:1]:
            raise UserError(f"{files[number]}:{line}: not read by DuckDB as written")
    return traces


# ---- building the tables from what was read ----

def _register_headers(reader: duckdb.DuckDBPyConnection, traces: list[TraceText]) -> None:
    """What the SQL reads from the headers: the files' episodes, then what each environment's tables read
    (its record's `register`)."""
    reader.register("files", pa.table({"file": pa.array(range(len(traces)), pa.int64()),
                                       "episode_id": pa.array([t.header["episode_id"] for t in traces], pa.string())}))
    for env, own in by_environment(traces).items():
        TRACE_ENVIRONMENTS[env].register(reader, own)


def _vocabulary(header: dict) -> dict[str, list[str]]:
    """A game's vocabulary (its record's), with the game's event kinds (dsl/events.py)."""
    env = header["env"]
    return {**TRACE_ENVIRONMENTS[env].vocabulary(header), "event": list(event_kinds[env]),
            "whole_event": list(WHOLE_KINDS[env])}


def _event_vocabulary(header: dict) -> dict[str, list[str]]:
    """The vocabulary event subjects are drawn from: the game's, with its rooms as events name them
    (events.event_subjects, which says from which step the episode met each)."""
    return {**_vocabulary(header), "room": TRACE_ENVIRONMENTS[header["env"]].room_subjects(header)}


def _header_rows(traces: list[TraceText]) -> dict[schema.Table, pa.Table]:
    """The tables that come from the headers alone."""
    headers = [trace.header for trace in traces]
    return {
        schema.EPISODES: arrow_table(schema.EPISODES, [
            (h["episode_id"], h["env"], h["game"], h["seed"], h["agent"], h["n_steps"], h["ended_by"], h["death_step"],
             h["death_cause"], h["format_version"]) for h in headers]),
        schema.VOCAB: arrow_table(schema.VOCAB, [(h["game"], kind, value) for h in headers
                                                  for kind, values in _vocabulary(h).items() for value in values]),
    }


def _tables(reader: duckdb.DuckDBPyConnection, traces: list[TraceText]) -> dict[schema.Table, pa.Table]:
    """Every table's rows, as Arrow tables."""
    _register_headers(reader, traces)
    check_consistency(reader, traces)
    tables = _header_rows(traces)
    own = by_environment(traces)
    for env, numbered in own.items():
        record = TRACE_ENVIRONMENTS[env]
        for table, sql in record.table_sql.items():
            tables[table] = arrow_rows(reader, sql)
        record.derive(reader, numbered, tables)
    if own:
        tables[schema.EVENTS] = events.events(reader, tables, set(own))
    tables[schema.EVENT_SUBJECTS] = arrow_table(schema.EVENT_SUBJECTS, events.event_subjects(
        [trace.header for trace in traces], _event_vocabulary, tables))
    return tables


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """The trace tables a database lacks, made in one transaction: a load killed meanwhile leaves all of
    them or none, never some (which check_current would take for an earlier qtc's store)."""
    con.begin()
    for statement in schema.ddl():
        con.execute(statement)
    con.commit()


@dataclass
class LoadReport:
    episodes: int
    steps: int
    partial_skipped: list[Path]
    # Traces recorded before a header field was added (format.ADDED_HEADER_FIELDS), by field.
    lacking: dict[str, list[Path]] = field(default_factory=dict)


def read_in_place(source: os.PathLike | str) -> bool:
    """Whether a source is a store read where it is (a .duckdb database, a Parquet corpus), not trace files."""
    return str(source).endswith(DB_SUFFIX) or is_corpus(source)


def episode_files(headers: Iterable[tuple[Path, dict]]) -> dict[str, Path]:
    """Each episode's file, from (file, header) pairs; a UserError if two files hold one episode."""
    seen: dict[str, Path] = {}
    for path, header in headers:
        eid = header["episode_id"]
        if eid in seen:
            raise UserError(f"{path}: episode '{eid}' is also in {seen[eid]}")
        seen[eid] = path
    return seen


def load_traces(con: duckdb.DuckDBPyConnection, paths: Iterable[os.PathLike | str]) -> LoadReport:
    """Validate every episode file under `paths`, then insert all of them in one transaction."""
    files, partial = trace_files(paths)
    with con.cursor() as reader:  # what it reads is gone when it closes
        traces = _read(reader, files)
        frames = find_frames(traces)
        create_tables(con)
        seen = episode_files((trace.path, trace.header) for trace in traces)
        if seen:
            existing = con.execute("SELECT episode_id FROM episodes WHERE episode_id IN (SELECT unnest(?))",
                                   [list(seen)]).fetchall()
            if existing:
                eid = existing[0][0]
                raise UserError(f"{seen[eid]}: episode '{eid}' is already loaded in this database")
        tables = _tables(reader, traces)
    con.begin()
    try:
        for table in schema.TABLES:
            batch = tables.get(table)
            if batch is None or not batch.num_rows:
                continue
            if table.per_game:
                # The vocabulary is per game: several episodes of one game share its rows.
                con.register("qtc_batch", batch)
                con.execute(f"INSERT INTO {table.sql_name} SELECT DISTINCT * FROM qtc_batch b "
                            f"WHERE NOT EXISTS (SELECT 1 FROM {table.sql_name} v WHERE "
                            "v.game = b.game AND v.kind = b.kind AND v.value = b.value)")
                con.unregister("qtc_batch")
            else:  # no view to make and drop
                con.from_arrow(batch).insert_into(table.sql_name)
        record_frames(con, frames)
        con.execute(f"COMMENT ON TABLE {schema.EPISODES.sql_name} IS '{DERIVATIONS_STAMP}'")
        con.commit()
    except BaseException:
        con.rollback()
        raise
    lacking = {name: [trace.path for trace in traces if name in trace.header and trace.header[name] is None]
               for name in sorted({name for added in ADDED_HEADER_FIELDS.values() for name in added})}
    return LoadReport(len(traces), sum(len(trace.steps) for trace in traces), partial,
                      {name: paths for name, paths in lacking.items() if paths})


def connect_database(path: os.PathLike | str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection to a database file (created if missing, unless read-only), in STORAGE_VERSION; it
    reads no other file, and a database holding anything but qtc's tables is refused (lockdown.py)."""
    config = {} if read_only else {"storage_compatibility_version": STORAGE_VERSION}
    return lockdown.connect_file(Path(path), read_only, config)


# Written on the episodes table of a database by every load (a comment: no object of its own).
DERIVATIONS_STAMP = f"qtc derivations {DERIVATIONS}"


def check_current(con: duckdb.DuckDBPyConnection, source: os.PathLike | str, loading: bool = False) -> None:
    """A UserError naming what a store made by an earlier qtc lacks (a table or column added since, all
    of them derived from the traces), rather than a query failing on it later, or saying that its rows
    were derived by other rules (its stamp, DERIVATIONS_STAMP, is another's); or, when nothing is to be
    loaded into it, saying that a database without the trace tables is no store."""
    present = {(table, column) for table, column in con.execute(
        "SELECT table_name, column_name FROM duckdb_columns()").fetchall()}
    tables = {table for table, _ in present}
    if schema.EPISODES.sql_name not in tables:
        if loading:
            return  # a new database: load_traces makes every table
        raise UserError(f"{source}: not a trace store (it has no table {schema.EPISODES.sql_name}): make one "
                        "with `qtc load`")
    missing = [t.sql_name if t.sql_name not in tables else f"{t.sql_name}.{c.name}"
               for t in schema.TABLES for c in t.all_columns if (t.sql_name, c.name) not in present]
    if missing:
        raise UserError(f"{source}: made by an earlier qtc, it lacks {', '.join(dict.fromkeys(missing))}: "
                        "load its traces again (all of these are derived from them)")
    stamped = con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = ?",
                          [schema.EPISODES.sql_name]).fetchall()  # none for a corpus: its marker is checked
    if stamped and stamped[0][0] != DERIVATIONS_STAMP and con.execute(
            f"SELECT count(*) FROM {schema.EPISODES.sql_name}").fetchall()[0][0]:
        raise derived_by_other_rules(source, "load its traces again into a new database")


def open_store(*sources: os.PathLike | str, db: os.PathLike | str | None = None,
               configure: Callable[[duckdb.DuckDBPyConnection], None] | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the trace tables and the episodes of `sources` loaded.

    A source ending in .duckdb is opened as the database itself (read-only when nothing is to be loaded
    into it); a folder written by `qtc load --parquet` is read in place (alone); other sources are trace
    files or folders. Without a database the store is in memory. The spatial primitives (qtc_<name>)
    are registered on it. DuckDB reads no file but the store's own (lockdown.py); `configure(con)` sets
    the connection's options (threads, limits) before they are locked. Close it when done.
    """
    corpora = [Path(s) for s in sources if is_corpus(s)]
    if corpora:
        if len(sources) > 1 or db is not None:
            raise UserError(f"{corpora[0]}: a Parquet corpus is read alone, without other traces or databases")
        con = lockdown.connect_memory(readable=corpora[0])
        try:
            attach_corpus(con, corpora[0])
            check_current(con, corpora[0])
        except BaseException:
            con.close()
            raise
        return _ready(con, configure)
    databases = [Path(s) for s in sources if str(s).endswith(DB_SUFFIX)]
    traces = [Path(s) for s in sources if not str(s).endswith(DB_SUFFIX)]
    if db is not None:
        databases.append(Path(db))
    if len(databases) > 1:
        raise UserError(f"more than one database given: {', '.join(map(str, databases))}")
    if databases and not traces and not databases[0].exists():
        raise UserError(f"{databases[0]}: no such database")
    con = connect_database(databases[0], read_only=not traces) if databases else lockdown.connect_memory()
    try:
        if databases:
            check_current(con, databases[0], loading=bool(traces))
        if traces or not databases:
            load_traces(con, traces)
    except BaseException:
        con.close()
        raise
    return _ready(con, configure)


def _ready(con: duckdb.DuckDBPyConnection, configure) -> duckdb.DuckDBPyConnection:
    """The store with its primitives registered, configured, its configuration locked."""
    try:
        # The domain sampler's ASOF joins (dsl/ir/sample.py) take thousands of draws on their left where
        # DuckDB estimates one row, so below this threshold it would compare every draw with every row on
        # the right (a nested loop: 8M rows for 13k draws on a 10,000-step episode): the real ASOF join.
        con.execute("SET asof_loop_join_threshold = 0")
        register_primitives(con)
        if configure is not None:
            configure(con)
        lockdown.lock(con)
    except BaseException:
        con.close()
        raise
    return con
