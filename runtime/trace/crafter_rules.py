"""Crafter's rules as tables, and what an action right after each step would have done by them.

The rules are Crafter's own data (crafter/data.yaml through dsl/crafter_data.py), never copied by hand:
recipes (`make`), collecting (`collect`) and placing (`place`), each as rows that every Crafter episode
of a store holds. From them and the derived steps, inventory, view and creatures, three tables say for
every state (step 0 included) what Crafter's player update (crafter/objects.py, Player) would do with
an action taken right after it (CONVENTIONS.md, Crafting):

- `craftable`: a make action (Player._make): the inventory holds what the recipe uses and every station
  it needs is among the materials of the 3 x 3 cells around the player. Crafter reads those cells as
  the slice [x - 1, x + 2) of its map, which is empty at column or row 0: there nothing is nearby.
- `collectable`: a do action at the faced cell (Player._do_material): the cell holds no creature or
  object (a do there would hit it instead), its material has a collect rule, and the inventory holds
  every tool the rule needs.
- `placeable`: a place action (Player._place): the faced cell holds no creature or object, its
  material is one the thing may be put on, and the inventory holds what placing it uses.

Each also says whether the player would carry out the action at all (`awake`): asleep with less than
full energy, Player.update turns every command into sleep, so nothing is collected, placed or made.

The player acts first in a step (it is the world's first object), so the state after step t is what
the action of step t + 1 meets.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from qtc.dsl import crafter_data, schema
from qtc.runtime.arrow import arrow_rows, arrow_type

from .environment import arrow_table

# Each rule table's rows from crafter_data, in the data's order (k), as the table's columns declare them.
RULES: dict[schema.Table, tuple[tuple, ...]] = {
    schema.CRAFTER_RECIPE_USES: crafter_data.RECIPE_USES,
    schema.CRAFTER_RECIPE_STATIONS: crafter_data.RECIPE_STATIONS,
    schema.CRAFTER_COLLECT_RULES: crafter_data.COLLECT_RULES,
    schema.CRAFTER_COLLECT_TOOLS: crafter_data.COLLECT_TOOLS,
    schema.CRAFTER_PLACE_USES: crafter_data.PLACE_USES,
    schema.CRAFTER_PLACE_TARGETS: crafter_data.PLACE_TARGETS,
}


def register_rules(reader: duckdb.DuckDBPyConnection) -> None:
    """Each rule table under its template name (recipe_uses, ...), and the facing offsets."""
    for table, rows in RULES.items():
        columns = {c.name: pa.array(list(values), arrow_type(c.type)) for c, values in zip(table.columns, zip(*rows))}
        reader.register(table.name, pa.table({**columns, "k": pa.array(range(len(rows)), pa.int64())}))
    reader.register("facing_offsets", pa.table({"facing": pa.array(list(crafter_data.FACINGS.values()), pa.string()),
                                                "dx": pa.array([dx for dx, _ in crafter_data.FACINGS], pa.int64()),
                                                "dy": pa.array([dy for _, dy in crafter_data.FACINGS], pa.int64())}))


def episode_rules(episodes: list[str]) -> dict[schema.Table, pa.Table]:
    """Each rule table's rows for every episode of `episodes`, in their order: the same rows for each, in
    the data's order (built here: a statement per table would cost more than the rows)."""
    return {table: arrow_table(table, [(episode, *row) for episode in episodes for row in rows])
            for table, rows in RULES.items()}


# The player's state after each step, and after reset (step 0: the first step's before columns; the
# player starts awake), with whether it would carry out a command then (Player.update: asleep with less
# than full energy, every command becomes sleep; with full energy it wakes as the step begins).
_STATES = f"""states AS (
  SELECT s.episode_id, s.step, s.x, s.y, s.facing,
         NOT s.sleeping OR coalesce(e.count, 0) >= {crafter_data.MAXIMUM["energy"]} AS awake
  FROM (SELECT episode_id, step, x_after AS x, y_after AS y, facing_after AS facing, sleeping FROM q_steps UNION ALL
        SELECT episode_id, 0, x_before, y_before, facing_before, false FROM q_steps WHERE step = 1) s
  LEFT JOIN q_inventory e ON e.episode_id = s.episode_id AND e.step = s.step AND e.item = 'energy')"""

