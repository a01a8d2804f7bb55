"""The Crafter grid primitives: against brute force on random grids, against Crafter's own movement
rule, on hand-drawn maps with answers worked out by hand, and on a recorded episode whose map changes."""

from __future__ import annotations

import crafter
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from qtc.dsl import crafter_data
from qtc.runtime.spatial.grid import (CellsHistory, CrafterMaps, MapState, MaterialSearch, VersionCells, nearest,
                                     walk_end)

NAMES = crafter_data.MATERIALS
ID = {name: i for i, name in enumerate(NAMES)}
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))


# ---- brute force: no frontiers, no array shifts; relax until nothing changes ----

def brute_distances(passable: np.ndarray, start) -> dict:
    width, height = passable.shape
    distances = {start: 0}
    changed = True
    while changed:
        changed = False
        for x in range(width):
            for y in range(height):
                if not passable[x, y]:
                    continue
                for dx, dy in NEIGHBOURS:
                    if (x + dx, y + dy) in distances and distances[(x + dx, y + dy)] + 1 < distances.get((x, y), 10**9):
                        distances[(x, y)] = distances[(x + dx, y + dy)] + 1
                        changed = True
    return distances


# Walkability straight from Crafter's data, not through qtc's crafter_data: the oracle stays independent.
WALKABLE = tuple(crafter.constants.walkable)


def brute_passable(materials, known):
    return known & np.isin(materials, [ID[m] for m in WALKABLE])


def brute_nearest(materials, known, start, material: str, distances: dict | None = None):
    """(distance, goals, targets) by enumerating every cell, or None."""
    if distances is None:
        distances = brute_distances(brute_passable(materials, known), start)
    width, height = materials.shape

    def is_target(x, y):
        return 0 <= x < width and 0 <= y < height and known[x, y] and materials[x, y] == ID[material]

    walkable = material in WALKABLE
    goals = {cell: d for cell, d in distances.items()
             if (is_target(*cell) if walkable else any(is_target(cell[0] + dx, cell[1] + dy) for dx, dy in NEIGHBOURS))}
    if not goals:
        return None
    best = min(goals.values())
    nearest_goals = sorted(c for c, d in goals.items() if d == best)
    targets = sorted({(gx + dx, gy + dy) for gx, gy in nearest_goals for dx, dy in ((0, 0),) + NEIGHBOURS
                      if is_target(gx + dx, gy + dy) and (walkable == ((dx, dy) == (0, 0)))})
    return best, nearest_goals, targets


materials_ids = st.sampled_from([ID[m] for m in ("grass", "grass", "sand", "path", "tree", "water", "stone",
                                                 "lava", "coal", "table")])


@st.composite
def grids(draw):
    width, height = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    cells = draw(st.lists(materials_ids, min_size=width * height, max_size=width * height))
    materials = np.array(cells, dtype=np.int16).reshape(width, height)
    known = np.array(draw(st.lists(st.booleans(), min_size=width * height, max_size=width * height))).reshape(width, height)
    start = (draw(st.integers(0, width - 1)), draw(st.integers(0, height - 1)))
    known[start] = True  # the player always sees where it stands
    return materials, known, start


@settings(max_examples=300, deadline=None)
@given(grids(), st.sampled_from(["tree", "water", "grass", "sand", "lava", "table", "coal"]), st.booleans())
def test_nearest_matches_brute_force(grid, material, everything_known):
    materials, known, start = grid
    if everything_known:
        known = np.ones_like(known)
    maps = CrafterMaps(NAMES, materials, np.zeros((0, 4), dtype=np.int64), {1: start}, np.zeros((0, 4), dtype=np.int64))
    found = nearest(MapState(known, materials, maps.passable(known, materials)), start, ID[material],
                    material in crafter_data.WALKABLE)
    expected = brute_nearest(materials, known, start, material)
    if expected is None:
        assert found is None
    else:
        assert (found.distance, list(found.goals), list(found.targets)) == expected
    if everything_known:  # the answers a template reads, through the episode's maps
        answers = nearest_one(maps, 1, material, "all")
        if expected is None:
            assert answers is None
        else:
            distance, goals, targets = expected
            ways = {("right" if tx > start[0] else "left") if abs(tx - start[0]) > abs(ty - start[1]) else
                    ("down" if ty > start[1] else "up") if abs(ty - start[1]) > abs(tx - start[0]) else None
                    for tx, ty in targets}
            assert (answers.distance, answers.routes, answers.direction) == (
                distance, [(gx - start[0], gy - start[1]) for gx, gy in goals], ways.pop() if len(ways) == 1 else None)


