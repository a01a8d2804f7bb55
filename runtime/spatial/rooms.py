"""Spatial primitives over a Jericho episode's room graph: the rooms joined by the moves the player
actually made, as known before a step.

Every definition used here (the graph as of step t, distances, unknowable answers) is written once in
CONVENTIONS.md, section Space. Where the graph cannot decide, a method returns None: unknowable.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class RoomGraph:
    rooms: set[int] = field(default_factory=set)  # every room the player was in
    successors: dict[int, set[int]] = field(default_factory=dict)
    exits: dict[tuple[int, str], set[int]] = field(default_factory=dict)  # (room, direction) -> rooms

    @classmethod
    def from_moves(cls, rooms: list[int], moves: list[tuple[int, str | None, int]]) -> "RoomGraph":
        """`rooms`: the rooms the player was in; `moves`: (room before, direction or None, room after)."""
        graph = cls(set(rooms))
        for before, direction, after in moves:
            graph.rooms |= {before, after}
            graph.successors.setdefault(before, set()).add(after)
            if direction is not None:
                graph.exits.setdefault((before, direction), set()).add(after)
        return graph

    def distances_from(self, room: int, limit: int | None = None) -> dict[int, int]:
        """The fewest moves from `room` to every room reachable from it (within `limit` moves)."""
        if room not in self.rooms:
            return {}
        distances = {room: 0}
        queue = deque([room])
        while queue:
            current = queue.popleft()
            if limit is not None and distances[current] >= limit:
                continue
            for following in sorted(self.successors.get(current, ())):
                if following not in distances:
                    distances[following] = distances[current] + 1
                    queue.append(following)
        return distances

    def path_length(self, source: int, target: int) -> int | None:
        return self.distances_from(source).get(target)

    def rooms_within(self, room: int, moves: int) -> int | None:
        """How many other rooms are at most `moves` moves from `room`; None if the room is unknown."""
        if room not in self.rooms:
            return None
        return len(self.distances_from(room, moves)) - 1

    def reachable_within(self, source: int, target: int, moves: int) -> bool | None:
        """True or False when the known graph decides it; None when `target` cannot be reached at all."""
        distance = self.path_length(source, target)
        return None if distance is None else distance <= moves

    def follow(self, room: int, directions: list[str]) -> int | None:
        """The room a sequence of directions leads to, if every step is a known, unambiguous exit."""
        if room not in self.rooms:
            return None
        for direction in directions:
            ends = self.exits.get((room, direction), set())
            if len(ends) != 1:
                return None
            (room,) = ends
        return room

    def walks(self, room: int, length: int) -> list[list[str]]:
        """Every sequence of `length` directions that `follow` can resolve from `room`, sorted."""
        resolved: dict[int, list[tuple[str, int]]] = {}
        for (start, direction), ends in self.exits.items():
            if len(ends) == 1:
                resolved.setdefault(start, []).append((direction, next(iter(ends))))
        walks: list[tuple[list[str], int]] = [([], room)] if room in self.rooms else []
        for _ in range(length):
            walks = [(path + [direction], end) for path, current in walks
                     for direction, end in resolved.get(current, ())]
        return sorted(path for path, _ in walks)

    def closer(self, source: int, first: int, second: int) -> int | None:
        """Whichever of two rooms is fewer moves from `source`; None on a tie or if either is unreachable."""
        distances = self.distances_from(source)
        if first == second or first not in distances or second not in distances:
            return None
        if distances[first] == distances[second]:
            return None
        return first if distances[first] < distances[second] else second
