"""Spatial questions drawn as inline SVG: a Crafter map as of a step, with the player, the target and
one shortest route, and a text game's room graph as known before a step, with the shortest path.

The maps, graphs and searches are the spatial primitives' own (runtime/spatial); the route is read
off the search's distance layers, one move down at a time, as the primitives read their answers.
"""

from __future__ import annotations

from html import escape

from qtc.dsl import crafter_data
from qtc.runtime.spatial.grid import CrafterMaps, MaterialSearch, VersionCells
from qtc.runtime.spatial.rooms import RoomGraph

CELL = 12  # pixels per Crafter cell
MARGIN = 2  # cells drawn around what the player had seen
MATERIAL_COLOURS = {"water": "#4a90d9", "grass": "#8cc63f", "stone": "#9a9a9a", "path": "#d9c7a0",
                    "sand": "#f2e3a0", "tree": "#2e7d32", "lava": "#e65100", "coal": "#333333",
                    "iron": "#b0785a", "diamond": "#7fe3f0", "table": "#8d6e63", "furnace": "#5d4037"}
UNKNOWN_COLOUR = "#e0e0e0"
ROUTE_COLOUR, TARGET_COLOUR, PLAYER_COLOUR = "#d81b60", "#ffeb3b", "#ffffff"


def route_cells(search: MaterialSearch, start: tuple[int, int], distance: int) -> list[tuple[int, int]]:
    """One shortest route from `start` to a nearest goal: each move steps to the lowest-numbered
    neighbour one layer nearer the goals (every shortest route descends the layers so)."""
    cells, layers = search.cells, search.field.layers
    route = [start]
    for remaining in range(distance - 1, -1, -1):
        route.append(cells.listed(cells.next_to(cells.cell(*route[-1])) & layers[remaining])[0])
    return route


def crafter_map(maps: CrafterMaps, step: int, material: str | None) -> str:
    """The map the player had seen before `step`, the player, and the nearest seen `material` with one
    shortest route over seen ground to it (as the questions' `cells=seen` primitives search)."""
    if step not in maps.positions:
        return ""
    state = maps.state(step, "seen")
    player = maps.positions[step]
    seen_x, seen_y = state.known.nonzero()
    xs, ys = [*seen_x.tolist(), player[0]], [*seen_y.tolist(), player[1]]
    width, height = state.known.shape
    x0, x1 = max(0, min(xs) - MARGIN), min(width - 1, max(xs) + MARGIN)
    y0, y1 = max(0, min(ys) - MARGIN), min(height - 1, max(ys) + MARGIN)
    centre = lambda x, y: ((x - x0 + 0.5) * CELL, (y - y0 + 0.5) * CELL)  # noqa: E731
    parts = [f'<svg class="map crafter" xmlns="http://www.w3.org/2000/svg" width="{(x1 - x0 + 1) * CELL}" '
             f'height="{(y1 - y0 + 1) * CELL}"><title>the map seen before step {step}</title>',
             f'<rect width="100%" height="100%" fill="{UNKNOWN_COLOUR}"/>']
    for y in range(y0, y1 + 1):  # each row as runs of one seen material: one rectangle per run
        x = x0
        while x <= x1:
            if not state.known[x, y]:
                x += 1
                continue
            end = x
            while end + 1 <= x1 and state.known[end + 1, y] and state.materials[end + 1, y] == state.materials[x, y]:
                end += 1
            name = maps.names[state.materials[x, y]]
            parts.append(f'<rect x="{(x - x0) * CELL}" y="{(y - y0) * CELL}" width="{(end - x + 1) * CELL}" '
                         f'height="{CELL}" fill="{MATERIAL_COLOURS.get(name, "#ff00ff")}"><title>{name}</title></rect>')
            x = end + 1
    if material in maps.index:
        search = MaterialSearch(VersionCells.of(state), maps.index[material], material in crafter_data.WALKABLE)
        found = search.nearest(player)
        if found is not None:
            route = route_cells(search, player, found.distance)
            end = search.cells.cell(*route[-1])
            reached = end if search.walkable else search.targets & search.cells.next_to(end)
            for tx, ty in search.cells.listed(reached):
                parts.append(f'<rect class="target" x="{(tx - x0) * CELL + 1}" y="{(ty - y0) * CELL + 1}" '
                             f'width="{CELL - 2}" height="{CELL - 2}" fill="none" stroke="{TARGET_COLOUR}" '
                             f'stroke-width="2.5"><title>nearest {escape(material)}</title></rect>')
            points = " ".join(f"{cx:.0f},{cy:.0f}" for cx, cy in (centre(*cell) for cell in route))
            parts.append(f'<polyline class="route" points="{points}" fill="none" stroke="{ROUTE_COLOUR}" '
                         f'stroke-width="3" stroke-linejoin="round"><title>{found.distance} moves</title></polyline>')
    px, py = centre(*player)
    parts.append(f'<circle class="player" cx="{px:.0f}" cy="{py:.0f}" r="{CELL * 0.4}" fill="{PLAYER_COLOUR}" '
                 f'stroke="#000" stroke-width="1.5"><title>you, before step {step}</title></circle></svg>')
    return "".join(parts)