def crafter_walk(materials, start, direction: str, tiles: int):
    """Crafter's own Player.move on a world holding these materials: the terrain after `tiles` moves if
    each move succeeds and lava (death) is not entered before the last, else None."""
    width, height = materials.shape
    world = crafter.engine.World((width, height), crafter.constants.materials, (12, 12))
    world.reset(seed=0)
    for x in range(width):
        for y in range(height):
            world[(x, y)] = NAMES[materials[x, y]]
    player = crafter.objects.Player(world, start)
    world.add(player)
    entered = []
    for _ in range(tiles):
        if not player.move(crafter_data.MOVES[f"move_{direction}"]):
            return None
        entered.append(world[player.pos][0])
    return None if "lava" in entered[:-1] else entered[-1]


@settings(max_examples=300, deadline=None)
@given(grids(), st.sampled_from(["left", "right", "up", "down"]), st.integers(1, 4))
def test_walk_follows_crafters_movement_rule(grid, direction, tiles):
    materials, _, start = grid
    everything = np.ones(materials.shape, dtype=bool)
    offset = crafter_data.MOVES[f"move_{direction}"]
    assert walk_end(materials, everything, start, offset, tiles, NAMES) == crafter_walk(materials, start, direction, tiles)


# ---- a hand-drawn map ----

LEGEND = {".": "grass", "T": "tree", "W": "water", "S": "stone", "L": "lava", "P": "path", "t": "table"}
HAND_MAP = """
TT.W
...W
..S.
L...
"""  # the player stands at (1, 2), below the second tree


def drawn(text: str) -> np.ndarray:
    rows = [line for line in text.strip("\n").splitlines()]
    return np.array([[ID[LEGEND[ch]] for ch in row] for row in rows], dtype=np.int16).T


def maps_of(text: str, position, changes=(), views=()) -> CrafterMaps:
    return CrafterMaps(NAMES, drawn(text), np.array(changes, dtype=np.int64).reshape(-1, 4),
                       {step: position for step in range(1, 10)}, np.array(views, dtype=np.int64).reshape(-1, 4))


def nearest_one(maps: CrafterMaps, step: int, material: str, cells: str):
    """The nearest-cells answers of one row."""
    return maps.nearest(np.array([step]), np.array([material], dtype=object), np.array([cells], dtype=object))[0]


def answers(maps: CrafterMaps, step: int, material: str, cells: str = "all"):
    found = nearest_one(maps, step, material, cells)
    return None if found is None else (found.distance, found.routes, found.direction)


def test_hand_drawn_map_answers():
    maps = maps_of(HAND_MAP, (1, 2))
    # The tree above: one move up to stand below it, facing up.
    assert answers(maps, 1, "tree") == (1, [(0, -1)], "up")
    # Water: stand at (2, 1), one right and one up, with the water to the right.
    assert answers(maps, 1, "water") == (2, [(1, -1)], "right")
    # Stone: already next to it.
    assert answers(maps, 1, "stone") == (0, [(0, 0)], "right")
    # Lava at (0, 3): two equally short places to stand, and the lava lies diagonally: no direction.
    assert answers(maps, 1, "lava") == (1, [(-1, 0), (0, 1)], None)
    assert answers(maps, 1, "diamond") is None
    everything = np.ones((4, 4), dtype=bool)
    assert walk_end(drawn(HAND_MAP), everything, (1, 2), (0, 1), 1, NAMES) == "grass"
    assert walk_end(drawn(HAND_MAP), everything, (1, 2), (1, 0), 1, NAMES) is None  # stone blocks
    assert walk_end(drawn(HAND_MAP), everything, (1, 2), (-1, 0), 2, NAMES) is None  # off the map
    row = drawn(".PL.")
    assert walk_end(row, np.ones(row.shape, dtype=bool), (0, 0), (1, 0), 2, NAMES) == "lava"
    assert walk_end(row, np.ones(row.shape, dtype=bool), (0, 0), (1, 0), 3, NAMES) is None  # dead in the lava


