"""Spatial primitives over Crafter's grid: the map as it was before a step, what the player had seen
of it, breadth-first search to the nearest cell of a material, and walks.

Every definition used here (before step t, seen cells, walkability, reaching, distance, route,
direction, walk) is written once in CONVENTIONS.md, section Space.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from qtc.dsl import crafter_data



def next_to(cells: np.ndarray) -> np.ndarray:
    """The cells that have a left, right, upper or lower neighbour in `cells`."""
    near = np.zeros_like(cells)
    near[1:, :] |= cells[:-1, :]
    near[:-1, :] |= cells[1:, :]
    near[:, 1:] |= cells[:, :-1]
    near[:, :-1] |= cells[:, 1:]
    return near


STATES_KEPT = 16  # map states kept per episode


@dataclass(frozen=True)
class NearestAnswers:
    distance: int
    routes: list[tuple[int, int]]
    direction: str | None


@dataclass(frozen=True)
class Nearest:
    """The nearest cells of a material from a position: how far, where to stand, what is reached."""
    distance: int
    goals: tuple[tuple[int, int], ...]  # cells to stand on, each `distance` moves away, sorted
    targets: tuple[tuple[int, int], ...]  # cells of the material reached from a goal, sorted


class MapState:
    """The map as a search sees it before a step: which cells are known, their materials, which a route
    may cross; with the flat lists the search reads and each material's goal cells, kept for reuse."""

    def __init__(self, known: np.ndarray, materials: np.ndarray, passable: np.ndarray):
        self.known, self.materials, self.passable = known, materials, passable
        self.open_cells = passable.ravel().tolist()
        self._goals: dict[tuple[int, bool], tuple[np.ndarray, list]] = {}

    def goals(self, material: int, walkable: bool) -> tuple[np.ndarray, list]:
        """(the known cells of `material`, the flat goal flags: on it if walkable, else beside it)."""
        key = (material, walkable)
        if key not in self._goals:
            target_cells = (self.materials == material) & self.known
            goal_cells = target_cells if walkable else next_to(target_cells)
            self._goals[key] = (target_cells, goal_cells.ravel().tolist())
        return self._goals[key]


def nearest_goals(state: MapState, goals: list, start: tuple[int, int]) -> tuple[int, list] | None:
    """Breadth-first search from `start` over passable cells, stopped at the first layer holding goal
    cells: (its distance, its goal cells), or None if no goal can be reached. The start counts as
    reached whatever it holds. Stopping early keeps the cost to the area within the answer's reach."""
    width, height = state.passable.shape
    x, y = start
    if not (0 <= x < width and 0 <= y < height):
        return None
    open_cells = state.open_cells
    first = x * height + y
    visited = bytearray(width * height)
    visited[first] = 1
    frontier, distance = [first], 0
    while frontier:
        hits = [cell for cell in frontier if goals[cell]]
        if hits:
            return distance, sorted(divmod(cell, height) for cell in hits)
        following = []
        for cell in frontier:
            cx, cy = divmod(cell, height)
            for neighbour, inside in ((cell - height, cx > 0), (cell + height, cx < width - 1),
                                      (cell - 1, cy > 0), (cell + 1, cy < height - 1)):
                if inside and open_cells[neighbour] and not visited[neighbour]:
                    visited[neighbour] = 1
                    following.append(neighbour)
        frontier, distance = following, distance + 1
    return None


def nearest(state: MapState, start: tuple[int, int], material: int, walkable: bool) -> Nearest | None:
    """The nearest known cells of `material` from `start` (None if none can be reached): stand on one if
    the material is `walkable`, else beside one."""
    target_cells, goals = state.goals(material, walkable)
    found = nearest_goals(state, goals, start)
    if found is None:
        return None
    distance, goals = found
    if walkable:
        return Nearest(distance, tuple(goals), tuple(goals))
    near_goals = np.zeros_like(target_cells)
    for gx, gy in goals:
        near_goals[gx, gy] = True
    targets = tuple(sorted(map(tuple, np.argwhere(target_cells & next_to(near_goals)).tolist())))
    return Nearest(distance, tuple(goals), targets)


def direction_of(dx: int, dy: int) -> str | None:
    """The main direction of an offset: left/right when it is mostly sideways, up/down when mostly
    vertical, None on a diagonal or no offset."""
    if abs(dx) == abs(dy):
        return None
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def walk_end(materials: np.ndarray, known: np.ndarray, start: tuple[int, int], offset: tuple[int, int],
             tiles: int, names: tuple[str, ...]) -> str | None:
    """The material under the player after walking `tiles` cells in one direction from `start`, if every
    move would succeed by Crafter's movement rule (the entered cell is one the player may enter:
    Player.walkable, lava included); lava ends a walk, so it may only be the last cell. None if a move
    would be blocked, a cell is unknown, or the walk leaves the map."""
    width, height = materials.shape
    x, y = start
    for tile in range(1, tiles + 1):
        x, y = x + offset[0], y + offset[1]
        if not (0 <= x < width and 0 <= y < height) or not known[x, y]:
            return None
        name = names[materials[x, y]]
        if name not in crafter_data.PLAYER_ENTERABLE:
            return None
        if name not in crafter_data.WALKABLE and tile < tiles:
            return None
    return names[materials[x, y]]


