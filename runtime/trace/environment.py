"""What the trace stage holds of one environment (docs/architecture.md, Adding an environment): a
`TraceEnvironment` record, written in the environment's own module (`jericho.py`, `crafter.py`,
`textworld.py`) and listed in `registry.py`. The reader (format.py), the consistency checks, the store
and the events read its fields and never compare an environment's name. Beside it, the pieces the records
share: the step line's spec from the steps table, the header fields every game has, and the SQL helpers
over the step lines the store reads (`<env>_lines`: file, line, rec) and the files they come from.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import duckdb
import pyarrow as pa

from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.runtime.arrow import arrow_type


def _nothing(*_) -> None:
    return None


@dataclass(frozen=True)
class TraceEnvironment:
    """An environment's trace: how its lines are read and checked, and how its tables are derived.

    Every callable receives what the stage hands every environment: `traces`, the environment's own
    traces (format.py's TraceText) by file number as the `files` table numbers them; `tables`, the store's
    Arrow tables by schema table; `reader`, the loader's DuckDB cursor (where `<env>_lines` and `files` are)."""
    name: str  # as dsl/schema.py's ENVIRONMENTS names it
    # A step line's fields (format.py's field specs): the recorded columns of its steps table and any
    # per-step state besides; the header's fields.
    step_spec: dict
    header_spec: dict
    # Header fields added to format version 1 after its first traces, with what a trace lacking one lacks
    # (it reads as null, and `qtc load` says so).
    added_header_fields: dict[str, str] = field(default_factory=dict)
    # check_header(header, where) and check_step(step, where): what a header or a step holds beyond its
    # fields' types, raised as a UserError naming `where` (the file and line).
    check_header: Callable[[dict, str], None] = _nothing
    check_step: Callable[[dict, str], None] = _nothing
    # check_step's twin for the lines DuckDB reads: conditions on `rec`, with their parameters.
    line_checks: tuple[str, ...] = ()
    line_parameters: dict = field(default_factory=dict)
    # consistency.py: check_trace(trace) the trace as a whole, from its header; check_lines(reader, traces)
    # across the lines the reader holds (after `register`). UserErrors naming file, line and field.
    check_trace: Callable = _nothing
    check_lines: Callable = _nothing
    # register(reader, traces): what its SQL reads from the headers of its traces.
    register: Callable = _nothing
    # Each table's rows, as SQL over the registered tables (in the table's all_columns order, but for
    # columns `derive` adds).
    table_sql: dict[schema.Table, str] = field(default_factory=dict)
    # derive(reader, traces, tables): the rows and columns derived otherwise, put into `tables`.
    derive: Callable = _nothing
    # vocabulary(header): the game's vocabulary by kind (the event kinds are added by the store);
    # room_subjects(header): the rooms events name, as their subjects (a room_entered of "Kitchen").
    vocabulary: Callable[[dict], dict[str, list[str]]] = lambda header: {}
    room_subjects: Callable[[dict], list[str]] = lambda header: []
    # events.py: each kind's rows (episode_id, step, subject) as SQL over the store's tables, one per kind
    # of dsl/events.py in its order, with the parameters they take.
    event_sql: dict[str, str] = field(default_factory=dict)
    event_parameters: dict = field(default_factory=dict)
    # met_names(headers, tables, add): each name its episodes met, add(episode, name, step) at the step met;
    # shown_first(tables): per episode, what its first view showed (seen, never first seen at a step).
    met_names: Callable = _nothing
    shown_first: Callable[[dict], dict[str, set[str]]] = lambda tables: {}
    # Plausible subjects of kinds whose subjects come from no vocabulary, by kind.
    fixed_subjects: dict[str, tuple[str, ...]] = field(default_factory=dict)


# ---- the spec pieces every game's records share ----

_STORAGE_SPECS = {"BIGINT": "int", "DOUBLE": "float", "BOOLEAN": "bool", "VARCHAR": "str"}


def _column_spec(column: schema.Column, nullable: frozenset[str]):
    type_ = column.type
    spec = ("list", _STORAGE_SPECS[type_.element.storage]) if isinstance(type_, T.ListOf) else \
        _STORAGE_SPECS[type_.storage]
    return ("null", spec) if column.name in nullable else spec


def step_spec(table: schema.Table, nullable: frozenset[str], extra: dict) -> dict:
    """A step line holds the columns of the env's `steps` table, plus the per-step state of `extra`."""
    return {**{c.name: _column_spec(c, nullable) for c in table.recorded_columns}, **extra}


HEADER_COMMON = {
    "format": "str", "format_version": "int", "episode_id": "str", "env": "str", "game": "str",
    "seed": "int", "agent": "str", "n_steps": "int", "ended_by": "str", "death_step": ("null", "int"),
    "death_cause": ("null", "str"), "vocab": ("dict", ("list", "str")),
}
ROOM_SPEC = {"room": "int", "name": "str", "display_name": "str"}


def duckdb_structure(spec):
    """The structure json_transform_strict reads a value of `spec` into. An object with any keys
    (a "dict" spec) stays JSON text."""
    if isinstance(spec, dict):
        return {name: duckdb_structure(sub) for name, sub in spec.items()}
    if isinstance(spec, tuple):
        kind, sub = spec
        return {"null": duckdb_structure(sub), "list": [duckdb_structure(sub)], "dict": "JSON"}[kind]
    return {"int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN", "str": "VARCHAR", "any": "JSON"}[spec]


def structure_sql(spec) -> str:
    """duckdb_structure as an SQL literal."""
    return "'" + json.dumps(duckdb_structure(spec)).replace("'", "''") + "'"


def arrow_table(table: schema.Table, rows: list[tuple]) -> pa.Table:
    """Rows built in Python (those that come from headers, or replays), in the table's all_columns order."""
    arrow_schema = pa.schema([(c.name, arrow_type(c.type)) for c in table.all_columns])
    columns = list(zip(*rows)) if rows else [()] * len(arrow_schema)
    return pa.Table.from_arrays([pa.array(column, type=f.type) for column, f in zip(columns, arrow_schema)],
                                schema=arrow_schema)


# ---- SQL over the step lines ----

def steps_sql(table: schema.Table) -> str:
    """An env's steps table (`table.env`'s): the recorded columns of each of its step lines."""
    columns = ", ".join(f's.rec."{c.name}"' for c in table.recorded_columns)
    return f"SELECT f.episode_id, {columns} FROM {table.env}_lines s JOIN files f USING (file) ORDER BY s.file, s.line"


def events_sql(select: str, source: str, order: str) -> str:
    """Rows of `select` over `source` (with a file column), with the episode, ordered."""
    return f"SELECT f.episode_id, {select} FROM ({source}) s JOIN files f USING (file) ORDER BY s.file, {order}"


def listed(source: str, columns: str, values: str, name: str, position: str = "i") -> str:
    """`columns` of `source` beside each element of its list `values` and the element's position (from 1)."""
    return f"SELECT {columns}, unnest({values}) AS {name}, generate_subscripts({values}, 1) AS {position} FROM {source}"


@contextmanager
def registered(reader: duckdb.DuckDBPyConnection, tables: dict[schema.Table, pa.Table], sql: str):
    """The store's tables that `sql` names, as views of `reader` by their DuckDB names, while it runs (a
    view costs half a millisecond to make and drop: a store has some twenty tables, a statement reads a few)."""
    words = set(re.findall(r"\w+", sql))
    named = [table for table in tables if table.sql_name in words]
    for table in named:
        # Named by the schema (the store's SQL leaves some unnamed); a steps table may be read before its
        # last columns are added.
        rows = tables[table]
        reader.register(table.sql_name, rows.rename_columns([c.name for c in table.all_columns][:rows.num_columns]))
    try:
        yield
    finally:
        for table in named:
            reader.unregister(table.sql_name)