def test_a_placed_table_is_walked_around():
    field = """
.....
.....
SSSSW
"""
    # At step 2 the player places a table at (2, 1), on the straight way to the water; the map before
    # step 3 has it, and the way to stand above the water goes round it through the top row.
    maps = maps_of(field, (0, 1), changes=[(2, 2, 1, ID["table"])])
    assert answers(maps, 2, "water") == (4, [(4, 0)], "right")
    assert answers(maps, 3, "water") == (6, [(4, 0)], "right")
    assert answers(maps, 2, "table") is None
    assert answers(maps, 3, "table") == (1, [(1, 0)], "right")


def test_seen_cells_only_and_as_last_seen():
    open_field = """
.....
.T...
.....
"""
    every_cell = [(0, x, y, ID["grass"]) for x in range(5) for y in range(3) if (x, y) != (1, 1)]
    # Step 0's view shows the whole field with the tree; the tree is felled at step 2 out of view.
    maps = maps_of(open_field, (4, 1), changes=[(2, 1, 1, ID["grass"])],
                   views=every_cell + [(0, 1, 1, ID["tree"])])
    assert answers(maps, 3, "tree", "all") is None
    assert answers(maps, 3, "tree", "seen") == (2, [(-2, 0)], "left")
    # Only the player's row was seen: the way round through unseen cells does not count.
    wall = """
..S..
T.S..
.....
"""
    row_seen = [(0, x, 0, ID[LEGEND[c]]) for x, c in enumerate("..S..")]
    maps = maps_of(wall, (4, 0), views=row_seen + [(0, 0, 1, ID["tree"])])
    assert maps.state(1, "seen").known.sum() == 6
    assert answers(maps, 1, "tree", "seen") is None  # the tree was seen, but no seen way leads to it
    assert answers(maps, 1, "tree", "all") == (6, [(-4, 2), (-3, 1)], "left")


# ---- a recorded episode: the primitives in DuckDB against brute force on Crafter's live map ----

def test_recorded_episode_against_the_live_map(crafter_recording, trace_db):
    episode = trace_db.execute("SELECT episode_id FROM episodes WHERE env = 'crafter'").fetchall()[0][0]
    initial = live_ids(crafter_recording.maps[0])
    differs_from_initial = False
    for step, live in crafter_recording.maps.items():
        if step + 1 >= len(crafter_recording.live):
            continue
        state = crafter_recording.live[step]  # the live state after `step`: before step + 1
        start = (state["x"], state["y"])
        materials = live_ids(live)
        everything = np.ones(materials.shape, dtype=bool)
        distances = brute_distances(brute_passable(materials, everything), start)
        initial_distances = brute_distances(brute_passable(initial, everything), start)
        for material in ("tree", "water", "stone", "table", "coal", "sand", "lava"):
            expected = brute_nearest(materials, everything, start, material, distances)
            got = trace_db.execute("SELECT qtc_nearest_distance(?, ?, ?, 'all')",
                                   [episode, step + 1, material]).fetchall()[0][0]
            assert got == (None if expected is None else expected[0]), (step, material)
            beside = any(0 <= start[0] + dx < materials.shape[0] and 0 <= start[1] + dy < materials.shape[1]
                         and live[start[0] + dx, start[1] + dy] == material for dx, dy in NEIGHBOURS)
            assert trace_db.execute("SELECT qtc_next_to(?, ?, ?)", [episode, step + 1, material]).fetchall()[0][0] == beside
            on_initial = brute_nearest(initial, everything, start, material, initial_distances)
            differs_from_initial |= on_initial != expected
    # The episode fells trees and places a table: answers on the map as it was differ from the reset map.
    assert differs_from_initial


def live_ids(names: np.ndarray) -> np.ndarray:
    return np.vectorize(ID.__getitem__)(names).astype(np.int16)


# ---- map versions and searches kept between questions ----

@st.composite
def histories(draw):
    """A small map with changes and views at random steps, and steps to ask about in any order."""
    materials, _, _ = draw(grids())
    width, height = materials.shape
    cell = st.tuples(st.integers(0, width - 1), st.integers(0, height - 1))

    def rows(max_size):
        drawn = draw(st.lists(st.tuples(st.integers(0, 8), cell, materials_ids), max_size=max_size))
        by_cell = {(step, xy): material for step, xy, material in drawn}  # a cell once per step
        return np.array(sorted((step, x, y, m) for (step, (x, y)), m in by_cell.items()), dtype=np.int64).reshape(-1, 4)
    asked = draw(st.lists(st.integers(0, 10), min_size=1, max_size=12))
    return materials, rows(6), rows(20), asked


