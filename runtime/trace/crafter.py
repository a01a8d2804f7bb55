"""Crafter's trace record (environment.py): its lines (the state after each step: inventory, view,
creatures, achievements, map changes, damage), its header (the map at reset, the state before step 1:
docs/trace-format.md, Crafter), their consistency, and its tables, derived in SQL over the step lines, with
Crafter's rules (crafter_rules.py) and its events and rejected commands (CONVENTIONS.md, Events; Rejected
commands).
"""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa

from qtc.dsl import crafter_data, schema
from qtc.dsl.events import DAMAGE_CAUSES, STAT_LOW_LEVEL
from qtc.errors import UserError
from qtc.runtime.arrow import rows_where

from .crafter_rules import episode_rules, register_rules, rule_tables
from .environment import (HEADER_COMMON, TraceEnvironment, events_sql, listed, registered, step_spec, steps_sql,
                          structure_sql)

_CELL_CHANGE = {"x": "int", "y": "int", "before": "str", "after": "str"}
_CREATURE = {"creature": "str", "x": "int", "y": "int", "health": "int"}
_VIEW = {"x": "int", "y": "int", "rows": ("list", ("list", ("null", "str")))}
STEP_SPEC = step_spec(schema.CRAFTER_STEPS, frozenset({"reason"}), {
    "inventory": ("dict", "int"),
    "view": _VIEW,
    "creatures": ("list", _CREATURE),
    "achievements": ("list", "str"),
    "map_changes": ("list", _CELL_CHANGE),
    "damage": ("list", {"amount": "int", "cause": "str", "attack": "bool"}),
})
HEADER_SPEC = {
    **HEADER_COMMON,
    "ordered_objects": "bool",
    "map_init": {"materials": ("list", ("null", "str")), "rows": ("list", ("list", "int"))},
    "initial": {"x": "int", "y": "int", "facing": "str", "terrain": "str", "inventory": ("dict", "int"),
                "view": _VIEW, "creatures": ("list", _CREATURE)},
}


# ---- reading and checking ----

def check_step(step: dict, where: str) -> None:
    """Each collect_<item> achievement names an item Crafter collects: the store records what from."""
    for i, achievement in enumerate(step["achievements"]):
        item = achievement.removeprefix("collect_")
        if item != achievement and item not in crafter_data.COLLECTED_FROM:
            raise UserError(f"{where}: field 'achievements[{i}]': unknown collection {achievement!r}")


# check_step's twin over the lines DuckDB reads.
_COLLECTIONS_KNOWN = ("coalesce(list_bool_and(list_transform(rec.achievements, lambda a: "
                      "NOT starts_with(a, 'collect_') OR list_contains($collected, substr(a, 9)))), true)")


def check_map(trace) -> None:
    """The map at reset has cells, its rows one length, and the player starts on it."""
    where, header = f"{trace.path}:1", trace.header
    rows = header["map_init"]["rows"]
    if not rows or not rows[0]:
        raise UserError(f"{where}: field 'map_init.rows': the map has no cells")
    for y, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise UserError(f"{where}: field 'map_init.rows[{y}]': {len(row)} cells, where row 0 has {len(rows[0])}")
    initial = header["initial"]
    for field, size in (("x", len(rows[0])), ("y", len(rows))):
        if not 0 <= initial[field] < size:
            raise UserError(f"{where}: field 'initial.{field}': position {initial[field]} is off the map "
                            f"(0 to {size - 1})")


# The map's size per file: rows[y][x], every row as long as the first (check_map).
_SIZES = "SELECT file, len(rows) AS height, len(rows[1]) AS width FROM crafter_map_read"

