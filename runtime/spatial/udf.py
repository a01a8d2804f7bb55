"""The spatial primitives of dsl/primitives.py, registered on a DuckDB connection as vectorised
functions `qtc_<name>(episode_id, ...)`.

A compiled template calls them from its one SQL statement, so they run over Arrow batches of all the
candidates of all episodes at once. A batch is split by episode and each episode's rows are answered
together, in step order, under that episode's lock: the episode's trace tables are read once (through
the store's own cursor), and its maps and room graph are kept per version, with the searches made on
each version, so the many candidates that share a version share its work.
"""

from __future__ import annotations

import inspect
import threading
from operator import itemgetter
from typing import Callable

import duckdb
import numpy as np
import pyarrow as pa

from qtc.dsl import crafter_data
from qtc.dsl import types as T
from qtc.dsl.primitives import PRIMITIVES, Primitive, sql_type
from qtc.dsl.sql import sql_string
from qtc.runtime.arrow import arrow_type
from qtc.runtime.episode_rows import EpisodeRows

from .cache import LRU
from .grid import CrafterMaps, NearestAnswers
from .rooms import RoomGraph, RoomHistory

# The cells of each view, a fixed creature (a plant) seen on a cell shown in place of the material under
# it: what the player had seen (cells='seen') holds it as a cell no route enters (CONVENTIONS.md, Space).
SIGHTINGS = ("(SELECT v.step, v.x, v.y, coalesce(c.creature, v.material) AS material "
             "FROM {crafter_view} v LEFT JOIN {crafter_creatures} c "
             "ON c.step = v.step AND c.x = v.x AND c.y = v.y AND c.creature IN ("
             + ", ".join(sql_string(c) for c in crafter_data.FIXED_CREATURES) + "))")

# Episodes (about 0.5 MB of map history per 200 Crafter steps, plus the searches kept) kept per connection.
CACHE_SIZE = 512


class Loaded:
    """One episode's spatial state (None without a map), with the lock its rows are answered under."""

    def __init__(self, state):
        self.state, self.lock = state, threading.Lock()