@settings(max_examples=200, deadline=None)
@given(histories())
def test_map_versions_match_a_rebuild_from_every_row(history):
    """The map before a step, built forward version by version (and again from the start when an
    earlier step is asked), is the map rebuilt from every change and view before the step, whatever
    the order of the rows given (the store's are read in no order: spatial/crafter.py)."""
    initial, changes, views, asked = history
    maps = CrafterMaps(NAMES, initial, changes[::-1], {}, views[::-1])
    for step in asked:
        true_map = initial.copy()
        for s, x, y, material in changes:
            if s < step:
                true_map[x, y] = material
        known, last_seen = np.zeros(initial.shape, dtype=bool), np.zeros_like(initial)
        for s, x, y, material in views:
            if s < step:
                known[x, y], last_seen[x, y] = True, material
        state = maps.state(step, "all")
        assert state.known.all() and (state.materials == true_map).all()
        seen = maps.state(step, "seen")
        assert (seen.known == known).all() and (seen.materials[known] == last_seen[known]).all()


@settings(max_examples=200, deadline=None)
@given(histories(), st.lists(st.integers(0, 10), max_size=12))
def test_cell_sets_made_from_the_version_before_are_those_made_from_the_map(history, more):
    """A version's cell sets, made from the one before it by the cells its step changed (and again from
    a kept state when an earlier version is asked), are those VersionCells.of makes from the whole map
    of that version, for steps asked in any order (with a state kept every version, every other one, and
    one at the start only)."""
    initial, changes, views, asked = history
    maps = CrafterMaps(NAMES, initial, changes, {}, views)
    for every in (1, 2, 1000):
        for kind, history_of_kind in maps.maps.items():
            made = CellsHistory(history_of_kind, maps.walkable)
            made.CHECKPOINT = every
            for version in map(history_of_kind.version, asked + more):
                known, materials = history_of_kind.at(version)
                assert made.at(version) == VersionCells.of(MapState(known, materials, maps.passable(known, materials)))


@settings(max_examples=200, deadline=None)
@given(grids(), st.sampled_from(["tree", "water", "grass", "table", "lava"]),
       st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=8))
def test_one_search_answers_many_starts(grid, material, starts):
    """A search grown for one start and reused for the next (nearer or farther) gives what a fresh
    search and brute force give."""
    materials, known, _ = grid
    width, height = materials.shape
    starts = [(x % width, y % height) for x, y in starts]
    search = MaterialSearch(VersionCells.of(MapState(known, materials, brute_passable(materials, known))),
                            ID[material], material in crafter_data.WALKABLE)
    for start in starts:
        found = search.nearest(start)
        expected = brute_nearest(materials, known, start, material)
        assert (None if found is None else (found.distance, list(found.goals), list(found.targets))) == expected


def test_a_batch_in_any_order_answers_as_rows_one_at_a_time(crafter_trace_dir):
    """One statement over many rows (shuffled, repeated, with nulls and an unknown episode), split by
    episode and answered in step order, gives each row what asking it alone, on a store of its own
    and in another order, gives."""
    from qtc.runtime.trace.store import open_store
    batch, alone = open_store(crafter_trace_dir), open_store(crafter_trace_dir)
    try:
        asked = batch.execute(
            "SELECT e, step, material FROM (SELECT episode_id AS e, step FROM crafter_steps UNION ALL "
            "SELECT 'nowhere', 3 UNION ALL SELECT NULL, 4) CROSS JOIN (VALUES ('tree'), ('water'), ('stone'), "
            "('table'), (NULL)) m(material), range(2) ORDER BY hash(e, step, material, range)").fetchall()
        calls = ("qtc_nearest_routes({}, {}, {}, 'seen'), qtc_nearest_distance({}, {}, {}, 'all'), "
                 "qtc_next_to({}, {}, {})")
        answers = batch.execute(f"SELECT {calls.format(*['e', 'step', 'material'] * 3)} "
                                "FROM (SELECT unnest(?, recursive := true))",
                                [[{"e": e, "step": s, "material": m} for e, s, m in asked]]).fetchall()
        assert len(answers) == len(asked) and any(row[0] for row in answers)
        for row, answer in list(zip(asked, answers))[::-23]:
            assert alone.execute(f"SELECT {calls.format(*['?'] * 9)}", list(row) * 3).fetchone() == answer
    finally:
        batch.close()
        alone.close()