# (line, field, what is wrong) of each cell, position or change off the map, as SQL over crafter_lines
# and crafter_states; `line` is the trace's line (the header is line 1, step s is line s + 1).
_OFF_MAP = [
    *(f"SELECT l.file, l.line, '{field}', 'position ' || rec.{field} || ' is off the map (0 to ' || "
      f"({size} - 1) || ')' FROM crafter_lines l JOIN sizes USING (file) WHERE rec.{field} NOT BETWEEN 0 AND {size} - 1"
      for field, size in (("x_before", "width"), ("y_before", "height"), ("x_after", "width"),
                          ("y_after", "height"))),
    "SELECT c.file, c.line, 'map_changes[' || (c.k - 1) || ']', 'cell (' || c.change.x || ', ' || c.change.y || ') "
    "is off the map (' || width || ' x ' || height || ')' FROM (SELECT file, line, unnest(rec.map_changes) AS change, "
    "generate_subscripts(rec.map_changes, 1) AS k FROM crafter_lines) c JOIN sizes USING (file) "
    "WHERE c.change.x NOT BETWEEN 0 AND width - 1 OR c.change.y NOT BETWEEN 0 AND height - 1",
    "SELECT v.file, v.step + 1, CASE WHEN v.step = 0 THEN 'initial.' ELSE '' END || 'view.rows[' || (v.j - 1) || "
    "'][' || (v.i - 1) || ']', 'a material seen at (' || (v.x + v.i - 1) || ', ' || (v.y + v.j - 1) || ') is off "
    "the map (' || width || ' x ' || height || '); cells off the map are null' "
    "FROM (SELECT file, step, x, y, j, unnest(row) AS material, generate_subscripts(row, 1) AS i FROM ("
    "SELECT file, step, view.x AS x, view.y AS y, unnest(view.rows) AS row, generate_subscripts(view.rows, 1) AS j "
    "FROM crafter_states)) v JOIN sizes USING (file) WHERE v.material IS NOT NULL "
    "AND (v.x + v.i - 1 NOT BETWEEN 0 AND width - 1 OR v.y + v.j - 1 NOT BETWEEN 0 AND height - 1)",
]


def check_off_map(reader: duckdb.DuckDBPyConnection, traces: dict) -> None:
    """No position, change or seen cell off the map (the spatial primitives index the map by them)."""
    reader.execute(f"CREATE OR REPLACE TEMP TABLE sizes AS {_SIZES}")
    first = reader.execute(f"SELECT * FROM ({' UNION ALL '.join(_OFF_MAP)}) ORDER BY 1, 2, 3 LIMIT 1").fetchone()
    if first:
        number, line, field, reason = first
        raise UserError(f"{traces[number].path}:{line}: field '{field}': {reason}")


def register(reader: duckdb.DuckDBPyConnection, traces: dict) -> None:
    """What the SQL reads from the headers and from Crafter's data: the state before step 1 with every
    step's (`crafter_states`), the map at reset (checked: each cell names a material), the rules."""
    def as_json(part: str) -> pa.Table:
        return pa.table({"file": pa.array(list(traces), pa.int64()),
                         "text": pa.array([json.dumps(trace.header[part]) for trace in traces.values()], pa.string())})
    reader.register("crafter_initial", as_json("initial"))
    reader.register("crafter_map", as_json("map_init"))
    reader.execute("CREATE TEMP TABLE crafter_states AS "
                   "SELECT file, 0 AS step, s.inventory, s.view, s.creatures FROM (SELECT file, json_transform_strict("
                   f"text, {structure_sql(HEADER_SPEC['initial'])}) AS s FROM crafter_initial) UNION ALL "
                   "SELECT file, rec.step, rec.inventory, rec.view, rec.creatures FROM crafter_lines")
    reader.execute("CREATE TEMP TABLE crafter_map_read AS SELECT file, m.materials, m.rows FROM (SELECT file, "
                   f"json_transform_strict(text, {structure_sql(HEADER_SPEC['map_init'])}) AS m "
                   "FROM crafter_map)")
    reader.execute("CREATE TEMP TABLE crafter_map_cells AS SELECT file, x - 1 AS x, y - 1 AS y, index, "
                   "CASE WHEN index BETWEEN 0 AND len(materials) - 1 THEN materials[index + 1] END AS material "
                   f"FROM ({listed(f'({_MAP_ROWS})', 'file, materials, y', 'row', 'index', 'x')})")
    unknown = reader.execute("SELECT file, x, y, index FROM crafter_map_cells WHERE material IS NULL "
                             "ORDER BY file, y, x LIMIT 1").fetchone()
    if unknown:
        number, x, y, index = unknown
        raise UserError(f"{traces[number].path}:1: field 'map_init.rows[{y}][{x}]': no material has index {index}")
    reader.register("inventory_keys", pa.table({"item": pa.array(list(crafter_data.INVENTORY_KEYS), pa.string()),
                                                "k": pa.array(range(len(crafter_data.INVENTORY_KEYS)), pa.int64())}))
    register_rules(reader)
    reader.register("collected_from", pa.table({"item": pa.array(list(crafter_data.COLLECTED_FROM), pa.string()),
                                                "material": pa.array(list(crafter_data.COLLECTED_FROM.values()), pa.string())}))


