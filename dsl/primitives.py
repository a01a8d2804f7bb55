"""The spatial primitives a template may call: their names, argument and result types.

They are written once in Python and registered once: computed by runtime/spatial/grid.py over
Crafter's map and runtime/spatial/rooms.py over a text game's room graph, and registered in DuckDB
(runtime/spatial/udf.py) as vectorised functions named `qtc_<name>` taking the episode id first.
Each declaration becomes a function record (dsl/functions/spatial.py): the checker types calls from
it and the compiler emits the calls; the runtime registers its implementations and the reference
evaluator reads them again (dsl/reference/spatial.py) under the same names: one list for all.
Every primitive is evaluated as of a step t, before the action of step t (docs/spatial.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import types as T

# Which map a Crafter primitive searches: the true map before step t, or only the cells the player had
# seen by then (as last seen). There is no default: a template says which knowledge it asks about.
CELLS = ("seen", "all")


@dataclass(frozen=True)
class Primitive:
    name: str
    envs: tuple[str, ...]  # the environments whose templates may call it
    args: tuple[tuple[str, T.Type], ...]
    returns: T.Type
    doc: str
    kwargs: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def sql_name(self) -> str:
        return f"qtc_{self.name}"

    @property
    def usage(self) -> str:
        options = [f"{k}={'|'.join(v)}" for k, v in self.kwargs.items()]
        return f"{self.name}({', '.join([name for name, _ in self.args] + options)}) -> {self.doc}"


def sql_type(ty: T.Type) -> str:
    return f"{sql_type(ty.element)}[]" if isinstance(ty, T.ListOf) else ty.storage


_CELLS = {"cells": CELLS}

# Crafter's map, and the text games' room graph of the moves made (their steps tables have one shape).
GRID = ("crafter",)
ROOM_GRAPH = ("jericho", "textworld")

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in (
    Primitive("nearest_distance", GRID, (("t", T.STEP), ("material", T.MATERIAL)), T.INTEGER,
              "moves needed before step t to reach the nearest cell of the material", _CELLS),
    Primitive("nearest_routes", GRID, (("t", T.STEP), ("material", T.MATERIAL)), T.ListOf(T.DISPLACEMENT),
              "every shortest route to the nearest cell of the material, as displacements, sorted", _CELLS),
    Primitive("nearest_direction", GRID, (("t", T.STEP), ("material", T.MATERIAL)), T.DIRECTION,
              "the direction of the nearest cells of the material, if they all lie one way", _CELLS),
    Primitive("walk_terrain", GRID, (("t", T.STEP), ("direction", T.DIRECTION), ("tiles", T.INTEGER)),
              T.MATERIAL, "the terrain underfoot after walking that many tiles that way from before step t",
              _CELLS),
    # Cells next to the player are always in its view, so what it saw and the true map agree there.
    Primitive("next_to", GRID, (("t", T.STEP), ("material", T.MATERIAL)), T.BOOLEAN,
              "whether a cell left, right, above or below the player before step t is of the material"),
    Primitive("path_length", ROOM_GRAPH, (("t", T.STEP), ("source", T.ROOM), ("target", T.ROOM)), T.INTEGER,
              "the fewest known moves from one room to another, with the moves made before step t"),
    Primitive("rooms_within", ROOM_GRAPH, (("t", T.STEP), ("room", T.ROOM), ("moves", T.INTEGER)), T.INTEGER,
              "how many other rooms are at most that many known moves away"),
    Primitive("reachable_within", ROOM_GRAPH,
              (("t", T.STEP), ("source", T.ROOM), ("target", T.ROOM), ("moves", T.INTEGER)), T.BOOLEAN,
              "whether the target is at most that many known moves away (null: never reached)"),
    Primitive("follow_moves", ROOM_GRAPH, (("t", T.STEP), ("room", T.ROOM), ("directions", T.ListOf(T.DIRECTION))),
              T.ROOM, "the room a sequence of directions leads to over known exits"),
    Primitive("known_walks", ROOM_GRAPH, (("t", T.STEP), ("room", T.ROOM), ("length", T.INTEGER)),
              T.ListOf(T.ListOf(T.DIRECTION)), "every sequence of that many directions follow_moves can resolve"),
    Primitive("closer_room", ROOM_GRAPH, (("t", T.STEP), ("source", T.ROOM), ("first", T.ROOM), ("second", T.ROOM)),
              T.ROOM, "whichever of two rooms is fewer known moves away (null on a tie)"),
)}
