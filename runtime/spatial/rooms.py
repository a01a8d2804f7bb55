"""Spatial primitives over a text game's room graph (Jericho's, TextWorld's): the rooms joined by the moves
the player actually made, as known before a step.

Every definition used here (the graph as of step t, distances, unknowable answers) is written once in
CONVENTIONS.md, section Space. Where the graph cannot decide, a method returns None: unknowable.

The graph only grows, so an episode's graph is built once (`RoomHistory`), each room, move and exit
kept with the version of the graph that added it; the graph before any step is that one structure
read up to its version, and each version's distances and walks are searched once per room.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from qtc.dsl.schema import Table
from qtc.runtime.episode_rows import EpisodeRows

from .cache import LRU

GRAPHS_KEPT = 256  # graph versions (with the distances searched on them) kept per episode
FAILED = "failed"  # the tag of a failure event: (FAILED, room, direction)


@dataclass
class RoomGraph:
    """The rooms and moves, each kept with the version that added it, read up to `version`."""
    rooms: dict[int, int] = field(default_factory=dict)  # every room the player was in -> version
    successors: dict[int, dict[int, int]] = field(default_factory=dict)  # room -> {room after: version}
    exits: dict[tuple[int, str], dict[int, int]] = field(default_factory=dict)  # (room, direction) -> same
    failures: dict[tuple[int, str], int] = field(default_factory=dict)  # (room, direction) tried in vain -> version
    version: float = math.inf
    _distances: dict[int, dict[int, int]] = field(default_factory=dict, repr=False, compare=False)
    _walks: dict[tuple[int, int], list[list[str]]] = field(default_factory=dict, repr=False, compare=False)
    _resolved: dict[int, list[tuple[str, int]]] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_moves(cls, rooms: list[int], moves: list[tuple[int, str | None, int]],
                   failures: list[tuple[int, str]] = ()) -> "RoomGraph":
        """`rooms`: the rooms the player was in; `moves`: (room before, direction or None, room after);
        `failures`: (room, direction) of commands that named a direction and left the player there."""
        graph = cls()
        for room in rooms:
            graph.add_room(room)
        for move in moves:
            graph.add_move(*move)
        for failure in failures:
            graph.add_failure(*failure)
        return graph

    def add_room(self, room: int, version: int = 0) -> None:
        self.rooms.setdefault(room, version)
        self._distances.clear()
        self._walks.clear()
        self._resolved = None

    def add_move(self, before: int, direction: str | None, after: int, version: int = 0) -> None:
        self.add_room(before, version)
        self.add_room(after, version)
        self.successors.setdefault(before, {}).setdefault(after, version)
        if direction is not None:
            self.exits.setdefault((before, direction), {}).setdefault(after, version)

    def add_failure(self, room: int, direction: str, version: int = 0) -> None:
        self.add_room(room, version)
        self.failures.setdefault((room, direction), version)

    def as_of(self, version: int) -> "RoomGraph":
        """The graph as it was at an earlier version: the same rooms and moves, read up to it."""
        return RoomGraph(self.rooms, self.successors, self.exits, self.failures, version)

    def _known(self, added: dict[int, int]) -> list[int]:
        return [room for room, version in added.items() if version <= self.version]

    def has(self, room: int) -> bool:
        return room in self.rooms and self.rooms[room] <= self.version

    def distances_from(self, room: int) -> dict[int, int]:
        """The fewest moves from `room` to every room reachable from it (searched once per room)."""
        if not self.has(room):
            return {}
        if room not in self._distances:
            distances = {room: 0}
            queue = deque([room])
            while queue:
                current = queue.popleft()
                for following in self._known(self.successors.get(current, {})):
                    if following not in distances:
                        distances[following] = distances[current] + 1
                        queue.append(following)
            self._distances[room] = distances
        return self._distances[room]

    def path_length(self, source: int, target: int) -> int | None:
        return self.distances_from(source).get(target)

    def rooms_within(self, room: int, moves: int) -> int | None:
        """How many other rooms are at most `moves` moves from `room`; None if the room is unknown."""
        if not self.has(room):
            return None
        return sum(1 for distance in self.distances_from(room).values() if distance <= moves) - 1

    def reachable_within(self, source: int, target: int, moves: int) -> bool | None:
        """True or False when the known graph decides it; None when `target` cannot be reached at all."""
        distance = self.path_length(source, target)
        return None if distance is None else distance <= moves

    def _end(self, room: int, direction: str) -> int | None:
        """The room an exit leads to, if it is known and unambiguous: it always led to one room, and was
        never tried in vain (an exit that sometimes fails cannot be followed)."""
        if (room, direction) in self.failures and self.failures[room, direction] <= self.version:
            return None
        ends = self._known(self.exits.get((room, direction), {}))
        return ends[0] if len(ends) == 1 else None

    def follow(self, room: int, directions: list[str]) -> int | None:
        """The room a sequence of directions leads to, if every step is a known, unambiguous exit."""
        if not self.has(room):
            return None
        for direction in directions:
            room = self._end(room, direction)
            if room is None:
                return None
        return room

    def walks(self, room: int, length: int) -> list[list[str]]:
        """Every sequence of `length` directions that `follow` can resolve from `room`, sorted (the
        answer is shared: callers must not change it)."""
        if not self.has(room):
            return []
        exits = self._exits_resolved()
        reached = [{room}]  # the rooms each number of moves reaches from `room`
        for _ in range(length):
            reached.append({end for current in reached[-1] for _, end in exits.get(current, ())})
        for moves, rooms in enumerate(reversed(reached)):  # the shortest walks first, without recursion
            for current in rooms:
                if (current, moves) not in self._walks:
                    # its exits in direction order, each followed by its end's walks (sorted): sorted
                    self._walks[current, moves] = [[]] if moves == 0 else [
                        [direction, *rest] for direction, end in exits.get(current, ())
                        for rest in self._walks[end, moves - 1]]
        return self._walks[room, length]

    def _exits_resolved(self) -> dict[int, list[tuple[str, int]]]:
        """room -> (direction, end) of each exit `_end` resolves from it, by direction (found once per version)."""
        if self._resolved is None:
            resolved: dict[int, list[tuple[str, int]]] = {}
            for start, direction in self.exits:
                end = self._end(start, direction)
                if end is not None:
                    resolved.setdefault(start, []).append((direction, end))
            self._resolved = {start: sorted(ends) for start, ends in resolved.items()}
        return self._resolved

    def closer(self, source: int, first: int, second: int) -> int | None:
        """Whichever of two rooms is fewer moves from `source`; None on a tie or if either is unreachable."""
        distances = self.distances_from(source)
        if first == second or first not in distances or second not in distances:
            return None
        if distances[first] == distances[second]:
            return None
        return first if distances[first] < distances[second] else second


class RoomHistory:
    """One episode's room graph as it grew. The graph before step t holds the rooms the player was in
    at steps up to t and the moves made before t; since it only grows, the number of rooms, moves and
    exits it holds tells its version."""

    def __init__(self, steps: list[tuple[int, int, str | None, int, bool, str | None]]):
        """`steps`: (step, room before, direction, room after, moved, the direction the command named
        whether or not it moved the player), in step order."""
        events = []  # (the first step before which it is known, a room, a move or a failure)
        for step, before, direction, after, moved, tried in steps:
            events.append((step, (before,)))
            if moved:
                events.append((step + 1, (before, direction, after)))
            elif tried is not None:
                events.append((step + 1, (FAILED, before, tried)))
        events.sort(key=lambda event: event[0])
        self._times = [time for time, _ in events]
        self._versions = []  # the version once each event is known
        self.graph = RoomGraph()
        known: set[tuple] = set()  # (room,), (room, room after), (room, direction, room after), failures
        for _, event in events:
            if len(event) == 1 or event[0] == FAILED:  # a failure's room is known from its step
                known.add(event)
            else:
                before, direction, after = event
                known |= {(before,), (after,), (before, after)}
                if direction is not None:
                    known.add(event)
            self._versions.append(len(known))
            if len(event) == 1:
                self.graph.add_room(event[0], len(known))
            elif event[0] == FAILED:
                self.graph.add_failure(*event[1:], len(known))
            else:
                self.graph.add_move(*event, len(known))
        self._graphs = LRU(GRAPHS_KEPT, self.graph.as_of)

    def version(self, step: int) -> int:
        """The version of the graph before `step`."""
        known = bisect_right(self._times, step)
        return self._versions[known - 1] if known else 0

    def graph_before(self, step: int) -> RoomGraph:
        return self._graphs(self.version(step))


def room_history_loader(steps: Table) -> Callable[[EpisodeRows, list[str]], dict[str, RoomHistory]]:
    """How text games' episodes' room graphs are read from their steps table (Jericho's columns)."""
    def load(rows: EpisodeRows, episodes: list[str]) -> dict[str, RoomHistory]:
        found: dict[str, list[tuple]] = {episode: [] for episode in episodes}
        for episode, *step in rows.execute_many(
                "SELECT episode_id, step, room_before, direction, room_after, moved, tried_direction "
                f"FROM {{{steps.sql_name}}} ORDER BY episode_id, step", episodes).fetchall():
            found[episode].append(tuple(step))
        return {episode: RoomHistory(steps) for episode, steps in found.items()}
    return load
