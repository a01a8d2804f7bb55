"""The trace store: episodes loaded into the DuckDB tables declared in dsl/schema.py.

Every file is read and validated before anything is inserted, and then all of them are inserted in
one transaction, so a bad file loads nothing. DuckDB reads the step lines, into temporary tables of
a cursor of the loader's own: json_transform_strict reads each line into the types of format.STEP_SPECS (a missing
field or a repeated key is an error there), json_structure shows which JSON types the line held, and
the rest of the spec is checked on what was read. Every table is then built in SQL from it.

A file with anything DuckDB does not vouch for, or might read otherwise than Python's json, goes to
the careful reader (format.read_episode), whose UserError names the file, the line and the field at
fault; a file the careful reader accepts is loaded from its steps as Python read them.

Derived event tables (items gained and lost, rooms entered and left, achievements, collections,
damage) are computed here from the recorded state, once, for every consumer.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import duckdb
import pyarrow as pa

from qtc.dsl import crafter_data, room_names, schema
from qtc.dsl.conventions import command, command_direction, named_item_steps
from qtc.dsl.events import KINDS as event_kinds, WHOLE_KINDS
from qtc.dsl import types as T
from qtc.errors import UserError

from qtc.runtime.spatial.udf import register_primitives
from .consistency import check_consistency
from .crafter_rules import RULES, register_rules, rule_columns, rule_rows_sql, rule_tables
from . import events
from .changes import with_changed
from .frames import find_frames, record_frames
from . import lockdown
from .objects import LOCATIONS_SQL, OBJECTS_SQL, introduced_items, register_objects, sightings
from . import textworld
from .parquet import attach_corpus, is_corpus
from .format import (ADDED_HEADER_FIELDS, DERIVATIONS, HEADER_SPECS, STEP_SPECS, TraceText, duckdb_checks_sql,
                     duckdb_structure, read_text, read_text_carefully, shape_fits, trace_files)

DB_SUFFIX = ".duckdb"
# A database file is written in DuckDB 1.4's storage format, which the released DuckDB CLIs open.
STORAGE_VERSION = "v1.4.0"
_ARROW_TYPES = {"BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(), "VARCHAR": pa.string()}


def _arrow_type(type_: T.Type) -> pa.DataType:
    if isinstance(type_, T.ListOf):
        return pa.list_(_ARROW_TYPES[type_.element.storage])
    return _ARROW_TYPES[type_.storage]


def _arrow_table(table: schema.Table, rows: list[tuple]) -> pa.Table:
    """Rows built in Python (the few that come from headers), in the table's all_columns order."""
    arrow_schema = pa.schema([(c.name, _arrow_type(c.type)) for c in table.all_columns])
    columns = list(zip(*rows)) if rows else [()] * len(arrow_schema)
    return pa.Table.from_arrays([pa.array(column, type=f.type) for column, f in zip(columns, arrow_schema)],
                                schema=arrow_schema)


# What DuckDB's JSON reader accepts and Python's json does not, or reads otherwise: a trailing comma,
# NaN or Infinity (spelled in more ways); looked for outside strings, each string made empty (RE2).
_LENIENT = r"',\s*[\]}]|[:,\[]\s*-?(?i:na|in)'"
_STRING = r"""'"(?:[^"\\]|\\.)*"'"""


_COLLECTIONS_KNOWN = ("coalesce(list_bool_and(list_transform(rec.achievements, lambda a: "
                      "NOT starts_with(a, 'collect_') OR list_contains($collected, substr(a, 9)))), true)")


