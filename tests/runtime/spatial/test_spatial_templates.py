"""The library's spatial templates through their compiled SQL and the registered primitives, on
hand-written episodes whose answers are worked out by hand below."""

from __future__ import annotations

from pathlib import Path

import pytest

from qtc.dsl.library import load_library
from qtc.dsl.reference.spatial import EpisodeSpace
from support.handmade import make_db
from support.paths import TEMPLATES


# Crafter episode c2, a 6x4 map (x to the right, y down), the player starting at (2, 2):
#   y0  T T . . W W        T tree, W water, L lava, S stone, . grass
#   y1  . . . . . W
#   y2  L . . . . .
#   y3  S S . . . .
# Steps: 1 move_right to (3, 2), 2 move_right to (4, 2), 3 place_table at (2, 1) (a map change),
# 4 move_left to (3, 2), 5..12 noop. Every view shows the whole map.
C2_MAP = ["TT..WW", ".....W", "L.....", "SS...."]
LEGEND = {"T": "tree", "W": "water", "L": "lava", "S": "stone", ".": "grass"}
C2_X_BEFORE = [2, 3, 4, 4] + [3] * 8  # x before steps 1..12 (y is always 2)
C2_ACTIONS = ["move_right", "move_right", "place_table", "move_left"] + ["noop"] * 8


@pytest.fixture(scope="module")
def con():
    con = make_db()
    con.execute("INSERT INTO episodes (episode_id, env, game, seed, agent, n_steps, ended_by) "
                "VALUES ('c2', 'crafter', 'crafter', 2, 'handmade', 12, 'step_limit')")
    cells = [(x, y, LEGEND[ch]) for y, row in enumerate(C2_MAP) for x, ch in enumerate(row)]
    con.executemany("INSERT INTO crafter_map_init VALUES ('c2', ?, ?, ?)", cells)
    con.execute("INSERT INTO crafter_map_changes VALUES ('c2', 3, 2, 1, 'grass', 'table')")
    con.executemany("INSERT INTO vocab VALUES ('crafter', 'direction', ?)", [("left",), ("right",), ("up",), ("down",)])
    for step in range(13):
        seen = [(x, y, "table" if (x, y) == (2, 1) and step >= 3 else m) for x, y, m in cells]
        con.executemany("INSERT INTO crafter_view VALUES ('c2', ?, ?, ?, ?)", [(step, *cell) for cell in seen])
    for step, action in enumerate(C2_ACTIONS, start=1):
        x_after = C2_X_BEFORE[step] if step < 12 else 3
        con.execute("INSERT INTO crafter_steps (episode_id, step, action, x_before, y_before, x_after, y_after, "
                    "terrain_before, terrain_after) VALUES ('c2', ?, ?, ?, 2, ?, 2, 'grass', 'grass')",
                    [step, action, C2_X_BEFORE[step - 1], x_after])
    add_c3(con)
    add_c4(con)
    yield con
    con.close()


def candidates(con, template_id: str, episode: str) -> list[dict]:
    (compiled,) = [c for c in load_library([TEMPLATES]).compiled if c.id == template_id]
    relation = con.sql(compiled.sql)
    return [row for row in (dict(zip(relation.columns, r)) for r in relation.fetchall())
            if row["episode_id"] == episode]


def by(rows: list[dict], *params: str) -> dict:
    return {tuple(r[f"p_{p}"] for p in params): r for r in rows}


def test_route_to_nearest(con):
    rows = by(candidates(con, "crafter.route_to_nearest", "c2"), "t", "material")
    # From (2, 2) before step 1: beside a tree at (1, 1) or (2, 0), both two moves away.
    tree = rows[1, "tree"]
    assert tree["answer"] == {"dx": -1, "dy": -1}
    assert tree["accepted"] == [{"dx": -1, "dy": -1}, {"dx": 0, "dy": -2}]
    assert tree["evidence"] == [1]
    # Water: three places to stand beside it, each three moves away.
    assert rows[1, "water"]["accepted"] == [{"dx": 1, "dy": -2}, {"dx": 2, "dy": -1}, {"dx": 3, "dy": 0}]
    # Stone: one move, to (1, 2) or (2, 3); lava: beside it at (1, 2), one move left.
    assert rows[1, "stone"]["accepted"] == [{"dx": -1, "dy": 0}, {"dx": 0, "dy": 1}]
    assert rows[1, "lava"]["accepted"] == [{"dx": -1, "dy": 0}]
    # Grass is underfoot (no move needed): not asked. The table exists, and was seen, only from step 4.
    assert (1, "grass") not in rows and (3, "table") not in rows
    assert rows[4, "table"]["accepted"] == [{"dx": -2, "dy": 0}, {"dx": -1, "dy": -1}]


