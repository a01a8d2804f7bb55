"""Spatial primitives over Crafter's grid: the map as it was before a step, what the player had seen
of it, breadth-first search to the nearest cell of a material, and walks.

Every definition used here (before step t, seen cells, walkability, reaching, distance, route,
direction, walk) is written once in CONVENTIONS.md, section Space.

The map a question reads changes only at some steps: the true map where a step changed a cell, the
seen map where a step's view showed a cell for the first time or as another material. So each map is
kept as a history of versions (`MapHistory`), each built from the one before it, as are the cell sets
searches read (`CellsHistory`), and a search is kept per version and material (`MaterialSearch`): one
breadth-first search out from the material's cells answers the player's position at every step of that
version.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import repeat

import numpy as np

from qtc.dsl import crafter_data

from .cache import LRU

STATES_KEPT = 8  # maps kept per episode, for walks and what is next to the player
VERSIONS_KEPT = 1024  # map versions kept per episode as cell sets (about 7 kB each), for searches
SEARCHES_KEPT = 64  # (map version, material) searches kept per episode
ANSWERS_KEPT = 1 << 14  # answers kept per episode, by map version, material and position: a range
                        # question asks the same steps for many candidates, in many batches


class CellSets:
    """Sets of cells of a width x height map held as Python integers, one bit per cell (bit
    x * height + y): a whole breadth-first layer is then a few integer operations, whatever its size."""

    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.every = (1 << width * height) - 1
        first_row = sum(1 << x * height for x in range(width))  # the cells with y = 0
        self._not_first_row = self.every & ~first_row
        self._not_last_row = self.every & ~(first_row << height - 1)

    def of(self, mask: np.ndarray) -> int:
        return int.from_bytes(np.packbits(mask, axis=None, bitorder="little").tobytes(), "little")

    def cell(self, x: int, y: int) -> int:
        return 1 << x * self.height + y

    def inside(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def next_to(self, cells: int) -> int:
        """The cells that have a left, right, upper or lower neighbour in `cells`."""
        return (((cells << 1) & self._not_first_row) | ((cells >> 1) & self._not_last_row)
                | ((cells << self.height) & self.every) | (cells >> self.height))

    def listed(self, cells: int) -> tuple[tuple[int, int], ...]:
        """The cells as (x, y), sorted."""
        found = []
        while cells:
            lowest = cells & -cells
            found.append(divmod(lowest.bit_length() - 1, self.height))
            cells ^= lowest
        return tuple(found)


@lru_cache(maxsize=8)
def cell_sets(shape: tuple[int, int]) -> CellSets:
    return CellSets(*shape)


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


@dataclass(frozen=True)
class MapState:
    """The map at one version: which cells are known, their materials, which a route may cross."""
    known: np.ndarray
    materials: np.ndarray
    passable: np.ndarray


@dataclass(frozen=True)
class VersionCells:
    """One map version as cell sets, all a search reads: where a route may go, and where each known
    material is. Far smaller than the map, so many versions are kept."""
    cells: CellSets
    passable: int
    materials: dict[int, int]  # material id -> its known cells

    @classmethod
    def of(cls, state: MapState) -> "VersionCells":
        cells = cell_sets(state.materials.shape)
        return cls(cells, cells.of(state.passable),
                   {int(material): cells.of((state.materials == material) & state.known)
                    for material in np.unique(state.materials[state.known])})


class DistanceField:
    """The fewest moves from each passable cell to the nearest goal cell, by a breadth-first search out
    from all the goal cells at once, kept as its layers. The search grows one layer at a time and only
    as far as the questions asked so far need: a start near the goals costs a layer or two, and a later
    start reuses every layer already found."""

    def __init__(self, cells: CellSets, passable: int, goals: int):
        self.cells, self.passable, self.goals = cells, passable, goals
        self.layers = [goals & passable]  # layers[r]: the passable cells r moves from the nearest goal
        self._open = passable & ~self.layers[0]

    def _grow(self) -> bool:
        """Find the next layer; False once no cell is left to reach."""
        following = self.cells.next_to(self.layers[-1]) & self._open
        if not following:
            return False
        self._open &= ~following
        self.layers.append(following)
        return True

    def distance(self, start: tuple[int, int]) -> int | None:
        """Moves from `start` to the nearest goal cell, or None if none can be reached. The start counts
        as reached whatever it holds; the route then crosses passable cells only."""
        if not self.cells.inside(*start):
            return None
        here = self.cells.cell(*start)
        if self.goals & here:
            return 0
        if self.passable & here:
            entries, first_move = here, 0
        else:  # the first move leaves the start for a passable neighbour
            entries, first_move = self.cells.next_to(here) & self.passable, 1
        moves = 0
        while entries:
            if moves == len(self.layers) and not self._grow():
                break
            if self.layers[moves] & entries:
                return moves + first_move
            moves += 1
        return None

    def nearest_goals(self, start: tuple[int, int], distance: int) -> int:
        """The goal cells `distance` moves from `start` (its distance to the nearest). Every shortest
        route steps down the layers one move at a time, so they are the ends of those descents."""
        cells = self.cells.cell(*start)
        for remaining in range(distance - 1, -1, -1):
            cells = self.cells.next_to(cells) & self.layers[remaining]
        return cells


class MaterialSearch:
    """The nearest known cells of one material on one map version, from any start: stand on one if the
    material is walkable, else beside one."""

    def __init__(self, version: VersionCells, material: int, walkable: bool):
        self.cells, self.walkable = version.cells, walkable
        self.targets = version.materials.get(material, 0)
        goals = self.targets if walkable else self.cells.next_to(self.targets)
        self.field = DistanceField(self.cells, version.passable, goals)

    def distance(self, start: tuple[int, int]) -> int | None:
        return self.field.distance(start)

    def nearest(self, start: tuple[int, int]) -> Nearest | None:
        distance = self.field.distance(start)
        if distance is None:
            return None
        goals = self.field.nearest_goals(start, distance)
        targets = goals if self.walkable else self.targets & self.cells.next_to(goals)
        return Nearest(distance, self.cells.listed(goals), self.cells.listed(targets))


def nearest(state: MapState, start: tuple[int, int], material: int, walkable: bool) -> Nearest | None:
    """The nearest known cells of `material` from `start` (None if none can be reached): stand on one if
    the material is `walkable`, else beside one."""
    return MaterialSearch(VersionCells.of(state), material, walkable).nearest(start)


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


class MapHistory:
    """A map that changes before some steps, kept as versions: version v has the cells of the first v
    changing steps applied, and a step's cells apply before every later step. A version is built from
    the last one built, forward, by the cells each step changed (from the start when asked for an
    earlier one)."""

    def __init__(self, known: np.ndarray, materials: np.ndarray, cells: np.ndarray):
        """`cells`: rows (step, x, y, material id), each cell at most once per step."""
        self._cells = cells[np.argsort(cells[:, 0], kind="stable")]
        steps, starts = np.unique(self._cells[:, 0], return_index=True)
        self._steps = steps.tolist()
        self._bounds = np.append(starts, len(self._cells)).tolist()
        self.initial = (known, materials)
        self._rewind()

    def _rewind(self) -> None:
        self._version, self._known, self._materials = 0, self.initial[0].copy(), self.initial[1].copy()

    def version(self, step: int) -> int:
        """The version of the map before `step`: how many changing steps come before it."""
        return bisect_left(self._steps, step)

    def versions(self, steps: np.ndarray) -> np.ndarray:
        """`version` of each of `steps`, at once."""
        return np.searchsorted(self._steps, steps, side="left")

    def at(self, version: int) -> tuple[np.ndarray, np.ndarray]:
        """(known, materials) of a version."""
        if version < self._version:
            self._rewind()
        while self._version < version:
            rows = self.changed(self._version)
            self._known[rows[:, 0], rows[:, 1]] = True
            self._materials[rows[:, 0], rows[:, 1]] = rows[:, 2]
            self._version += 1
        return self._known.copy(), self._materials.copy()

    def changed(self, version: int) -> np.ndarray:
        """The cells that make version + 1 of version: rows (x, y, material id)."""
        return self._cells[self._bounds[version]:self._bounds[version + 1], 1:]


class CellsHistory:
    """The versions of a map history as cell sets, each made from the one before it by the cells its
    step changed, a bit a cell, rather than from the whole map as VersionCells.of makes one (a pass over
    the map per material): a version of the seen map changes a few of 4,096 cells (the 30 scripted
    episodes' 3,049 versions, in order: 0.06 s against 0.43 s). Built forward, as the history is; asked
    for an earlier version, it starts again from the last state kept at or before it (one every
    CHECKPOINT versions)."""

    CHECKPOINT = 16

    def __init__(self, history: MapHistory, walkable: np.ndarray):
        known, materials = history.initial
        first = VersionCells.of(MapState(known, materials, known & walkable[materials]))
        self.history, self.cells, self._walkable = history, first.cells, walkable.tolist()
        self._kept = [(bytearray(known.ravel().tobytes()), array("q", materials.ravel().tolist()), first.materials,
                       first.passable)]
        self._start_at(0)

    def _start_at(self, kept: int) -> None:
        known, materials, sets, passable = self._kept[kept]
        self._version = kept * self.CHECKPOINT
        self._known, self._materials, self._sets, self._passable = known[:], materials[:], dict(sets), passable

    def at(self, version: int) -> VersionCells:
        if version < self._version:
            self._start_at(min(version // self.CHECKPOINT, len(self._kept) - 1))
        while self._version < version:
            self._apply(self.history.changed(self._version).tolist())
            self._version += 1
            if self._version == len(self._kept) * self.CHECKPOINT:
                self._kept.append((self._known[:], self._materials[:], dict(self._sets), self._passable))
        return VersionCells(self.cells, self._passable,
                            {material: cells for material, cells in self._sets.items() if cells})

    def _apply(self, rows: list[list[int]]) -> None:
        height = self.cells.height
        for x, y, material in rows:
            index = x * height + y
            cell = 1 << index
            if self._known[index]:
                self._sets[self._materials[index]] &= ~cell
            self._known[index] = True
            self._materials[index] = material
            self._sets[material] = self._sets.get(material, 0) | cell
            self._passable = self._passable | cell if self._walkable[material] else self._passable & ~cell


def seen_changes(views: np.ndarray, height: int) -> np.ndarray:
    """The sightings that change what the player had seen, from view rows (step, x, y, material id): a
    cell's first sighting, and each later one that shows it as another material than the one before."""
    if not len(views):
        return views
    cells = views[:, 1] * height + views[:, 2]
    order = np.lexsort((views[:, 0], cells))  # by cell, then by step
    cells, rows = cells[order], views[order]
    changed = np.r_[True, (cells[1:] != cells[:-1]) | (rows[1:, 3] != rows[:-1, 3])]
    return rows[changed]


class CrafterMaps:
    """One episode's map history and view history, rebuilt from its trace tables."""

    def __init__(self, names: tuple[str, ...], initial: np.ndarray, changes: np.ndarray,
                 positions: dict[int, tuple[int, int]], views: np.ndarray):
        self.names = names  # material id -> name
        self.index = {name: i for i, name in enumerate(names)}
        self.initial = initial  # (width, height) material ids at reset
        self.positions = positions  # step -> (x, y) before the step's action
        last = max(positions, default=-1)
        self._at = np.full((last + 1, 2), -1, dtype=np.int64)  # positions by step; (-1, -1) where none
        if positions:
            self._at[list(positions)] = list(positions.values())
        self.walkable = np.isin(np.arange(len(names)),  # material id -> whether the player walks on it
                                [self.index[m] for m in crafter_data.WALKABLE if m in self.index])
        everything = np.ones(initial.shape, dtype=bool)
        # changes: rows (step, x, y, material id after); views: rows (step, x, y, material id), the
        # view after each step
        self.maps = {"all": MapHistory(everything, initial, changes),
                     "seen": MapHistory(~everything, np.zeros_like(initial), seen_changes(views, initial.shape[1]))}
        self._states = LRU(STATES_KEPT, self._state)
        self._cell_histories = {}  # each map's CellsHistory, made when it is first searched
        self._versions = LRU(VERSIONS_KEPT, lambda cells, version: self._cells_history(cells).at(version))
        self._searches = LRU(SEARCHES_KEPT, self._search)
        self._distances = LRU(ANSWERS_KEPT, lambda *key: self._searches(*key[:3]).distance(key[3]))
        self._nearest = LRU(ANSWERS_KEPT, lambda *key: self._searches(*key[:3]).nearest(key[3]))

    def _history(self, cells: str) -> MapHistory:
        if cells not in self.maps:
            raise ValueError(f"cells must be 'seen' or 'all', not {cells!r}")
        return self.maps[cells]

    def state(self, step: int, cells: str) -> MapState:
        """The map before `step`: the true map (cells='all') or what was seen (cells='seen'), as last
        seen; materials of unseen cells are meaningless."""
        return self._states(cells, self._history(cells).version(step))

    def _state(self, cells: str, version: int) -> MapState:
        known, materials = self.maps[cells].at(version)
        return MapState(known, materials, self.passable(known, materials))

    def _cells_history(self, cells: str) -> CellsHistory:
        if cells not in self._cell_histories:
            self._cell_histories[cells] = CellsHistory(self._history(cells), self.walkable)
        return self._cell_histories[cells]

    def passable(self, known: np.ndarray, materials: np.ndarray) -> np.ndarray:
        return known & self.walkable[materials]

    def _search(self, cells: str, version: int, material: str) -> MaterialSearch:
        return MaterialSearch(self._versions(cells, version), self.index[material], material in crafter_data.WALKABLE)

    def _asked(self, steps: np.ndarray, materials: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, list[tuple]]:
        """What the nearest-cells questions of rows (step, material, cells) depend on, found for all the
        rows at once: the distinct (cells, map version, material, position) asked, in version order, and
        for each row the index of its own among them (-1 for a row outside the episode or of a material
        the episode never had)."""
        asked = np.full(len(steps), -1, dtype=np.int64)
        keys: list[tuple] = []
        inside = (steps >= 0) & (steps < len(self._at))
        x, y = np.full(len(steps), -1, dtype=np.int64), np.full(len(steps), -1, dtype=np.int64)
        x[inside], y[inside] = self._at[steps[inside]].T
        # Looked up a row at a time: np.unique of Python strings sorts them, which costs several times more.
        codes = np.fromiter(map(self.index.get, materials.tolist(), repeat(-1)), dtype=np.int64, count=len(materials))
        width, height = self.initial.shape
        for kind in sorted(set(cells.tolist())):
            history = self._history(kind)
            rows = np.flatnonzero((cells == kind) & (x >= 0) & (codes >= 0))
            # One integer per (version, material, position), so that equal questions are answered once.
            combined = ((history.versions(steps[rows]) * len(self.names) + codes[rows]) * width + x[rows]) * height + y[rows]
            distinct, which = np.unique(combined, return_inverse=True)
            asked[rows] = which + len(keys)
            for key in distinct.tolist():
                rest, cell_y = divmod(key, height)
                rest, cell_x = divmod(rest, width)
                version, code = divmod(rest, len(self.names))
                keys.append((kind, version, self.names[code], (cell_x, cell_y)))
        return asked, keys

    @staticmethod
    def _spread(asked: np.ndarray, answers: list) -> np.ndarray:
        """Each row's answer from the answers of the distinct questions (None where none was asked)."""
        found = np.fromiter([*answers, None], dtype=object, count=len(answers) + 1)
        return found[asked]  # -1 reads the None at the end

    # ---- the questions, as of before each row's step; None outside the episode ----

    def distances(self, steps: np.ndarray, materials: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """Moves from the player to the nearest cell of the material, a row each."""
        asked, keys = self._asked(steps, materials, cells)
        return self._spread(asked, [self._distances(*key) for key in keys])

    def nearest(self, steps: np.ndarray, materials: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """The nearest cells of the material from the player, a row each: how far, every shortest route
        as (dx, dy) to where it ends, and the one direction they all lie in (None if they do not)."""
        asked, keys = self._asked(steps, materials, cells)
        return self._spread(asked, [self._answers(key) for key in keys])

    def _answers(self, key: tuple) -> NearestAnswers | None:
        found = self._nearest(*key)
        if found is None:
            return None
        x, y = key[3]
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
        """Whether a cell next to the player before `step` is of `material` (cells beside the player
        are in view)."""
        around = self._around.get(step)
        return None if around is None else self.index.get(material) in around

    @cached_property
    def _around(self) -> dict[int, set[int]]:
        """The materials next to the player before each step, looked up together for all the steps of
        a version of the true map."""
        steps = sorted(self.positions)
        versions = [self.maps["all"].version(step) for step in steps]
        width, height = self.initial.shape
        around: dict[int, set[int]] = {}
        for version in sorted(set(versions)):
            these = [step for step, v in zip(steps, versions) if v == version]
            materials = self.maps["all"].at(version)[1]
            x, y = np.array([self.positions[step] for step in these]).reshape(-1, 2).T
            found = [set() for _ in these]
            for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                nx, ny = x + dx, y + dy
                inside = np.flatnonzero((0 <= nx) & (nx < width) & (0 <= ny) & (ny < height))
                for i, material in zip(inside.tolist(), materials[nx[inside], ny[inside]].tolist()):
                    found[i].add(material)
            around.update(zip(these, found))
        return around
