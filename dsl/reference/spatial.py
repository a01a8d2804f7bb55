"""The spatial primitives for the reference evaluator, in plain Python, from CONVENTIONS.md (Space).

This is a second reading of the definitions, independent of runtime/spatial/grid.py and runtime/spatial/rooms.py:
dictionaries and a queue instead of arrays, and Crafter's walkability read from Crafter's own data
(`crafter.constants.walkable`) rather than from dsl/crafter_data.py. Calling the runtime's code
here would make the differential tests blind to a fault inside it (a walkable lava tile, say).

Everything is as of a step t, before its action, from one episode's rows already cut to the horizon.
A step that is not a step of the episode within the horizon has no state: every primitive is null.
"""

from __future__ import annotations

from collections import deque

from crafter import constants

WALKABLE = frozenset(constants.walkable)
ENTERABLE = WALKABLE | {"lava"}  # the player may step into lava (and die); a walk may end there
STEPS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}

Cell = tuple[int, int]


def direction_of(dx: int, dy: int) -> str | None:
    """Left/right when an offset is mostly sideways, up/down when mostly vertical, else none."""
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    if abs(dy) > abs(dx):
        return "down" if dy > 0 else "up"
    return None


def neighbours(cell: Cell) -> list[Cell]:
    return [(cell[0] + dx, cell[1] + dy) for dx, dy in STEPS.values()]


def distances(start: Cell, passable: set[Cell]) -> dict[Cell, int]:
    """The fewest moves from `start` to every cell reachable over passable cells (the start counts)."""
    found, queue = {start: 0}, deque([start])
    while queue:
        cell = queue.popleft()
        for following in neighbours(cell):
            if following in passable and following not in found:
                found[following] = found[cell] + 1
                queue.append(following)
    return found