# ---- the tables, in SQL over the step lines ----

def _step_list(values: str, name: str) -> str:
    """Each element of a list of the Crafter step lines, with the file, the step and its position."""
    return listed("crafter_lines", "file, rec.step AS step", f"rec.{values}", name)


_INVENTORIES = ("SELECT file, step, unnest(json_keys(inventory)) AS item, "
                "unnest(json_extract(inventory, '$.*'))::BIGINT AS count, "
                "generate_subscripts(json_keys(inventory), 1) AS i FROM crafter_states")
_ACHIEVEMENTS = _step_list("achievements", "achievement")
_VIEW_ROWS = listed("crafter_states", "file, step, view.x AS x, view.y AS y", "view.rows", "row", "j")
_MAP_ROWS = listed("crafter_map_read", "file, materials", "rows", "row", "y")

TABLE_SQL = {
    schema.CRAFTER_MAP_INIT: events_sql("x, y, material", "SELECT * FROM crafter_map_cells", "y, x"),
    schema.CRAFTER_STEPS: steps_sql(schema.CRAFTER_STEPS),
    schema.CRAFTER_INVENTORY: events_sql("step, item, count", _INVENTORIES, "step, i"),
    schema.CRAFTER_VIEW: events_sql(
        "step, x + i - 1, y + j - 1, material",
        f"SELECT * FROM ({listed(f'({_VIEW_ROWS})', 'file, step, x, y, j', 'row', 'material')}) "
        "WHERE material IS NOT NULL",
        "step, j, i"),
    schema.CRAFTER_CREATURES: events_sql("step, c.creature, c.x, c.y, c.health",
                                         listed("crafter_states", "file, step", "creatures", "c"), "step, i"),
    schema.CRAFTER_MAP_CHANGES: events_sql("step, c.x, c.y, c.before, c.after", _step_list("map_changes", "c"),
                                           "step, i"),
    schema.CRAFTER_ACHIEVEMENTS: events_sql(
        "step, achievement, row_number() OVER (PARTITION BY s.file, achievement ORDER BY step, i) = 1",
        _ACHIEVEMENTS, "step, i"),
    schema.CRAFTER_COLLECTIONS: events_sql(
        "step, item, material",
        f"SELECT a.*, c.item, c.material FROM ({_ACHIEVEMENTS}) a JOIN collected_from c "
        "ON a.achievement = 'collect_' || c.item", "step, i"),
    schema.CRAFTER_ITEM_EVENTS: events_sql(
        "step, item, CASE WHEN change > 0 THEN 'gained' ELSE 'lost' END, abs(change)",
        f"WITH inventories AS ({_INVENTORIES}) "
        "SELECT * FROM (SELECT s.file, s.step, k.item, k.k, "
        "coalesce(now.count, 0) - coalesce(before.count, 0) AS change "
        "FROM (SELECT file, rec.step AS step FROM crafter_lines) s CROSS JOIN inventory_keys k "
        "LEFT JOIN inventories now ON now.file = s.file AND now.step = s.step AND now.item = k.item "
        "LEFT JOIN inventories before ON before.file = s.file AND before.step = s.step - 1 AND before.item = k.item) "
        "WHERE change != 0",
        "step, k"),
    schema.CRAFTER_DAMAGE: events_sql("step, d.amount, d.cause, d.attack", _step_list("damage", "d"), "step, i"),
}