def crafter_map_legend() -> str:
    """What a Crafter map's colours and marks mean, as HTML."""
    swatch = lambda fill, stroke="#666": (f'<svg width="12" height="12"><rect width="12" height="12" '  # noqa: E731
                                          f'fill="{fill}" stroke="{stroke}"/></svg>')
    items = [(swatch(colour), name) for name, colour in MATERIAL_COLOURS.items()]
    items += [(swatch(UNKNOWN_COLOUR), "not seen"),
              (f'<svg width="12" height="12"><circle cx="6" cy="6" r="4.8" fill="{PLAYER_COLOUR}" stroke="#000"/>'
               "</svg>", "you"),
              (swatch("none", TARGET_COLOUR), "the nearest target"),
              (f'<svg width="16" height="12"><line x1="0" y1="6" x2="16" y2="6" stroke="{ROUTE_COLOUR}" '
               'stroke-width="3"/></svg>', "a shortest route over seen ground")]
    return '<p class="legend map-legend">' + " ".join(f"<span>{mark} {escape(name)}</span>" for mark, name in items) + "</p>"


NODE_W, NODE_H, COLUMN_GAP, ROW_GAP = 130, 26, 40, 10


def room_path(graph: RoomGraph, source: int, target: int) -> list[int]:
    """A shortest path of known moves from `source` to `target` (empty if none), read back from the
    graph's own distances: each room before the target is one move nearer the source."""
    distances = graph.distances_from(source)
    if target not in distances:
        return []
    path = [target]
    while path[-1] != source:
        path.append(min(room for room, after in graph.successors.items()
                        if distances.get(room) == distances[path[-1]] - 1 and path[-1] in _known(graph, after)))
    return path[::-1]


def _known(graph: RoomGraph, added: dict[int, int]) -> list[int]:
    return [room for room, version in added.items() if version <= graph.version]


def room_graph(graph: RoomGraph, names: dict[int, str], here: int, target: int | None) -> str:
    """The rooms and moves known in `graph`, in columns by the fewest moves from `here` (rooms it cannot
    reach last), with the shortest path to `target` drawn."""
    distances = graph.distances_from(here)
    rooms = [room for room in graph.rooms if graph.has(room)]
    far = max(distances.values(), default=0) + 1
    columns: dict[int, list[int]] = {}
    for room in sorted(rooms, key=lambda r: names.get(r, str(r))):
        columns.setdefault(distances.get(room, far), []).append(room)
    place = {room: (column, row) for column, members in columns.items() for row, room in enumerate(members)}
    order = {column: i for i, column in enumerate(sorted(columns))}
    centre = lambda room: (order[place[room][0]] * (NODE_W + COLUMN_GAP) + NODE_W / 2 + 4,  # noqa: E731
                           place[room][1] * (NODE_H + ROW_GAP) + NODE_H / 2 + 4)
    path = room_path(graph, here, target) if target is not None else []
    on_path = set(zip(path, path[1:]))
    width = len(columns) * (NODE_W + COLUMN_GAP) + 8
    height = max((len(m) for m in columns.values()), default=1) * (NODE_H + ROW_GAP) + 8
    parts = [f'<svg class="map rooms" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
             '<title>the rooms and moves known</title>']
    for before, afters in graph.successors.items():
        for after in _known(graph, afters):
            if before == after or before not in place or after not in place:
                continue
            (ax, ay), (bx, by) = centre(before), centre(after)
            kind = "edge path" if (before, after) in on_path else "edge"
            parts.append(f'<line class="{kind}" x1="{ax:.0f}" y1="{ay:.0f}" x2="{bx:.0f}" y2="{by:.0f}"/>')
    for room in rooms:
        cx, cy = centre(room)
        kind = "here" if room == here else "target" if room == target else "on-path" if room in path else ""
        name = names.get(room, f"room {room}")
        parts.append(f'<g class="room {kind}"><rect x="{cx - NODE_W / 2:.0f}" y="{cy - NODE_H / 2:.0f}" '
                     f'width="{NODE_W}" height="{NODE_H}" rx="6"/><text x="{cx:.0f}" y="{cy + 4:.0f}" '
                     f'text-anchor="middle">{escape(name[:20])}</text><title>{escape(name)}</title></g>')
    parts.append("</svg>")
    return "".join(parts)