def test_nearest_direction(con):
    rows = by(candidates(con, "crafter.nearest_direction", "c2"), "t", "material")
    assert rows[1, "tree"]["answer"] == "up"  # the tree at (1, 0), reached from (1, 1) or (2, 0)
    assert rows[4, "table"]["answer"] == "left"  # the table at (2, 1) from (4, 2)
    # The nearest water lies diagonally (two up and two right, and one up one right): no direction.
    assert (1, "water") not in rows and (1, "stone") not in rows


def test_terrain_after_walk(con):
    rows = by(candidates(con, "crafter.terrain_after_walk", "c2"), "t", "direction", "tiles")
    assert rows[1, "up", 2]["answer"] == "grass"
    assert rows[1, "right", 3]["answer"] == "grass"
    assert rows[1, "left", 2]["answer"] == "lava"  # the walk ends in the lava at (0, 2)
    assert (1, "down", 2) not in rows and (1, "up", 3) not in rows  # off the map
    assert (1, "left", 3) not in rows
    # From (4, 2) before step 4: the table placed at (2, 1) is not on the way.
    assert rows[4, "left", 2]["answer"] == "grass" and rows[4, "left", 4]["answer"] == "lava"


# Crafter episode c3, one row of 12 cells: water at x = 0 and x = 11, grass between. The player starts
# at x = 1 and moves right at steps 1..9 (to x = 10), then waits. Its view is the cells at most 2 from
# it, so the water at x = 11 comes into view only after step 8 (from x = 9).
C3_MAP = "W..........W"
C3_STEPS = 12


def c3_x_after(step: int) -> int:
    return min(1 + step, 10)


def add_c3(con) -> None:
    con.execute("INSERT INTO episodes (episode_id, env, game, seed, agent, n_steps, ended_by) "
                "VALUES ('c3', 'crafter', 'crafter', 3, 'handmade', ?, 'step_limit')", [C3_STEPS])
    cells = [(x, 0, LEGEND[ch]) for x, ch in enumerate(C3_MAP)]
    con.executemany("INSERT INTO crafter_map_init VALUES ('c3', ?, ?, ?)", cells)
    for step in range(C3_STEPS + 1):
        con.executemany("INSERT INTO crafter_view VALUES ('c3', ?, ?, ?, ?)",
                        [(step, x, y, m) for x, y, m in cells if abs(x - c3_x_after(step)) <= 2])
    for step in range(1, C3_STEPS + 1):
        action = "move_right" if step <= 9 else "noop"
        con.execute("INSERT INTO crafter_steps (episode_id, step, action, x_before, y_before, x_after, y_after, "
                    "terrain_before, terrain_after) VALUES ('c3', ?, ?, ?, 0, ?, 0, 'grass', 'grass')",
                    [step, action, c3_x_after(step - 1), c3_x_after(step)])


# Crafter episode c4, 4x2: water at (0, 0), grass elsewhere, a sapling planted at (1, 0) (a plant, seen
# after every step), the player at (3, 0) waiting for three steps. The plant blocks the cell beside the
# water on the top row: the way to the water goes round by the bottom row to (0, 1).
C4_MAP = ["W...", "...."]


def add_c4(con) -> None:
    con.execute("INSERT INTO episodes (episode_id, env, game, seed, agent, n_steps, ended_by) "
                "VALUES ('c4', 'crafter', 'crafter', 4, 'handmade', 3, 'step_limit')")
    cells = [(x, y, LEGEND[ch]) for y, row in enumerate(C4_MAP) for x, ch in enumerate(row)]
    con.executemany("INSERT INTO crafter_map_init VALUES ('c4', ?, ?, ?)", cells)
    for step in range(4):
        con.executemany("INSERT INTO crafter_view VALUES ('c4', ?, ?, ?, ?)", [(step, *cell) for cell in cells])
        con.execute("INSERT INTO crafter_creatures VALUES ('c4', ?, 'plant', 1, 0, 1)", [step])
    for step in range(1, 4):
        con.execute("INSERT INTO crafter_steps (episode_id, step, action, x_before, y_before, x_after, y_after, "
                    "terrain_before, terrain_after) VALUES ('c4', ?, 'noop', 3, 0, 3, 0, 'grass', 'grass')", [step])