# ---- events and rejected commands ----

# Crafter's steps with whether the player was asleep before each (it starts awake).
_SLEEP = ("SELECT *, coalesce(lag(sleeping) OVER (PARTITION BY episode_id ORDER BY step), false) AS was_sleeping "
          "FROM crafter_steps")
EVENT_SQL = {
    "achievement": "SELECT DISTINCT episode_id, step, achievement FROM crafter_achievements",
    "item_gained": "SELECT episode_id, step, item FROM crafter_item_events WHERE change = 'gained' "
                   "AND NOT list_contains($stats, item)",
    "item_lost": "SELECT episode_id, step, item FROM crafter_item_events WHERE change = 'lost' "
                 "AND NOT list_contains($stats, item)",
    "damage": "SELECT DISTINCT episode_id, step, cause FROM crafter_damage",
    "sleep": f"SELECT episode_id, step, NULL FROM ({_SLEEP}) WHERE sleeping AND NOT was_sleeping",
    "wake": f"SELECT episode_id, step, NULL FROM ({_SLEEP}) WHERE was_sleeping AND NOT sleeping",
    "stat_low": "SELECT now.episode_id, now.step, now.item FROM crafter_inventory now JOIN crafter_inventory before "
                "ON before.episode_id = now.episode_id AND before.step = now.step - 1 AND before.item = now.item "
                "WHERE list_contains($stats, now.item) AND now.count < $level AND before.count >= $level",
    "terrain_first": "SELECT episode_id, min(step), terrain_after FROM crafter_steps s WHERE terrain_after != "
                     "(SELECT terrain_before FROM crafter_steps f WHERE f.episode_id = s.episode_id AND f.step = 1) "
                     "GROUP BY episode_id, terrain_after",
    "death": "SELECT episode_id, death_step, NULL FROM episodes WHERE env = 'crafter' AND death_step IS NOT NULL",
    "first_seen": "SELECT episode_id, min(step), seen FROM (SELECT episode_id, step, material AS seen "
                  "FROM crafter_view UNION ALL SELECT episode_id, step, creature FROM crafter_creatures) "
                  "WHERE seen IS NOT NULL GROUP BY episode_id, seen HAVING min(step) >= 1",
    "action": "SELECT episode_id, step, action FROM crafter_steps",
}

# A sleeping player's command is replaced by sleep unless it wakes at the step's start, which Crafter
# counts as the achievement wake_up; `acted` is whether the command itself ran.
_REJECTED = f"""
WITH s AS (
  SELECT *, NOT was_sleeping OR EXISTS (
    SELECT 1 FROM crafter_achievements a WHERE a.episode_id = t.episode_id AND a.step = t.step
    AND a.achievement = 'wake_up') AS acted
  FROM ({_SLEEP}) t)
SELECT s.episode_id, s.step,
  s.action != 'noop'
  AND s.x_after = s.x_before AND s.y_after = s.y_before AND s.facing_after = s.facing_before
  AND NOT (s.action = 'sleep' AND s.sleeping)
  AND NOT EXISTS (SELECT 1 FROM crafter_item_events i WHERE i.episode_id = s.episode_id AND i.step = s.step
                  AND NOT list_contains($stats, i.item))
  AND NOT EXISTS (SELECT 1 FROM crafter_map_changes m WHERE m.episode_id = s.episode_id AND m.step = s.step)
  AND NOT EXISTS (SELECT 1 FROM crafter_achievements a WHERE a.episode_id = s.episode_id AND a.step = s.step
                  AND a.achievement != 'wake_up')
  AND NOT (s.action = 'do' AND s.acted AND EXISTS (
    SELECT 1 FROM crafter_creatures c WHERE c.episode_id = s.episode_id AND c.step = s.step - 1
    AND list_contains($struck, c.creature)
    AND c.x = s.x_before + CASE s.facing_before WHEN 'left' THEN -1 WHEN 'right' THEN 1 ELSE 0 END
    AND c.y = s.y_before + CASE s.facing_before WHEN 'up' THEN -1 WHEN 'down' THEN 1 ELSE 0 END))
  AS rejected
FROM s ORDER BY s.episode_id, s.step
"""
# The creatures a `do` always harms (Player._do_object): striking one is never without effect.
_STRUCK = ("zombie", "skeleton", "cow")