class EpisodeSpace:
    """The spatial state of one episode (its rows by template table name), computed once per input."""

    def __init__(self, tables: dict[str, list[dict]]):
        self.tables = tables
        self.steps = {row["step"]: row for row in tables.get("steps", [])}
        self._known: dict[tuple[int, str], dict[Cell, str]] = {}
        self._reached: dict[tuple[int, str], dict[Cell, int]] = {}
        self._graphs: dict[int, tuple[set[int], list]] = {}

    def call(self, name: str, step: int, *args):
        if step not in self.steps:
            return None
        return getattr(self, name)(step, *args)

    # ---- Crafter ----
    def position(self, step: int) -> Cell:
        return self.steps[step]["x_before"], self.steps[step]["y_before"]

    def cells(self, step: int, which: str) -> dict[Cell, str]:
        """The cells a search may use before `step`, with their materials: the true map, or what was seen."""
        if (step, which) not in self._known:
            if which == "all":
                known = {(r["x"], r["y"]): r["material"] for r in self.tables["map_init"]}
                for r in sorted(self.tables["map_changes"], key=lambda r: r["step"]):
                    if r["step"] < step:
                        known[r["x"], r["y"]] = r["material_after"]
            else:
                # A plant (a creature that never moves) seen on a cell stands there for the material.
                plants = {(r["step"], r["x"], r["y"]) for r in self.tables.get("creatures", [])
                          if r["creature"] == "plant"}
                known = {}
                for r in sorted(self.tables["view"], key=lambda r: r["step"]):  # later sightings win
                    if r["step"] < step:
                        planted = (r["step"], r["x"], r["y"]) in plants
                        known[r["x"], r["y"]] = "plant" if planted else r["material"]
            self._known[step, which] = known
        return self._known[step, which]

    def reached(self, step: int, which: str) -> dict[Cell, int]:
        if (step, which) not in self._reached:
            known = self.cells(step, which)
            passable = {cell for cell, material in known.items() if material in WALKABLE}
            self._reached[step, which] = distances(self.position(step), passable)
        return self._reached[step, which]

    def _nearest(self, step: int, material: str, which: str) -> tuple[int, list[Cell], list[Cell]] | None:
        """(distance, the cells to stand on, the cells of the material reached from them), or None."""
        known = self.cells(step, which)
        targets = {cell for cell, m in known.items() if m == material}
        if material in WALKABLE:
            stand = targets
        else:
            stand = {cell for target in targets for cell in neighbours(target)}
        reached = {cell: d for cell, d in self.reached(step, which).items() if cell in stand}
        if not reached:
            return None
        best = min(reached.values())
        goals = sorted(cell for cell, d in reached.items() if d == best)
        if material in WALKABLE:
            return best, goals, goals
        return best, goals, sorted({t for goal in goals for t in neighbours(goal) if t in targets})

    def nearest_distance(self, step, material, which):
        found = self._nearest(step, material, which)
        return None if found is None else found[0]

    def nearest_routes(self, step, material, which):
        found = self._nearest(step, material, which)
        x, y = self.position(step)
        return None if found is None else [{"dx": gx - x, "dy": gy - y} for gx, gy in found[1]]

    def nearest_direction(self, step, material, which):
        found = self._nearest(step, material, which)
        if found is None:
            return None
        x, y = self.position(step)
        ways = {direction_of(tx - x, ty - y) for tx, ty in found[2]}
        return ways.pop() if len(ways) == 1 else None

    def walk_terrain(self, step, direction, tiles, which):
        if direction not in STEPS or tiles < 1:
            return None
        known = self.cells(step, which)
        (x, y), (dx, dy) = self.position(step), STEPS[direction]
        for tile in range(1, tiles + 1):
            x, y = x + dx, y + dy
            material = known.get((x, y))  # None: off the map, or not seen
            if material not in ENTERABLE or material == "lava" and tile < tiles:
                return None
        return material

    def next_to(self, step, material):
        known = self.cells(step, "all")
        return any(known.get(cell) == material for cell in neighbours(self.position(step)))

    # ---- Jericho ----
    def graph(self, step: int) -> tuple[set[int], list[tuple[int, str | None, int]]]:
        """The rooms the player was in at steps 1..t, and the moves (room, direction, room) before t."""
        if step not in self._graphs:
            rooms = {row["room_before"] for s, row in self.steps.items() if s <= step}
            moves = [(row["room_before"], row["direction"], row["room_after"]) for s, row in self.steps.items()
                     if s < step and row["room_before"] != row["room_after"]]
            self._graphs[step] = rooms, moves
        return self._graphs[step]

    def room_distances(self, step: int, source: int) -> dict[int, int]:
        rooms, moves = self.graph(step)
        if source not in rooms:
            return {}
        found, queue = {source: 0}, deque([source])
        while queue:
            room = queue.popleft()
            for before, _, after in moves:
                if before == room and after not in found:
                    found[after] = found[room] + 1
                    queue.append(after)
        return found

    def exit(self, step: int, room: int, direction: str) -> int | None:
        """Where a direction leads from a room, if it was taken from there with one outcome only: it
        always moved the player to the same room, never left it where it was."""
        ends = {after for before, way, after in self.graph(step)[1] if before == room and way == direction}
        tried_in_vain = any(s < step and row["room_before"] == row["room_after"] == room
                            and row["tried_direction"] == direction for s, row in self.steps.items())
        return ends.pop() if len(ends) == 1 and not tried_in_vain else None

    def path_length(self, step, source, target):
        return self.room_distances(step, source).get(target)

    def rooms_within(self, step, room, moves):
        if room not in self.graph(step)[0]:
            return None
        return sum(1 for other, d in self.room_distances(step, room).items() if other != room and d <= moves)

    def reachable_within(self, step, source, target, moves):
        distance = self.path_length(step, source, target)
        return None if distance is None else distance <= moves

    def follow_moves(self, step, room, directions):
        if room not in self.graph(step)[0]:
            return None
        for direction in directions:
            room = self.exit(step, room, direction)
            if room is None:
                return None
        return room

    def known_walks(self, step, room, length):
        if room not in self.graph(step)[0]:
            return []
        ways = sorted({way for _, way, _ in self.graph(step)[1] if way is not None})
        walks = [[]]
        for _ in range(length):
            walks = [walk + [way] for walk in walks for way in ways]
        return sorted(walk for walk in walks if self.follow_moves(step, room, walk) is not None)

    def closer_room(self, step, source, first, second):
        found = self.room_distances(step, source)
        if first == second or first not in found or second not in found or found[first] == found[second]:
            return None
        return first if found[first] < found[second] else second