class SpatialData:
    """Per-episode spatial state read from a trace store, loaded once per episode."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.rows = EpisodeRows(con.cursor())
        self.lock = threading.Lock()  # DuckDB may call the functions from several threads: guards the cursor
        self._episodes = {"crafter": LRU(CACHE_SIZE, self._load_crafter),
                          "jericho": LRU(CACHE_SIZE, self._load_jericho)}

    def episode(self, env: str, episode: str) -> Loaded:
        with self.lock:
            return self._episodes[env](episode)

    def _coded(self, source: str, columns: str, material: str, episode: str, names: list[str]) -> np.ndarray:
        """Rows (columns..., material) of an episode's rows of `source` as integers, ordered by the
        columns, each material as its index in `names`."""
        found = self.rows.execute(f"SELECT {columns}, list_position($names, {material}) - 1 FROM {source} "
                                  f"ORDER BY {columns}", episode, names=names).fetchnumpy()
        return np.column_stack([np.asarray(column, dtype=np.int64) for column in found.values()])

    def _load_crafter(self, episode: str) -> Loaded:
        if not self.rows.has("crafter_map_init", episode):
            return Loaded(None)
        materials = self.rows.execute("SELECT DISTINCT material FROM (SELECT material FROM {crafter_map_init} "
                                      "UNION ALL SELECT material_after FROM {crafter_map_changes} "
                                      "UNION ALL SELECT material FROM {crafter_view})", episode).fetchall()
        names = list(crafter_data.MATERIALS) + list(crafter_data.FIXED_CREATURES)
        names += sorted({material for (material,) in materials} - set(names))
        cells = self._coded("{crafter_map_init}", "x, y", "material", episode, names)
        initial = np.zeros((cells[:, 0].max() + 1, cells[:, 1].max() + 1), dtype=np.int16)
        initial[cells[:, 0], cells[:, 1]] = cells[:, 2]
        changes = self._coded("{crafter_map_changes}", "step, x, y", "material_after", episode, names)
        views = self._coded(SIGHTINGS, "step, x, y", "material", episode, names)
        positions = self.rows.execute("SELECT step, x_before, y_before FROM {crafter_steps}", episode).fetchall()
        return Loaded(CrafterMaps(tuple(names), initial, changes, {s: (x, y) for s, x, y in positions}, views))

    def _load_jericho(self, episode: str) -> Loaded:
        return Loaded(RoomHistory(self.rows.execute("SELECT step, room_before, direction, room_after, moved, "
                                                    "tried_direction FROM {jericho_steps} ORDER BY step",
                                                    episode).fetchall()))


def _each(method: Callable) -> Callable:
    """A primitive answered row by row: each distinct row once, in step order (so that each version of
    the state is built once, moving forward)."""
    def rows(state, *columns: np.ndarray) -> list:
        asked = list(zip(*(column.tolist() for column in columns)))
        answers = {row: method(state, *row) for row in sorted(dict.fromkeys(asked), key=itemgetter(0))}
        return [answers[row] for row in asked]
    return rows


def _nearest_answer(convert: Callable[[NearestAnswers], object]) -> Callable:
    """A primitive reading one part of the nearest-cells answers."""
    def part(maps: CrafterMaps, steps, materials, cells) -> list:
        return [None if found is None else convert(found) for found in maps.nearest(steps, materials, cells).tolist()]
    return part


def _graph_method(method: Callable) -> Callable:
    """A RoomGraph method as a primitive: the graph of the episode as of the step, then the method."""
    return _each(lambda history, step, *args: method(history.graph_before(step), *args))


# Each answers the rows of one episode: the episode's state, then a column (numpy array) per argument.
IMPLEMENTATIONS: dict[str, Callable] = {
    "nearest_distance": CrafterMaps.distances,
    "nearest_routes": _nearest_answer(lambda found: [{"dx": dx, "dy": dy} for dx, dy in found.routes]),
    "nearest_direction": _nearest_answer(lambda found: found.direction),
    "walk_terrain": _each(CrafterMaps.walk),
    "next_to": _each(CrafterMaps.beside),
    "path_length": _graph_method(RoomGraph.path_length),
    "rooms_within": _graph_method(RoomGraph.rooms_within),
    "reachable_within": _graph_method(RoomGraph.reachable_within),
    "follow_moves": _graph_method(RoomGraph.follow),
    "known_walks": _graph_method(RoomGraph.walks),
    "closer_room": _graph_method(RoomGraph.closer),
}


def _valid(column: pa.Array) -> np.ndarray:
    """Whether each value of an Arrow column is not null (read from its validity bitmap)."""
    if not column.null_count:
        return np.ones(len(column), dtype=bool)
    bits = np.unpackbits(np.frombuffer(column.buffers()[0], dtype=np.uint8), bitorder="little",
                         count=column.offset + len(column))
    return bits[column.offset:].astype(bool)


def _values(column: pa.Array, ty: T.Type) -> np.ndarray:
    """An Arrow column as a numpy array: integers as int64 (0 where null), lists as tuples, others as objects."""
    if isinstance(ty, T.ListOf):
        return np.fromiter((None if v is None else tuple(v) for v in column.to_pylist()), dtype=object,
                           count=len(column))
    values = column.to_numpy(zero_copy_only=False)
    if ty.storage == "BIGINT":
        return np.where(_valid(column), values, 0).astype(np.int64)
    return values.astype(object)


def _vectorised(primitive: Primitive, data: SpatialData) -> Callable:
    """The primitive over Arrow columns: one result per row, null where any input is null. The rows are
    split by episode with numpy, and each episode's rows go to its implementation in one call."""
    answer = IMPLEMENTATIONS[primitive.name]
    result_type = arrow_type(primitive.returns)
    types = [T.STRING, *(ty for _, ty in primitive.args), *[T.STRING] * len(primitive.kwargs)]

    def call(*columns: pa.Array | pa.ChunkedArray) -> pa.Array:
        columns = [column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column for column in columns]
        results = np.full(len(columns[0]), None, dtype=object)
        rows = np.flatnonzero(np.logical_and.reduce([_valid(column) for column in columns]))
        values = [_values(column, ty)[rows] for column, ty in zip(columns, types)]
        episodes, which = np.unique(values[0], return_inverse=True)
        order = np.argsort(which, kind="stable")
        for episode, these in zip(episodes.tolist(), np.split(order, np.cumsum(np.bincount(which))[:-1])):
            loaded = data.episode(primitive.env, episode)
            if loaded.state is None:
                continue
            with loaded.lock:
                found = answer(loaded.state, *(column[these] for column in values[1:]))
            results[rows[these]] = np.fromiter(found, dtype=object, count=len(these))
        return pa.array(results.tolist(), type=result_type)
    # DuckDB reads the arity from the signature: one column per argument, the episode id first.
    names = ["episode_id", *(name for name, _ in primitive.args), *primitive.kwargs]
    call.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY) for name in names])
    return call


def register_primitives(con: duckdb.DuckDBPyConnection) -> None:
    """Register every primitive of dsl/primitives.py on `con` as qtc_<name>."""
    data = SpatialData(con)
    for primitive in PRIMITIVES.values():
        parameters = ["VARCHAR", *(sql_type(ty) for _, ty in primitive.args), *["VARCHAR"] * len(primitive.kwargs)]
        con.create_function(primitive.sql_name, _vectorised(primitive, data), parameters,
                            sql_type(primitive.returns), type="arrow", null_handling="special", side_effects=False)