def crafter_rejected(reader: duckdb.DuckDBPyConnection, tables: dict[schema.Table, pa.Table]) -> pa.Array:
    """Per Crafter step, in the steps table's order, whether its command changed nothing."""
    with registered(reader, tables, _REJECTED):
        rows = reader.execute(_REJECTED, {"stats": list(crafter_data.STATS), "struck": list(_STRUCK)})
        by_step = {(e, s): r for e, s, r in rows.fetchall()}
    steps = tables[schema.CRAFTER_STEPS]
    return pa.array([by_step[key] for key in zip(steps.column("episode_id").to_pylist(),
                                                 steps.column("step").to_pylist())], pa.bool_())


def derive(reader: duckdb.DuckDBPyConnection, traces: dict, tables: dict[schema.Table, pa.Table]) -> None:
    """The steps' `rejected`, the rule tables of each episode, then what the rules say each state allows
    (crafter_rules.py)."""
    flags = crafter_rejected(reader, tables)
    tables[schema.CRAFTER_STEPS] = tables[schema.CRAFTER_STEPS].append_column("rejected", flags)
    tables.update(episode_rules([traces[number].header["episode_id"] for number in sorted(traces)]))
    tables.update(rule_tables(reader, tables))


def met_names(headers: list[dict], tables: dict[schema.Table, pa.Table], add) -> None:
    """The terrain each episode started on."""
    for h in headers:
        add(h["episode_id"], h["initial"]["terrain"], 0)


def shown_first(tables: dict[schema.Table, pa.Table]) -> dict[str, set[str]]:
    """Per episode, the materials and creatures of its first view (step 0): seen, yet never first seen at
    a step."""
    shown: dict[str, set[str]] = {}
    for table, column in ((schema.CRAFTER_VIEW, "material"), (schema.CRAFTER_CREATURES, "creature")):
        rows = rows_where(tables[table], tables[table].column("step").to_numpy() == 0)
        for row in rows.select(["episode_id", column]).to_pylist():
            shown.setdefault(row["episode_id"], set()).add(row[column])
    return shown


CRAFTER = TraceEnvironment(
    "crafter",
    step_spec=STEP_SPEC,
    header_spec=HEADER_SPEC,
    check_step=check_step,
    line_checks=(_COLLECTIONS_KNOWN,),
    line_parameters={"collected": sorted(crafter_data.COLLECTED_FROM)},
    check_trace=check_map,
    check_lines=check_off_map,
    register=register,
    table_sql=TABLE_SQL,
    derive=derive,
    # The game's own data, so a trace recorded before a kind was added has it too.
    vocabulary=lambda header: crafter_data.vocabulary(),
    event_sql=EVENT_SQL,
    event_parameters={"stats": list(crafter_data.STATS), "level": STAT_LOW_LEVEL},
    met_names=met_names,
    shown_first=shown_first,
    fixed_subjects={"damage": tuple(DAMAGE_CAUSES)},
)