# The cell each state faces: its material as the view showed it, and whether a creature or object was on it.
_FACED = _STATES + """,
faced AS (
  SELECT s.episode_id, s.step, s.awake, v.material, EXISTS (
      SELECT 1 FROM q_creatures c WHERE c.episode_id = s.episode_id AND c.step = s.step
        AND c.x = s.x + o.dx AND c.y = s.y + o.dy) AS occupied
  FROM states s JOIN facing_offsets o ON o.facing = s.facing
  JOIN q_view v ON v.episode_id = s.episode_id AND v.step = s.step AND v.x = s.x + o.dx AND v.y = s.y + o.dy)"""


def _ingredients(states: str, uses: str) -> str:
    """The CTE `ingredients`: for each state of `states` and item of the rule table `uses` (item,
    ingredient, amount), whether the inventory held everything the rule uses up."""
    return f"""ingredients AS (
  SELECT p.episode_id, p.step, u.item, bool_and(coalesce(i.count, 0) >= u.amount) AS ok
  FROM {states} p CROSS JOIN {uses} u LEFT JOIN q_inventory i
    ON i.episode_id = p.episode_id AND i.step = p.step AND i.item = u.ingredient
  GROUP BY ALL)"""


CRAFTABLE_SQL = f"""
WITH {_STATES},
{_ingredients("states", "recipe_uses")},
nearby AS (
  SELECT p.episode_id, p.step, list(DISTINCT v.material) AS materials
  FROM states p JOIN q_view v ON v.episode_id = p.episode_id AND v.step = p.step
    AND abs(v.x - p.x) <= 1 AND abs(v.y - p.y) <= 1
  WHERE p.x > 0 AND p.y > 0 GROUP BY ALL),
stations AS (
  SELECT p.episode_id, p.step, s.item, bool_and(coalesce(list_contains(n.materials, s.station), false)) AS ok
  FROM states p CROSS JOIN recipe_stations s LEFT JOIN nearby n ON n.episode_id = p.episode_id AND n.step = p.step
  GROUP BY ALL)
SELECT i.episode_id, i.step, i.item, i.ok, coalesce(s.ok, true), p.awake
FROM ingredients i LEFT JOIN stations s ON s.episode_id = i.episode_id AND s.step = i.step AND s.item = i.item
JOIN states p ON p.episode_id = i.episode_id AND p.step = i.step
JOIN (SELECT item, min(k) AS k FROM recipe_uses GROUP BY item) o ON o.item = i.item
ORDER BY i.episode_id, i.step, o.k
"""

COLLECTABLE_SQL = f"""
WITH {_FACED}
SELECT f.episode_id, f.step, f.material, r.item,
       coalesce(bool_and(coalesce(i.count, 0) >= t.amount), true) AS tools, f.awake
FROM faced f JOIN collect_rules r ON r.material = f.material
LEFT JOIN collect_tools t ON t.material = f.material
LEFT JOIN q_inventory i ON i.episode_id = f.episode_id AND i.step = f.step AND i.item = t.tool
WHERE NOT f.occupied
GROUP BY f.episode_id, f.step, f.awake, f.material, r.item, r.k
ORDER BY f.episode_id, f.step, r.k
"""

PLACEABLE_SQL = f"""
WITH {_FACED},
{_ingredients("faced", "place_uses")}
SELECT g.episode_id, g.step, g.item, g.ok,
       NOT f.occupied AND EXISTS (SELECT 1 FROM place_targets t WHERE t.item = g.item AND t.material = f.material),
       f.awake
FROM ingredients g JOIN faced f ON f.episode_id = g.episode_id AND f.step = g.step
JOIN (SELECT item, min(k) AS k FROM place_uses GROUP BY item) o ON o.item = g.item
ORDER BY g.episode_id, g.step, o.k
"""

DERIVED_SQL = {schema.CRAFTER_CRAFTABLE: CRAFTABLE_SQL, schema.CRAFTER_COLLECTABLE: COLLECTABLE_SQL,
               schema.CRAFTER_PLACEABLE: PLACEABLE_SQL}
# The derived tables these read, by the name the SQL gives them.
INPUTS = {"q_steps": schema.CRAFTER_STEPS, "q_inventory": schema.CRAFTER_INVENTORY, "q_view": schema.CRAFTER_VIEW,
          "q_creatures": schema.CRAFTER_CREATURES}


def rule_tables(reader: duckdb.DuckDBPyConnection, tables: dict[schema.Table, pa.Table]) -> dict[schema.Table, pa.Table]:
    """craftable, collectable and placeable, from the derived Crafter tables already built."""
    for name, table in INPUTS.items():
        reader.register(name, tables[table].rename_columns(["episode_id", *(c.name for c in table.columns)]))
    try:
        return {table: arrow_rows(reader, sql) for table, sql in DERIVED_SQL.items()}
    finally:
        for name in INPUTS:
            reader.unregister(name)