def _structure(spec) -> str:
    """duckdb_structure as an SQL literal."""
    return "'" + json.dumps(duckdb_structure(spec)).replace("'", "''") + "'"


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
    spec = STEP_SPECS[env]
    reader.execute(f"CREATE OR REPLACE TEMP TABLE {env}_lines AS SELECT file, line, "
                   f"try(json_transform_strict(text, {_structure(spec)})) AS rec, try(json_structure(text)) AS shape, "
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
    parameters = {"fitting": fitting}
    if env == "crafter":  # the store records what each collection was collected from
        checks.append(_COLLECTIONS_KNOWN)
        parameters["collected"] = sorted(crafter_data.COLLECTED_FROM)
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

def _steps_sql(table: schema.Table, env: str) -> str:
    columns = ", ".join(f's.rec."{c.name}"' for c in table.recorded_columns)
    return f"SELECT f.episode_id, {columns} FROM {env}_lines s JOIN files f USING (file) ORDER BY s.file, s.line"


def _events_sql(select: str, source: str, order: str) -> str:
    """Rows of `select` over `source` (with a file column), with the episode, ordered."""
    return f"SELECT f.episode_id, {select} FROM ({source}) s JOIN files f USING (file) ORDER BY s.file, {order}"


def _listed(source: str, columns: str, values: str, name: str, position: str = "i") -> str:
    """`columns` of `source` beside each element of its list `values` and the element's position (from 1)."""
    return f"SELECT {columns}, unnest({values}) AS {name}, generate_subscripts({values}, 1) AS {position} FROM {source}"


def _step_list(values: str, name: str) -> str:
    """Each element of a list of the Crafter step lines, with the file, the step and its position."""
    return _listed("crafter_lines", "file, rec.step AS step", f"rec.{values}", name)


_CHANGED = "rec.room_before != rec.room_after"


def _item_events_sql(env: str) -> str:
    """A text game's items gained and lost, from each step's inventories before and after."""
    return _events_sql(
        "step, item, CASE WHEN amount > 0 THEN 'gained' ELSE 'lost' END, room",
        "SELECT *, unnest(range(abs(amount))) FROM (SELECT file, step, room, item, sum(amount)::BIGINT AS amount FROM ("
        "SELECT file, rec.step AS step, rec.room_before AS room, unnest(rec.inventory_after) AS item, 1 AS amount "
        f"FROM {env}_lines UNION ALL "
        f"SELECT file, rec.step, rec.room_before, unnest(rec.inventory_before), -1 FROM {env}_lines) "
        "GROUP BY ALL HAVING sum(amount) != 0)",
        "step, amount < 0, item")


def _room_events_sql(env: str) -> str:
    """A text game's rooms entered and left: the start room at step 0, then each step that changed the room."""
    return _events_sql(
        "step, room, change",
        f"SELECT file, 0 AS step, room, 'entered' AS change, 0 AS k FROM {env}_start UNION ALL "
        f"SELECT file, rec.step, rec.room_before, 'left', 1 FROM {env}_lines WHERE {_CHANGED} UNION ALL "
        f"SELECT file, rec.step, rec.room_after, 'entered', 2 FROM {env}_lines WHERE {_CHANGED}",
        "step, k")


_INVENTORIES = ("SELECT file, step, unnest(json_keys(inventory)) AS item, "
                "unnest(json_extract(inventory, '$.*'))::BIGINT AS count, "
                "generate_subscripts(json_keys(inventory), 1) AS i FROM crafter_states")
_ACHIEVEMENTS = _step_list("achievements", "achievement")
_VIEW_ROWS = _listed("crafter_states", "file, step, view.x AS x, view.y AS y", "view.rows", "row", "j")
_MAP_ROWS = _listed("crafter_map_read", "file, materials", "rows", "row", "y")

TABLE_SQL = {
    schema.JERICHO_STEPS: _steps_sql(schema.JERICHO_STEPS, "jericho"),
    schema.JERICHO_ITEM_EVENTS: _item_events_sql("jericho"),
    schema.JERICHO_ROOM_EVENTS: _room_events_sql("jericho"),
    schema.TEXTWORLD_STEPS: _steps_sql(schema.TEXTWORLD_STEPS, "textworld"),
    schema.TEXTWORLD_ITEM_EVENTS: _item_events_sql("textworld"),
    schema.TEXTWORLD_ROOM_EVENTS: _room_events_sql("textworld"),
    schema.CRAFTER_MAP_INIT: _events_sql("x, y, material", "SELECT * FROM crafter_map_cells", "y, x"),
    schema.CRAFTER_STEPS: _steps_sql(schema.CRAFTER_STEPS, "crafter"),
    schema.CRAFTER_INVENTORY: _events_sql("step, item, count", _INVENTORIES, "step, i"),
    schema.CRAFTER_VIEW: _events_sql(
        "step, x + i - 1, y + j - 1, material",
        f"SELECT * FROM ({_listed(f'({_VIEW_ROWS})', 'file, step, x, y, j', 'row', 'material')}) "
        "WHERE material IS NOT NULL",
        "step, j, i"),
    schema.CRAFTER_CREATURES: _events_sql("step, c.creature, c.x, c.y, c.health",
                                          _listed("crafter_states", "file, step", "creatures", "c"), "step, i"),
    schema.CRAFTER_MAP_CHANGES: _events_sql("step, c.x, c.y, c.before, c.after", _step_list("map_changes", "c"),
                                            "step, i"),
    schema.CRAFTER_ACHIEVEMENTS: _events_sql(
        "step, achievement, row_number() OVER (PARTITION BY s.file, achievement ORDER BY step, i) = 1",
        _ACHIEVEMENTS, "step, i"),
    schema.CRAFTER_COLLECTIONS: _events_sql(
        "step, item, material",
        f"SELECT a.*, c.item, c.material FROM ({_ACHIEVEMENTS}) a JOIN collected_from c "
        "ON a.achievement = 'collect_' || c.item", "step, i"),
    schema.CRAFTER_ITEM_EVENTS: _events_sql(
        "step, item, CASE WHEN change > 0 THEN 'gained' ELSE 'lost' END, abs(change)",
        f"WITH inventories AS ({_INVENTORIES}) "
        "SELECT * FROM (SELECT s.file, s.step, k.item, k.k, "
        "coalesce(now.count, 0) - coalesce(before.count, 0) AS change "
        "FROM (SELECT file, rec.step AS step FROM crafter_lines) s CROSS JOIN inventory_keys k "
        "LEFT JOIN inventories now ON now.file = s.file AND now.step = s.step AND now.item = k.item "
        "LEFT JOIN inventories before ON before.file = s.file AND before.step = s.step - 1 AND before.item = k.item) "
        "WHERE change != 0",
        "step, k"),
    schema.CRAFTER_DAMAGE: _events_sql("step, d.amount, d.cause, d.attack", _step_list("damage", "d"), "step, i"),
    **{table: _events_sql(", ".join(rule_columns(table)), rule_rows_sql(table), "k") for table in RULES},
}


def _register_headers(reader: duckdb.DuckDBPyConnection, traces: list[TraceText]) -> None:
    """What the SQL reads from the headers and from Crafter's data: the files' episodes, the state
    before step 1, the map at reset (checked: each cell names a material)."""
    headers = [trace.header for trace in traces]
    reader.register("files", pa.table({"file": pa.array(range(len(headers)), pa.int64()),
                                       "episode_id": pa.array([h["episode_id"] for h in headers], pa.string())}))
    by_env = {env: [(number, h) for number, h in enumerate(headers) if h["env"] == env] for env in schema.ENVS}
    for env in ("jericho", "textworld"):  # the text games' start rooms
        if by_env[env]:
            reader.register(f"{env}_start", pa.table({"file": [number for number, _ in by_env[env]],
                                                      "room": [h["initial"]["room"] for _, h in by_env[env]]}))
    if not by_env["crafter"]:
        return

    def as_json(part: str) -> pa.Table:
        return pa.table({"file": [number for number, _ in by_env["crafter"]],
                         "text": [json.dumps(h[part]) for _, h in by_env["crafter"]]})
    reader.register("crafter_initial", as_json("initial"))
    reader.register("crafter_map", as_json("map_init"))
    reader.execute("CREATE TEMP TABLE crafter_states AS "
                   "SELECT file, 0 AS step, s.inventory, s.view, s.creatures FROM (SELECT file, json_transform_strict("
                   f"text, {_structure(HEADER_SPECS['crafter']['initial'])}) AS s FROM crafter_initial) UNION ALL "
                   "SELECT file, rec.step, rec.inventory, rec.view, rec.creatures FROM crafter_lines")
    reader.execute("CREATE TEMP TABLE crafter_map_read AS SELECT file, m.materials, m.rows FROM (SELECT file, "
                   f"json_transform_strict(text, {_structure(HEADER_SPECS['crafter']['map_init'])}) AS m "
                   "FROM crafter_map)")
    reader.execute("CREATE TEMP TABLE crafter_map_cells AS SELECT file, x - 1 AS x, y - 1 AS y, index, "
                   "CASE WHEN index BETWEEN 0 AND len(materials) - 1 THEN materials[index + 1] END AS material "
                   f"FROM ({_listed(f'({_MAP_ROWS})', 'file, materials, y', 'row', 'index', 'x')})")
    unknown = reader.execute("SELECT file, x, y, index FROM crafter_map_cells WHERE material IS NULL "
                             "ORDER BY file, y, x LIMIT 1").fetchone()
    if unknown:
        number, x, y, index = unknown
        raise UserError(f"{traces[number].path}:1: field 'map_init.rows[{y}][{x}]': no material has index {index}")
    reader.register("inventory_keys", pa.table({"item": list(crafter_data.INVENTORY_KEYS),
                                                "k": range(len(crafter_data.INVENTORY_KEYS))}))
    register_rules(reader)
    reader.register("collected_from", pa.table({"item": list(crafter_data.COLLECTED_FROM),
                                                "material": list(crafter_data.COLLECTED_FROM.values())}))


def _vocabulary(header: dict) -> dict[str, list[str]]:
    """A game's vocabulary: Crafter's is the game's own data (crafter_data), so a trace recorded before a
    kind was added has it too; a Jericho game's is the one its header recorded, but for the room names of
    older headers, which joined no room (an episode's rooms are the rooms table: _jericho_rooms); both
    with the game's event kinds (dsl/events.py)."""
    vocabulary = crafter_data.vocabulary() if header["env"] == "crafter" else {
        kind: values for kind, values in header["vocab"].items() if kind != "room"}
    return {**vocabulary, "event": list(event_kinds[header["env"]]), "whole_event": list(WHOLE_KINDS[header["env"]])}


def _event_vocabulary(header: dict) -> dict[str, list[str]]:
    """The vocabulary event subjects are drawn from: the game's, with a Jericho episode's rooms by title,
    never numbered (events.event_subjects, which says from which step the episode met each): "Forest (3)"
    as a false premise would tell that the episode reaches three Forests."""
    if header["env"] == "textworld":  # its rooms' names are its own, one room each
        return {**_vocabulary(header), "room": [room["name"] for room in header["rooms"]]}
    if header["env"] != "jericho":
        return {**_vocabulary(header), "room": []}
    rooms = _jericho_rooms(header)
    visited = room_names.titles([room["display_name"] for room in rooms if room["visited"]])
    unvisited = [room["display_name"] for room in rooms if not room["visited"]]
    return {**_vocabulary(header), "room": list(dict.fromkeys([*visited, *unvisited]))}


def _jericho_rooms(header: dict) -> list[dict]:
    """The episode's rooms, then the game's rooms it never entered (none in traces recorded before
    qtc 0.4), each with `visited`."""
    return ([{**room, "visited": True} for room in header["rooms"]]
            + [{**room, "visited": False} for room in header["unvisited_rooms"] or []])


def _header_rows(traces: list[TraceText]) -> dict[schema.Table, pa.Table]:
    """The tables that come from the headers alone."""
    headers = [trace.header for trace in traces]
    return {
        schema.EPISODES: _arrow_table(schema.EPISODES, [
            (h["episode_id"], h["env"], h["game"], h["seed"], h["agent"], h["n_steps"], h["ended_by"], h["death_step"],
             h["death_cause"], h["format_version"]) for h in headers]),
        schema.VOCAB: _arrow_table(schema.VOCAB, [(h["game"], kind, value) for h in headers
                                                  for kind, values in _vocabulary(h).items() for value in values]),
    }


def _tables(reader: duckdb.DuckDBPyConnection, traces: list[TraceText]) -> dict[schema.Table, pa.Table]:
    """Every table's rows, as Arrow tables."""
    _register_headers(reader, traces)
    check_consistency(reader, traces)
    tables = _header_rows(traces)
    envs = {trace.header["env"] for trace in traces}
    for table, sql in TABLE_SQL.items():
        if table.env in envs:
            tables[table] = reader.sql(sql).to_arrow_table()
    if schema.JERICHO_STEPS in tables:
        tables[schema.JERICHO_ROOMS] = jericho_rooms(traces, tables[schema.JERICHO_ROOM_EVENTS])
        tables[schema.JERICHO_STEPS] = with_commands(tables[schema.JERICHO_STEPS])
        tables[schema.JERICHO_NAMED_ITEMS] = named_items(tables[schema.JERICHO_STEPS], traces)
        tables[schema.JERICHO_INTRODUCED_ITEMS] = _arrow_table(schema.JERICHO_INTRODUCED_ITEMS, introduced_items(
            tables[schema.JERICHO_STEPS], traces))
        register_objects(reader, traces)
        tables[schema.JERICHO_OBJECTS] = reader.sql(OBJECTS_SQL).to_arrow_table()
        tables[schema.JERICHO_OBJECT_LOCATIONS] = reader.sql(LOCATIONS_SQL).to_arrow_table()
        things = {trace.header["game"]: _vocabulary(trace.header).get("item", []) for trace in traces}
        derived = sightings(tables[schema.JERICHO_STEPS], traces, things)
        for table in (schema.JERICHO_SIGHTINGS, schema.JERICHO_THINGS_PRESENT, schema.JERICHO_MENTIONS):
            tables[table] = _arrow_table(table, derived[table.name])
    changed_textworld = None
    if schema.TEXTWORLD_STEPS in tables:
        tables[schema.TEXTWORLD_STEPS] = with_commands(tables[schema.TEXTWORLD_STEPS], schema.TEXTWORLD_STEPS)
        derived, changed_textworld = textworld.derived(traces, tables[schema.TEXTWORLD_ROOM_EVENTS].to_pylist())
        for table, rows in derived.items():
            tables[table] = _arrow_table(table, rows)
    if envs:
        tables[schema.EVENTS] = events.events(reader, tables, envs)
    tables[schema.EVENT_SUBJECTS] = _arrow_table(schema.EVENT_SUBJECTS, events.event_subjects(
        [trace.header for trace in traces], _event_vocabulary, tables))
    events.with_rejected(reader, tables)
    if schema.JERICHO_STEPS in tables:
        tables[schema.JERICHO_STEPS] = with_changed(tables[schema.JERICHO_STEPS], traces)
    if changed_textworld is not None:
        tables[schema.TEXTWORLD_STEPS] = tables[schema.TEXTWORLD_STEPS].append_column(
            "changed", pa.array(changed_textworld, pa.bool_()))
    if "crafter" in envs:
        tables.update(rule_tables(reader, tables))
    return tables


# Jericho's derived step columns, each a rule of dsl/conventions.py applied to the action (CONVENTIONS.md,
# Commands): `command`, by the rule the action scorer uses, so templates that count or compare actions
# count one command written two ways once; `tried_direction`, so a room graph knows an exit tried in vain.
DERIVED_FROM_ACTION = {"command": command, "tried_direction": command_direction}


def jericho_rooms(traces: list[TraceText], room_events: pa.Table) -> pa.Table:
    """jericho_rooms: each episode's rooms from its header, with each visited room's title (its display
    name unnumbered) and the step the episode first entered it (dsl/room_names.py)."""
    entered: dict[tuple[str, int], int] = {}
    for row in room_events.select(["episode_id", "step", "room", "change"]).to_pylist():
        if row["change"] == "entered":
            key = (row["episode_id"], row["room"])
            entered[key] = min(entered.get(key, row["step"]), row["step"])
    rows = []
    for trace in traces:
        header = trace.header
        if header["env"] == "jericho":
            rooms = _jericho_rooms(header)
            visited = [room["display_name"] for room in rooms if room["visited"]]
            names = dict(zip(visited, room_names.titles(visited)))
            rows += [(header["episode_id"], room["room"], room["name"], room["display_name"], room["visited"],
                      names.get(room["display_name"], room["display_name"]) if room["visited"] else room["display_name"],
                      entered.get((header["episode_id"], room["room"])))
                     for room in rooms]
    return _arrow_table(schema.JERICHO_ROOMS, rows)


def with_commands(steps: pa.Table, table: schema.Table = schema.JERICHO_STEPS) -> pa.Table:
    """A text game's steps (Jericho's, TextWorld's) with the derived columns in their places."""
    actions = steps.column("action").to_pylist()
    names = [c.name for c in table.all_columns]
    for name in sorted(DERIVED_FROM_ACTION, key=names.index):
        values = pa.array([DERIVED_FROM_ACTION[name](action) for action in actions], pa.string())
        steps = steps.add_column(names.index(name), name, values)
    return steps


def named_items(steps: pa.Table, traces: list[TraceText]) -> pa.Table:
    """jericho_named_items: per episode, the things of its game first met by name at each step
    (dsl/conventions.named_item_steps), from its commands and what it carried."""
    by_episode: dict[str, list[tuple[int, str, list[str]]]] = defaultdict(list)
    for row in steps.select(["episode_id", "step", "action", "inventory_after"]).to_pylist():
        by_episode[row["episode_id"]].append((row["step"], row["action"], row["inventory_after"]))
    rows = []
    for trace in traces:
        header = trace.header
        if header["env"] == "jericho":
            named = named_item_steps(_vocabulary(header).get("item", []), sorted(by_episode[header["episode_id"]]))
            rows += sorted((header["episode_id"], step, item) for item, step in named.items())
    return _arrow_table(schema.JERICHO_NAMED_ITEMS, rows)


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
            con.register("qtc_batch", batch)
            if table.per_game:
                # The vocabulary is per game: several episodes of one game share its rows.
                con.execute(f"INSERT INTO {table.sql_name} SELECT DISTINCT * FROM qtc_batch b "
                            f"WHERE NOT EXISTS (SELECT 1 FROM {table.sql_name} v WHERE "
                            "v.game = b.game AND v.kind = b.kind AND v.value = b.value)")
            else:
                con.execute(f"INSERT INTO {table.sql_name} SELECT * FROM qtc_batch")
            con.unregister("qtc_batch")
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
        raise UserError(f"{source}: made by an earlier qtc, whose tables derived from the traces differ from this "
                        "one's: load its traces again into a new database")


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
        register_primitives(con)
        if configure is not None:
            configure(con)
        lockdown.lock(con)
    except BaseException:
        con.close()
        raise
    return con