def test_a_plant_blocks_routes_and_walks(con):
    routes = by(candidates(con, "crafter.route_to_nearest", "c4"), "t", "material")
    assert routes[2, "water"]["accepted"] == [{"dx": -3, "dy": 1}]  # not 2 left, onto the plant
    walks = by(candidates(con, "crafter.terrain_after_walk", "c4"), "t", "direction", "tiles")
    assert (2, "left", 2) not in walks  # the walk would enter the plant's cell
    # The reference evaluator's own reading agrees.
    tables = {name: [dict(zip(r.columns, row)) for r in [con.sql(f"SELECT * FROM crafter_{name} WHERE episode_id = 'c4'")]
                     for row in r.fetchall()] for name in ("map_init", "map_changes", "view", "creatures", "steps")}
    space = EpisodeSpace(tables)
    assert space.call("nearest_routes", 2, "water", "seen") == [{"dx": -3, "dy": 1}]
    assert space.call("walk_terrain", 2, "left", 2, "seen") is None


def test_closest_and_farthest_step(con):
    closest = by(candidates(con, "crafter.closest_step_in_range", "c2"), "material", "L", "R")
    farthest = by(candidates(con, "crafter.farthest_step_in_range", "c2"), "material", "L", "R")
    # Moves to reach water before steps 1..: 3, 2, 1, 1, then 2; stone: 1, 2, 3, 3, then 2.
    assert farthest["water", 1, 10]["answer"] == 1 and closest["stone", 1, 10]["answer"] == 1
    assert farthest["water", 1, 10]["evidence"] == list(range(1, 11))
    # The extreme is held at two steps (water one move away before steps 3 and 4, stone three): no
    # single step is the answer, so the question is not asked.
    assert ("water", 1, 10) not in closest and ("stone", 1, 10) not in farthest
    assert ("water", 2, 12) not in closest and ("stone", 2, 12) not in farthest


def test_closest_and_farthest_step_over_what_was_seen(con):
    closest = by(candidates(con, "crafter.closest_step_in_range", "c3"), "material", "L", "R")
    farthest = by(candidates(con, "crafter.farthest_step_in_range", "c3"), "material", "L", "R")
    # Before step t (t <= 10) the player is at x = t. Only the water at x = 0 has been seen before step 9,
    # so the moves to reach seen water before steps 1..10 are 0, 1, ..., 7, then 1 (the water at x = 11
    # seen) and 0. On the true map they would be 0, 1, 2, 3, 4, 4, 3, 2, 1, 0: farthest at step 5.
    assert farthest["water", 1, 10]["answer"] == 8
    # Closest: 0 both before step 1 and before step 10, a tie: not asked.
    assert ("water", 1, 10) not in closest
    assert farthest["water", 2, 11]["answer"] == 8 and farthest["water", 3, 12]["answer"] == 8
    # Grass is underfoot before every step: every distance 0, nothing to ask.
    assert not any(m == "grass" for m, _, _ in closest)


def test_jericho_room_graph_templates(con):
    # j1: room 10 -north-> 20 -east-> 21 -west-> 20 (tests/support/handmade.py).
    paths = {k: r["answer"] for k, r in by(candidates(con, "jericho.path_length_between_steps", "j1"), "i", "j").items()}
    assert paths == {(1, 3): 1, (1, 4): 2, (1, 5): 2, (1, 6): 1, (2, 4): 2, (2, 5): 2, (2, 6): 1, (3, 5): 1,
                     (4, 6): 1}
    within = {k: r["answer"] for k, r in by(candidates(con, "jericho.rooms_within_k", "j1"), "t", "k").items()}
    assert (3, 1) not in within and (4, 3) not in within  # no known way out of the room yet: not asked
    assert within[6, 1] == 1 and within[6, 3] == 1
    reachable = {k: r["answer"] for k, r in by(candidates(con, "jericho.reachable_within_k", "j1"),
                                                  "t", "target", "k").items()}
    # From room 20 before step 6 only room 21 is known to be reachable; the way back to 10 was never
    # taken, so "can you reach 10" is unknowable and not asked (never answered "no").
    assert reachable == {(6, 21, 1): True, (6, 21, 2): True, (6, 21, 3): True}
    # The only known two-move walk from room 20 goes there and back; closer-of-two needs room 10,
    # which cannot be reached: neither template asks anything here.
    assert candidates(con, "jericho.follow_moves", "j1") == []
    assert candidates(con, "jericho.closer_of_two_rooms", "j1") == []
