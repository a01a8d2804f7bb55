"""Small hand-written trace databases whose answers can be worked out by hand, for the language tests.

The tables are made from dsl/schema.py's DDL, as the store makes them, and filled with rows written out
here. Each episode is described in its docstring-like comment so a reader can check an expected answer.
"""

from __future__ import annotations

import duckdb

from qtc.dsl import schema
from qtc.dsl.check import Checker
from qtc.dsl.compile import compile_template
from qtc.dsl.conventions import command, command_direction
from qtc.dsl.parse import parse_source
from qtc.dsl.render import make_environment
from qtc.runtime.spatial.udf import register_primitives

# Jericho episode j1 (game "tiny"): rooms 10 West of House, 20 Forest, 21 Forest (a second one).
#  step action          room before->after  inventory after      score
#   1   take leaflet    10 -> 10            [leaflet]            0
#   2   north           10 -> 20            [leaflet]            0
#   3   east            20 -> 21            [leaflet]            0
#   4   take lamp       21 -> 21            [lamp, leaflet]      5
#   5   west            21 -> 20            [lamp, leaflet]      5
#   6   drop leaflet    20 -> 20            [lamp]               5
JERICHO_STEPS = [
    # step, action, reason, room_before, room_after, moved, direction, inv_before, inv_after, score
    (1, "take leaflet", "I should read the leaflet. It may help.", 10, 10, False, None, [], ["leaflet"], 0),
    (2, "north", "Explore the forest to the north", 10, 20, True, "north", ["leaflet"], ["leaflet"], 0),
    (3, "east", "The forest continues east! Go.", 20, 21, True, "east", ["leaflet"], ["leaflet"], 0),
    (4, "take lamp", "A lamp will help in the dark forest", 21, 21, False, None, ["leaflet"], ["lamp", "leaflet"], 5),
    (5, "west", None, 21, 20, True, "west", ["lamp", "leaflet"], ["lamp", "leaflet"], 5),
    (6, "drop leaflet", "The leaflet is useless", 20, 20, False, None, ["lamp", "leaflet"], ["lamp"], 5),
]
JERICHO_ROOMS = [(10, "West of House", "West of House"), (20, "Forest", "Forest"), (21, "Forest", "Forest (2)")]
JERICHO_ITEM_EVENTS = [(1, "leaflet", "gained", 10), (4, "lamp", "gained", 21), (6, "leaflet", "lost", 20)]
JERICHO_ROOM_EVENTS = [(0, 10, "entered"), (2, 10, "left"), (2, 20, "entered"), (3, 20, "left"),
                       (3, 21, "entered"), (5, 21, "left"), (5, 20, "entered")]

# Crafter episode c1: walking left along row y=20, chopping a tree twice.
#  step action      x before->after  wood after  reason
#   1   move_left   10 -> 9          0           Find a tree. Then collect wood.
#   2   move_left    9 -> 8          0           Keep walking to the tree.
#   3   do           8 -> 8          1           Collect wood from the tree
#   4   move_left    8 -> 7          1           (none)
#   5   move_left    7 -> 6          1           Walk left
#   6   move_left    6 -> 5          1           Walk left to the next tree
#   7   do           5 -> 5          2           Collect wood again
#   8   noop         5 -> 5          2           Wait
CRAFTER_ACTIONS = ["move_left", "move_left", "do", "move_left", "move_left", "move_left", "do", "noop"]
CRAFTER_X = [10, 9, 8, 8, 7, 6, 5, 5, 5]  # x before step 1, then after each step
CRAFTER_REASONS = ["Find a tree. Then collect wood.", "Keep walking to the tree.", "Collect wood from the tree",
                   None, "Walk left", "Walk left to the next tree", "Collect wood again", "Wait"]
CRAFTER_WOOD = [0, 0, 0, 1, 1, 1, 1, 2, 2]  # after step 0..8
CRAFTER_HEALTH = [9, 9, 9, 9, 8, 8, 8, 8, 9]


