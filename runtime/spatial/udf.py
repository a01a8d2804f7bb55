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


def _arrow_type(ty: T.Type) -> pa.DataType:
    if isinstance(ty, T.ListOf):
        return pa.list_(_arrow_type(ty.element))
    if ty == T.DISPLACEMENT:
        return pa.struct([("dx", pa.int64()), ("dy", pa.int64())])
    return {"BIGINT": pa.int64(), "BOOLEAN": pa.bool_(), "VARCHAR": pa.string()}[ty.storage]


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


def _nearest_answer(convert: Callable[[NearestAnswers], object]) -> Callable:
    """A primitive reading one part of the nearest-cells answers."""
    def part(maps: CrafterMaps, step, material, cells):
        found = maps.nearest(step, material, cells)
        return None if found is None else convert(found)
    return part


def _graph_method(method: Callable) -> Callable:
    """A RoomGraph method as a primitive: the graph of the episode as of the step, then the method."""
    return lambda history, step, *args: method(history.graph_before(step), *args)


# Each answers one row: the episode's state, then the row's arguments after the episode.
IMPLEMENTATIONS: dict[str, Callable] = {
    "nearest_distance": CrafterMaps.distance,
    "nearest_routes": _nearest_answer(lambda found: [{"dx": dx, "dy": dy} for dx, dy in found.routes]),
    "nearest_direction": _nearest_answer(lambda found: found.direction),
    "walk_terrain": CrafterMaps.walk,
    "next_to": CrafterMaps.beside,
    "path_length": _graph_method(RoomGraph.path_length),
    "rooms_within": _graph_method(RoomGraph.rooms_within),
    "reachable_within": _graph_method(RoomGraph.reachable_within),
    "follow_moves": _graph_method(RoomGraph.follow),
    "known_walks": _graph_method(RoomGraph.walks),
    "closer_room": _graph_method(RoomGraph.closer),
}


def _vectorised(primitive: Primitive, data: SpatialData) -> Callable:
    """The primitive over Arrow columns: one result per row, null where any input is null."""
    answer = IMPLEMENTATIONS[primitive.name]
    result_type = _arrow_type(primitive.returns)
    list_columns = [i for i, (_, ty) in enumerate(primitive.args, start=1) if isinstance(ty, T.ListOf)]

    def call(*columns: pa.Array) -> pa.Array:
        values = [column.to_pylist() for column in columns]
        for i in list_columns:  # as tuples, so that equal rows are answered once
            values[i] = [None if value is None else tuple(value) for value in values[i]]
        rows = list(zip(*values))  # (episode, arguments...)
        by_episode: dict[str, list[tuple]] = {}
        for row in dict.fromkeys(rows):
            if None not in row:
                by_episode.setdefault(row[0], []).append(row)
        answers: dict[tuple, object] = {}
        for episode, asked in by_episode.items():
            loaded = data.episode(primitive.env, episode)
            if loaded.state is None:
                continue
            asked.sort(key=itemgetter(1))  # in step order, each version is built once, moving forward
            with loaded.lock:
                answers.update((row, answer(loaded.state, *row[1:])) for row in asked)
        return pa.array([answers.get(row) for row in rows], type=result_type)
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
