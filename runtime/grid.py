"""Spatial primitives over Crafter's grid: the map as it was before a step, what the player had seen
of it, breadth-first search to the nearest cell of a material, and walks.

Every definition used here (before step t, seen cells, walkability, reaching, distance, route,
direction, walk) is written once in CONVENTIONS.md, section Space.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import crafter_data

UNREACHED = -1
# (dx, dy) of the four moves; y grows downwards.
OFFSETS = tuple(crafter_data.MOVES.values())


def bfs_distances(passable: np.ndarray, start: tuple[int, int]) -> np.ndarray:
    """Moves from `start` to every cell over passable cells (UNREACHED where there is no way).

    The start cell counts as reached whatever it holds. The search advances a whole frontier per
    move with array shifts, so its cost is one array operation per unit of distance."""
    width, height = passable.shape
    distances = np.full((width, height), UNREACHED, dtype=np.int64)
    x, y = start
    if not (0 <= x < width and 0 <= y < height):
        return distances
    distances[x, y] = 0
    frontier = np.zeros((width, height), dtype=bool)
    frontier[x, y] = True
    visited = frontier.copy()
    distance = 0
    while frontier.any():
        distance += 1
        grown = np.zeros_like(frontier)
        grown[1:, :] |= frontier[:-1, :]
        grown[:-1, :] |= frontier[1:, :]
        grown[:, 1:] |= frontier[:, :-1]
        grown[:, :-1] |= frontier[:, 1:]
        frontier = grown & passable & ~visited
        visited |= frontier
        distances[frontier] = distance
    return distances


def next_to(cells: np.ndarray) -> np.ndarray:
    """The cells that have a left, right, upper or lower neighbour in `cells`."""
    near = np.zeros_like(cells)
    near[1:, :] |= cells[:-1, :]
    near[:-1, :] |= cells[1:, :]
    near[:, 1:] |= cells[:, :-1]
    near[:, :-1] |= cells[:, 1:]
    return near


@dataclass(frozen=True)
class Nearest:
    """The nearest cells of a material from a position: how far, where to stand, what is reached."""
    distance: int
    goals: tuple[tuple[int, int], ...]  # cells to stand on, each `distance` moves away, sorted
    targets: tuple[tuple[int, int], ...]  # cells of the material reached from a goal, sorted


def nearest(materials: np.ndarray, known: np.ndarray, distances: np.ndarray, material: int,
            walkable: bool) -> Nearest | None:
    """The nearest known cells of `material`, given the move distances from the player (None if none
    can be reached). `materials` holds material ids; `known` marks the cells that may be used."""
    target_cells = (materials == material) & known
    if not target_cells.any():
        return None
    goal_cells = target_cells if walkable else next_to(target_cells)
    reached = goal_cells & (distances != UNREACHED)
    if not reached.any():
        return None
    distance = int(distances[reached].min())
    goals = tuple(sorted(map(tuple, np.argwhere(reached & (distances == distance)).tolist())))
    if walkable:
        targets = goals
    else:
        near_goals = np.zeros_like(reached)
        for gx, gy in goals:
            near_goals[gx, gy] = True
        targets = tuple(sorted(map(tuple, np.argwhere(target_cells & next_to(near_goals)).tolist())))
    return Nearest(distance, goals, targets)


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

    def map_before(self, step: int) -> np.ndarray:
        """Material ids of every cell before the action of `step` (changes of steps < step applied)."""
        materials = self.initial.copy()
        applied = self.changes[self.changes[:, 0] < step] if len(self.changes) else self.changes
        for _, x, y, material in applied:  # in step order, so a later change wins
            materials[x, y] = material
        return materials

    def seen_before(self, step: int) -> tuple[np.ndarray, np.ndarray]:
        """(known, materials): the cells seen in the views after steps 0..step-1, each with the
        material it had when last seen; materials elsewhere are meaningless."""
        rows = self.views[self.views[:, 0] < step] if len(self.views) else self.views
        known = np.zeros(self.initial.shape, dtype=bool)
        materials = np.zeros(self.initial.shape, dtype=self.initial.dtype)
        if len(rows):
            # The last sighting of each cell: the first occurrence in the reversed rows.
            reversed_rows = rows[::-1]
            keys = reversed_rows[:, 1] * self.initial.shape[1] + reversed_rows[:, 2]
            _, first = np.unique(keys, return_index=True)
            last = reversed_rows[first]
            known[last[:, 1], last[:, 2]] = True
            materials[last[:, 1], last[:, 2]] = last[:, 3]
        return known, materials

    def state(self, step: int, cells: str) -> tuple[np.ndarray, np.ndarray]:
        """(known, materials) before `step`: the true map (cells='all') or what was seen (cells='seen')."""
        if cells == "seen":
            return self.seen_before(step)
        return np.ones(self.initial.shape, dtype=bool), self.map_before(step)

    def passable(self, known: np.ndarray, materials: np.ndarray) -> np.ndarray:
        return known & np.isin(materials, self.walkable_ids)