def make_db() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for statement in schema.ddl():
        con.execute(statement)
    register_primitives(con)
    con.executemany("INSERT INTO episodes (episode_id, env, game, seed, agent, n_steps, ended_by) "
                    "VALUES (?, ?, ?, 1, 'handmade', ?, 'step_limit')",
                    [("j1", "jericho", "tiny", 6), ("c1", "crafter", "crafter", 8)])
    con.executemany("INSERT INTO vocab VALUES (?, ?, ?)",
                    [("tiny", "item", v) for v in ("leaflet", "lamp", "sword")]
                    + [("tiny", "direction", v) for v in ("north", "south", "east", "west")]
                    + [("crafter", "action", v) for v in ("noop", "move_left", "move_right", "do", "sleep")]
                    + [("crafter", "item", v) for v in ("wood", "stone", "health")]
                    + [("crafter", "stat", "health")])
    for step, action, reason, before, after, moved, direction, inv_before, inv_after, score in JERICHO_STEPS:
        con.execute("INSERT INTO jericho_steps (episode_id, step, action, command, reason, obs_before, obs_after, "
                    "reward, score, moves, room_before, room_after, moved, direction, tried_direction, "
                    "inventory_before, inventory_after, valid_actions, done) "
                    "VALUES ('j1', ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, [], FALSE)",
                    [step, action, command(action), reason, f"obs {step - 1}", f"obs {step}", score, step, before,
                     after, moved, direction, command_direction(action), inv_before, inv_after])
    con.executemany(f"INSERT INTO jericho_rooms {HEADER_ROOM_COLUMNS} VALUES ('j1', ?, ?, ?, TRUE)", JERICHO_ROOMS)
    con.executemany("INSERT INTO jericho_item_events VALUES ('j1', ?, ?, ?, ?)", JERICHO_ITEM_EVENTS)
    con.executemany("INSERT INTO jericho_room_events VALUES ('j1', ?, ?, ?)", JERICHO_ROOM_EVENTS)
    derive_room_columns(con)
    for step, action in enumerate(CRAFTER_ACTIONS, start=1):
        con.execute("INSERT INTO crafter_steps (episode_id, step, action, reason, reward, x_before, y_before, "
                    "x_after, y_after, facing_before, facing_after, terrain_before, terrain_after, daylight, "
                    "sleeping, done) VALUES ('c1', ?, ?, ?, 0, ?, 20, ?, 20, 'left', 'left', 'grass', 'grass', "
                    "1.0, FALSE, FALSE)", [step, action, CRAFTER_REASONS[step - 1], CRAFTER_X[step - 1], CRAFTER_X[step]])
    for step in range(9):
        con.execute("INSERT INTO crafter_inventory VALUES ('c1', ?, 'wood', ?), ('c1', ?, 'health', ?), "
                    "('c1', ?, 'stone', 0)", [step, CRAFTER_WOOD[step], step, CRAFTER_HEALTH[step], step])
    con.executemany("INSERT INTO crafter_collections VALUES ('c1', ?, 'wood', 'tree')", [(3,), (7,)])
    con.executemany("INSERT INTO crafter_achievements VALUES ('c1', ?, 'collect_wood', ?)", [(3, True), (7, False)])
    con.execute("INSERT INTO crafter_damage VALUES ('c1', 4, 1, 'zombie', TRUE)")
    return con


# The rooms' columns a trace header gives; derive_room_columns fills in the others as the store does
# (runtime/trace/store.py, jericho_rooms), for hand-written names that number no title twice.
HEADER_ROOM_COLUMNS = "(episode_id, room, name, display_name, visited)"


def derive_room_columns(con: duckdb.DuckDBPyConnection) -> None:
    """jericho_rooms' title and first_entered, from the display names and the room events."""
    con.execute("UPDATE jericho_rooms r SET title = display_name, first_entered = (SELECT min(step) "
                "FROM jericho_room_events e WHERE e.episode_id = r.episode_id AND e.room = r.room "
                "AND e.change = 'entered')")


def compile_source(source: str, path: str = "test.qtpl"):
    """Parse, check and compile templates given as text; fails the test with the diagnostics if any."""
    templates, errors = parse_source(path, source)
    rendered = [e.render(source) for e in errors]
    compiled = []
    for template in templates:
        checker = Checker(template, make_environment())
        checked = checker.check()
        rendered += [d.render(source) for d in checker.diagnostics]
        if checked is not None:
            compiled.append(compile_template(checked))
    assert not rendered, "\n".join(rendered)
    return compiled


def candidates(con, compiled, horizon: int | None = None) -> list[dict]:
    """The candidate rows of a compiled template, as dicts, seeing the steps up to `horizon` only."""
    con.execute("RESET VARIABLE qtc_horizon" if horizon is None else f"SET VARIABLE qtc_horizon = {int(horizon)}")
    relation = con.sql(compiled.sql)
    return [dict(zip(relation.columns, row)) for row in relation.fetchall()]


def run(con, source: str) -> list[dict]:
    """The candidates of the single template in `source`, as dicts."""
    (compiled,) = compile_source(source)
    return candidates(con, compiled)


def template(env: str, body: str, answer_type: str = "integer", category: str = "single_hop") -> str:
    """A template around `body` (params, lets, question, answer, evidence clauses)."""
    return f"template {env}.t {{\n  env {env}\n  category {category}\n  answer_type {answer_type}\n{body}\n}}\n"
