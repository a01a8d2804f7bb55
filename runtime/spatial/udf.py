"""The spatial primitives of dsl/primitives.py, registered on a DuckDB connection as vectorised
functions `qtc_<name>(episode_id, ...)` (R4).

A compiled template calls them from its one SQL statement, so they run over Arrow batches of all the
candidates of all episodes at once. Each function reads an episode's trace tables once, through its
own cursor, and caches what is costly per input: the map, seen cells and move distances for an
(episode, step, cells) and the room graph for an (episode, step); many candidates share them.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from typing import Callable

import duckdb
import numpy as np
import pyarrow as pa

from qtc.dsl import types as T
from qtc.dsl.primitives import PRIMITIVES, Primitive, sql_type

from qtc.dsl import crafter_data
from .grid import CrafterMaps
from .rooms import RoomGraph

# Episodes (about 0.5 MB of map history per 200 Crafter steps) and room graphs kept per connection.
CACHE_SIZE = 512
NEAREST_CACHE_SIZE = 16384  # nearest cells per (episode, step, material, cells): range questions reuse them


def _arrow_type(ty: T.Type) -> pa.DataType:
    if isinstance(ty, T.ListOf):
        return pa.list_(_arrow_type(ty.element))
    if ty == T.DISPLACEMENT:
        return pa.struct([("dx", pa.int64()), ("dy", pa.int64())])
    return {"BIGINT": pa.int64(), "BOOLEAN": pa.bool_(), "VARCHAR": pa.string()}[ty.storage]


class LRU:
    def __init__(self, size: int, compute: Callable):
        self.size, self.compute, self.items = size, compute, OrderedDict()

    def __call__(self, *key):
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = self.compute(*key)
        self.items[key] = value
        if len(self.items) > self.size:
            self.items.popitem(last=False)
        return value


class SpatialData:
    """Per-episode spatial state read from a trace store, computed once per distinct input."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.cursor = con.cursor()
        self.lock = threading.Lock()  # DuckDB may call the functions from several threads
        self.crafter = LRU(CACHE_SIZE, self._load_crafter)
        self.jericho = LRU(CACHE_SIZE, self._load_jericho)
        self.graph = LRU(CACHE_SIZE, self._room_graph)
        # Range questions ask the same (step, material) for many candidates.
        self.nearest = LRU(NEAREST_CACHE_SIZE, _maps_method(CrafterMaps.nearest, self))


    def _rows(self, sql: str, episode: str) -> list[tuple]:
        return self.cursor.execute(sql, [episode]).fetchall()

    def _load_crafter(self, episode: str) -> CrafterMaps | None:
        cells = self._rows("SELECT x, y, material FROM crafter_map_init WHERE episode_id = ?", episode)
        if not cells:
            return None
        changes = self._rows("SELECT step, x, y, material_after FROM crafter_map_changes WHERE episode_id = ? "
                             "ORDER BY step, x, y", episode)
        views = self._rows("SELECT step, x, y, material FROM crafter_view WHERE episode_id = ? ORDER BY step, x, y",
                           episode)
        positions = self._rows("SELECT step, x_before, y_before FROM crafter_steps WHERE episode_id = ?", episode)
        names = list(crafter_data.MATERIALS)
        for material in sorted({row[-1] for row in cells + changes + views} - set(names)):
            names.append(material)
        index = {name: i for i, name in enumerate(names)}
        width, height = max(c[0] for c in cells) + 1, max(c[1] for c in cells) + 1
        initial = np.zeros((width, height), dtype=np.int16)
        for x, y, material in cells:
            initial[x, y] = index[material]

        def coded(rows):
            return np.array([(s, x, y, index[m]) for s, x, y, m in rows], dtype=np.int64).reshape(-1, 4)
        return CrafterMaps(tuple(names), initial, coded(changes), {s: (x, y) for s, x, y in positions}, coded(views))

    def _load_jericho(self, episode: str) -> list[tuple]:
        return self._rows("SELECT step, room_before, direction, room_after, moved FROM jericho_steps "
                          "WHERE episode_id = ? ORDER BY step", episode)

    def _room_graph(self, episode: str, step: int) -> RoomGraph:
        rows = [row for row in self.jericho(episode) if row[0] <= step]
        return RoomGraph.from_moves([row[1] for row in rows],
                                    [(before, direction, after) for s, before, direction, after, moved in rows
                                     if moved and s < step])


def _maps_method(method: Callable, data: SpatialData | None = None) -> Callable:
    """A CrafterMaps method as a function of (data, episode, ...): the episode's maps, then the method
    (None without a map). Given `data`, a function of (episode, ...)."""
    def call(data: SpatialData, episode, *args):
        maps = data.crafter(episode)
        return None if maps is None else method(maps, *args)
    return call if data is None else (lambda episode, *args: call(data, episode, *args))


def _nearest_answer(convert: Callable) -> Callable:
    """A primitive reading one part of the cached nearest-cells answers."""
    def part(data: SpatialData, episode, step, material, cells):
        found = data.nearest(episode, step, material, cells)
        return None if found is None else convert(found)
    return part


def _graph_method(method: Callable) -> Callable:
    """A RoomGraph method as a primitive: the graph of the episode as of the step, then the method."""
    return lambda data, episode, step, *args: method(data.graph(episode, step), *args)


IMPLEMENTATIONS: dict[str, Callable] = {
    "nearest_distance": _nearest_answer(lambda found: found.distance),
    "nearest_routes": _nearest_answer(lambda found: [{"dx": dx, "dy": dy} for dx, dy in found.routes]),
    "nearest_direction": _nearest_answer(lambda found: found.direction),
    "walk_terrain": _maps_method(CrafterMaps.walk),
    "next_to": _maps_method(CrafterMaps.beside),
    "path_length": _graph_method(RoomGraph.path_length),
    "rooms_within": _graph_method(RoomGraph.rooms_within),
    "reachable_within": _graph_method(RoomGraph.reachable_within),
    "follow_moves": _graph_method(RoomGraph.follow),
    "known_walks": _graph_method(RoomGraph.walks),
    "closer_room": _graph_method(RoomGraph.closer),
}


def _vectorised(primitive: Primitive, data: SpatialData) -> Callable:
    """The primitive over Arrow columns: one result per row, null where any input is null."""
    row_function = IMPLEMENTATIONS[primitive.name]
    result_type = _arrow_type(primitive.returns)

    def call(*columns: pa.Array) -> pa.Array:
        rows = list(zip(*(column.to_pylist() for column in columns)))
        results = [None] * len(rows)
        with data.lock:
            # In (episode, step) order, so that each episode's state before a step is built once.
            for index in sorted(range(len(rows)), key=lambda i: tuple("" if v is None else str(v) for v in rows[i][:2])):
                if None not in rows[index]:
                    results[index] = row_function(data, *rows[index])
        return pa.array(results, type=result_type)
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