class CrafterMaps:
    """One episode's map history and view history, rebuilt from its trace tables."""

    def __init__(self, names: tuple[str, ...], initial: np.ndarray, changes: np.ndarray,
                 positions: dict[int, tuple[int, int]], views: np.ndarray):
        self.names = names  # material id -> name
        self.index = {name: i for i, name in enumerate(names)}
        self.initial = initial  # (width, height) material ids at reset
        self.changes = changes  # rows (step, x, y, material id after), sorted by step
        self.positions = positions  # step -> (x, y) before the step's action
        self.views = views  # rows (step, x, y, material id), sorted by step: the view after each step
        self.walkable_ids = np.array([self.index[m] for m in crafter_data.WALKABLE if m in self.index])
        self._states: OrderedDict = OrderedDict()
        self._index_sightings()

    def map_before(self, step: int) -> np.ndarray:
        """Material ids of every cell before the action of `step` (changes of steps < step applied)."""
        materials = self.initial.copy()
        applied = self.changes[self.changes[:, 0] < step] if len(self.changes) else self.changes
        for _, x, y, material in applied:  # in step order, so a later change wins
            materials[x, y] = material
        return materials

    def _index_sightings(self) -> None:
        """When each cell was first seen and as what, and every sighting of the few cells that were seen
        as different materials over time: enough to rebuild what was seen by any step cheaply."""
        shape = self.initial.shape
        self._first_seen = np.full(shape, np.iinfo(np.int64).max, dtype=np.int64)
        self._first_material = np.zeros(shape, dtype=self.initial.dtype)
        self._changing: list[tuple[int, int, np.ndarray, np.ndarray]] = []
        if not len(self.views):
            return
        keys = self.views[:, 1] * shape[1] + self.views[:, 2]
        order = np.lexsort((self.views[:, 0], keys))  # by cell, then by step
        keys, rows = keys[order], self.views[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        firsts = rows[starts]
        self._first_seen[firsts[:, 1], firsts[:, 2]] = firsts[:, 0]
        self._first_material[firsts[:, 1], firsts[:, 2]] = firsts[:, 3]
        for begin, end in zip(starts, np.r_[starts[1:], len(rows)]):
            sightings = rows[begin:end]
            if (sightings[:, 3] != sightings[0, 3]).any():
                self._changing.append((sightings[0, 1], sightings[0, 2], sightings[:, 0], sightings[:, 3]))

    def seen_before(self, step: int) -> tuple[np.ndarray, np.ndarray]:
        """(known, materials): the cells seen in the views after steps 0..step-1, each with the
        material it had when last seen; materials elsewhere are meaningless."""
        known = self._first_seen < step
        materials = self._first_material.copy()
        for x, y, steps, seen_as in self._changing:
            last = np.searchsorted(steps, step) - 1  # the last sighting before `step`
            if last >= 0:
                materials[x, y] = seen_as[last]
        return known, materials

    def state(self, step: int, cells: str) -> MapState:
        """The map before `step`: the true map (cells='all') or what was seen (cells='seen'). Kept for
        the last few asked: a template asks about many materials and steps. The true map is the same
        for every step between two changes, so it is kept per number of changes applied."""
        if cells not in ("seen", "all"):
            raise ValueError(f"cells must be 'seen' or 'all', not {cells!r}")
        key = ("seen", step) if cells == "seen" else ("all", int(np.searchsorted(self.changes[:, 0], step)))
        if key in self._states:
            self._states.move_to_end(key)
        else:
            if cells == "seen":
                known, materials = self.seen_before(step)
            else:
                known, materials = np.ones(self.initial.shape, dtype=bool), self.map_before(step)
            self._states[key] = MapState(known, materials, self.passable(known, materials))
            if len(self._states) > STATES_KEPT:
                self._states.popitem(last=False)
        return self._states[key]

    def passable(self, known: np.ndarray, materials: np.ndarray) -> np.ndarray:
        return known & np.isin(materials, self.walkable_ids)

    # ---- the questions, as of before `step`; None outside the episode ----

    def nearest(self, step: int, material: str, cells: str) -> NearestAnswers | None:
        """The nearest cells of `material` from the player: how far, every shortest route as (dx, dy) to
        where it ends, and the one direction they all lie in (None if they do not)."""
        if step not in self.positions or material not in self.index:
            return None
        x, y = self.positions[step]
        found = nearest(self.state(step, cells), (x, y), self.index[material], material in crafter_data.WALKABLE)
        if found is None:
            return None
        directions = {direction_of(tx - x, ty - y) for tx, ty in found.targets}
        return NearestAnswers(found.distance, [(gx - x, gy - y) for gx, gy in found.goals],
                              directions.pop() if len(directions) == 1 else None)

    def walk(self, step: int, direction: str, tiles: int, cells: str) -> str | None:
        offset = crafter_data.MOVES.get(f"move_{direction}")
        if step not in self.positions or offset is None or tiles < 1:
            return None
        state = self.state(step, cells)
        return walk_end(state.materials, state.known, self.positions[step], offset, tiles, self.names)

    def beside(self, step: int, material: str) -> bool | None:
        """Whether a cell next to the player is of `material` (cells beside the player are in view)."""
        if step not in self.positions:
            return None
        if material not in self.index:
            return False
        return bool(next_to(self.state(step, "all").materials == self.index[material])[self.positions[step]])
