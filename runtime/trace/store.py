"""The trace store: episodes loaded into the DuckDB tables declared in dsl/schema.py.

Every file is read and validated first (trace_format.read_episode); the rows of all of them are then
built column-wise, handed to DuckDB as Arrow tables and inserted in one transaction, so a bad file
loads nothing. Derived event tables (items gained and lost, rooms entered and left, achievements,
collections, damage) are computed here from the recorded state, once, for every consumer.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import duckdb
import pyarrow as pa

from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.errors import UserError

from qtc.dsl import crafter_data
from qtc.runtime.spatial.udf import register_primitives
from .format import Episode, read_episode, trace_files

DB_SUFFIX = ".duckdb"
_ARROW_TYPES = {"BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(), "VARCHAR": pa.string()}


def _arrow_type(type_: T.Type) -> pa.DataType:
    if isinstance(type_, T.ListOf):
        return pa.list_(_ARROW_TYPES[type_.element.storage])
    return _ARROW_TYPES[type_.storage]


class Rows:
    """Rows of every physical table, accumulated column-wise (the table's all_columns order)."""

    def __init__(self):
        self._columns: dict[str, list[list]] = {}

    def add(self, table: schema.Table, *values) -> None:
        columns = self._columns.setdefault(table.sql_name, [[] for _ in table.all_columns])
        for column, value in zip(columns, values, strict=True):
            column.append(value)

    def arrow(self, table: schema.Table) -> pa.Table | None:
        columns = self._columns.get(table.sql_name)
        if not columns:
            return None
        arrow_schema = pa.schema([(c.name, _arrow_type(c.type)) for c in table.all_columns])
        return pa.Table.from_arrays([pa.array(v, type=f.type) for v, f in zip(columns, arrow_schema)],
                                    schema=arrow_schema)

    def count(self, table: schema.Table) -> int:
        columns = self._columns.get(table.sql_name)
        return len(columns[0]) if columns else 0


def _episode_rows(rows: Rows, episode: Episode) -> None:
    h = episode.header
    rows.add(schema.EPISODES, h["episode_id"], h["env"], h["game"], h["seed"], h["agent"], h["n_steps"],
             h["ended_by"], h["death_step"], h["death_cause"], h["format_version"])
    for kind, values in h["vocab"].items():
        for value in values:
            rows.add(schema.VOCAB, h["game"], kind, value)


def _jericho_rows(rows: Rows, episode: Episode) -> None:
    eid = episode.header["episode_id"]
    step_columns = [c.name for c in schema.JERICHO_STEPS.columns]
    for room in episode.header["rooms"]:
        rows.add(schema.JERICHO_ROOMS, eid, room["room"], room["name"], room["display_name"])
    rows.add(schema.JERICHO_ROOM_EVENTS, eid, 0, episode.header["initial"]["room"], "entered")
    for s in episode.steps:
        rows.add(schema.JERICHO_STEPS, eid, *(s[name] for name in step_columns))
        before, after = Counter(s["inventory_before"]), Counter(s["inventory_after"])
        for change, items in (("gained", after - before), ("lost", before - after)):
            for item in sorted(items.elements()):
                rows.add(schema.JERICHO_ITEM_EVENTS, eid, s["step"], item, change, s["room_before"])
        if s["room_before"] != s["room_after"]:
            rows.add(schema.JERICHO_ROOM_EVENTS, eid, s["step"], s["room_before"], "left")
            rows.add(schema.JERICHO_ROOM_EVENTS, eid, s["step"], s["room_after"], "entered")


def _crafter_state_rows(rows: Rows, eid: str, step: int, state: dict) -> None:
    """The per-step state tables (inventory, view, creatures) after `step`; step 0 is the reset state."""
    for item, count in state["inventory"].items():
        rows.add(schema.CRAFTER_INVENTORY, eid, step, item, count)
    view = state["view"]
    for j, row in enumerate(view["rows"]):
        for i, material in enumerate(row):
            if material is not None:
                rows.add(schema.CRAFTER_VIEW, eid, step, view["x"] + i, view["y"] + j, material)
    for c in state["creatures"]:
        rows.add(schema.CRAFTER_CREATURES, eid, step, c["creature"], c["x"], c["y"], c["health"])


def _crafter_rows(rows: Rows, episode: Episode) -> None:
    h = episode.header
    eid = h["episode_id"]
    where = f"{episode.path}:1"
    materials = h["map_init"]["materials"]
    for y, row in enumerate(h["map_init"]["rows"]):
        for x, index in enumerate(row):
            if not 0 <= index < len(materials) or materials[index] is None:
                raise UserError(f"{where}: field 'map_init.rows[{y}][{x}]': no material has index {index}")
            rows.add(schema.CRAFTER_MAP_INIT, eid, x, y, materials[index])
    step_columns = [c.name for c in schema.CRAFTER_STEPS.columns]
    _crafter_state_rows(rows, eid, 0, h["initial"])
    inventory = h["initial"]["inventory"]
    achieved: set[str] = set()
    for s in episode.steps:
        step = s["step"]
        rows.add(schema.CRAFTER_STEPS, eid, *(s[name] for name in step_columns))
        _crafter_state_rows(rows, eid, step, s)
        for item in crafter_data.INVENTORY_KEYS:
            change = s["inventory"].get(item, 0) - inventory.get(item, 0)
            if change:
                rows.add(schema.CRAFTER_ITEM_EVENTS, eid, step, item, "gained" if change > 0 else "lost",
                         abs(change))
        inventory = s["inventory"]
        for achievement in s["achievements"]:
            rows.add(schema.CRAFTER_ACHIEVEMENTS, eid, step, achievement, achievement not in achieved)
            achieved.add(achievement)
            item = achievement.removeprefix("collect_")
            if item != achievement:
                rows.add(schema.CRAFTER_COLLECTIONS, eid, step, item, crafter_data.COLLECTED_FROM[item])
        for c in s["map_changes"]:
            rows.add(schema.CRAFTER_MAP_CHANGES, eid, step, c["x"], c["y"], c["before"], c["after"])
        for d in s["damage"]:
            rows.add(schema.CRAFTER_DAMAGE, eid, step, d["amount"], d["cause"], d["attack"])


_ENV_ROWS = {"jericho": _jericho_rows, "crafter": _crafter_rows}


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    for statement in schema.ddl():
        con.execute(statement)


@dataclass
class LoadReport:
    episodes: int
    steps: int
    partial_skipped: list[Path]


def load_traces(con: duckdb.DuckDBPyConnection, paths: Iterable[os.PathLike | str]) -> LoadReport:
    """Validate every episode file under `paths`, then insert all of them in one transaction."""
    files, partial = trace_files(paths)
    episodes = [read_episode(path) for path in files]
    create_tables(con)
    seen: dict[str, Path] = {}
    for episode in episodes:
        eid = episode.header["episode_id"]
        if eid in seen:
            raise UserError(f"{episode.path}: episode '{eid}' is also in {seen[eid]}")
        seen[eid] = episode.path
    if seen:
        existing = con.execute("SELECT episode_id FROM episodes WHERE episode_id IN (SELECT unnest(?))",
                               [list(seen)]).fetchall()
        if existing:
            eid = existing[0][0]
            raise UserError(f"{seen[eid]}: episode '{eid}' is already loaded in this database")
    rows = Rows()
    for episode in episodes:
        _episode_rows(rows, episode)
        _ENV_ROWS[episode.header["env"]](rows, episode)
    con.begin()
    try:
        for table in schema.TABLES:
            batch = rows.arrow(table)
            if batch is None:
                continue
            con.register("qtc_batch", batch)
            if table.per_game:
                # The vocabulary is per game: several episodes of one game share its rows.
                con.execute(f"INSERT INTO {table.sql_name} SELECT DISTINCT * FROM qtc_batch b "
                            f"WHERE NOT EXISTS (SELECT 1 FROM {table.sql_name} v WHERE "
                            "v.game = b.game AND v.kind = b.kind AND v.value = b.value)")
            else:
                con.execute(f"INSERT INTO {table.sql_name} SELECT * FROM qtc_batch")
            con.unregister("qtc_batch")
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return LoadReport(len(episodes), sum(len(e.steps) for e in episodes), partial)


def open_store(*sources: os.PathLike | str, db: os.PathLike | str | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the trace tables and the episodes of `sources` loaded.

    A source ending in .duckdb is opened as the database itself (read-only when nothing is to be loaded
    into it); other sources are trace files or folders. Without a database the store is in memory.
    The spatial primitives (qtc_<name>) are registered on it. Close it when done.
    """
    databases = [Path(s) for s in sources if str(s).endswith(DB_SUFFIX)]
    traces = [Path(s) for s in sources if not str(s).endswith(DB_SUFFIX)]
    if db is not None:
        databases.append(Path(db))
    if len(databases) > 1:
        raise UserError(f"more than one database given: {', '.join(map(str, databases))}")
    if databases and not traces and not databases[0].exists():
        raise UserError(f"{databases[0]}: no such database")
    try:
        con = duckdb.connect(str(databases[0]) if databases else ":memory:",
                             read_only=bool(databases) and not traces)
    except duckdb.Error as error:
        raise UserError(f"{databases[0]}: cannot open database: {error}") from None
    if traces or not databases:
        load_traces(con, traces)
    register_primitives(con)
    return con

