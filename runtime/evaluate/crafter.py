"""Crafter's evaluation record (environment.py): a state shown as the local view, a grid of symbols around
the player named once in the log's legend, the creatures in it (relative to the player), the terrain
underfoot, facing, inventory and the HUD stats, daylight and sleep; never absolute map coordinates."""

from __future__ import annotations

from collections import defaultdict

from qtc.dsl import crafter_data
from qtc.dsl.render import displacement_text
from qtc.runtime.episode_rows import EpisodeRows

from .environment import EvaluateEnvironment

# Symbols of the Crafter view grid: one character per cell, named once in the context's legend.
MATERIAL_SYMBOLS = {"water": "~", "grass": ".", "stone": "#", "path": "_", "sand": ":", "tree": "T",
                    "lava": "L", "coal": "c", "iron": "i", "diamond": "d", "table": "t", "furnace": "f"}
CREATURE_SYMBOLS = {"zombie": "Z", "skeleton": "S", "cow": "C", "plant": "p", "arrow": "*", "fence": "F"}
PLAYER_SYMBOL = "@"
OUTSIDE_SYMBOL = "="  # a view cell beyond the edge of the world
# The local view is 9 cells wide and 7 high with the player at its centre (Crafter's local view).
VIEW_CENTRE = (4, 3)


def _grid(player: tuple[int, int], cells: dict[tuple[int, int], str], creatures: list[tuple]) -> list[str]:
    px, py = player
    symbols = {(x, y): MATERIAL_SYMBOLS[m] for (x, y), m in cells.items()}
    for creature, x, y in creatures:
        symbols[(x, y)] = CREATURE_SYMBOLS[creature]
    symbols[player] = PLAYER_SYMBOL
    width, height = 2 * VIEW_CENTRE[0] + 1, 2 * VIEW_CENTRE[1] + 1
    return ["".join(symbols.get((px - VIEW_CENTRE[0] + i, py - VIEW_CENTRE[1] + j), OUTSIDE_SYMBOL)
                    for i in range(width)) for j in range(height)]


def state_lines(rows: EpisodeRows, episode_id: str, steps: list[int]) -> dict[int, list[str]]:
    # The player's map position places the view and the creatures around it; it is never shown.
    states = rows.execute("""
        WITH state AS (
            SELECT 0 AS step, x_before AS x, y_before AS y, facing_before AS facing,
                   terrain_before AS terrain, NULL::DOUBLE AS daylight, NULL::BOOLEAN AS sleeping
            FROM {crafter_steps} WHERE step = 1
            UNION ALL
            SELECT step, x_after, y_after, facing_after, terrain_after, daylight, sleeping
            FROM {crafter_steps})
        SELECT * FROM state WHERE step IN (SELECT unnest($steps)) ORDER BY step""", episode_id, steps=steps).fetchall()
    inventory, cells, creatures = defaultdict(dict), defaultdict(dict), defaultdict(list)
    for step, item, count in rows.execute(
            "SELECT step, item, count FROM {crafter_inventory} WHERE step IN (SELECT unnest($steps))",
            episode_id, steps=steps).fetchall():
        inventory[step][item] = count
    for step, x, y, material in rows.execute(
            "SELECT step, x, y, material FROM {crafter_view} WHERE step IN (SELECT unnest($steps))",
            episode_id, steps=steps).fetchall():
        cells[step][(x, y)] = material
    for step, creature, x, y in rows.execute(
            "SELECT step, creature, x, y FROM {crafter_creatures} WHERE step IN (SELECT unnest($steps)) "
            "ORDER BY step, creature, y, x", episode_id, steps=steps).fetchall():
        creatures[step].append((creature, x, y))
    lines = {}
    for step, x, y, facing, terrain, daylight, sleeping in states:
        held = inventory[step]
        condition = [f"standing on {terrain}, facing {facing}"]
        if daylight is not None:
            condition += [f"daylight {daylight:.2f}", "asleep" if sleeping else "awake"]
        stats = ", ".join(f"{s} {held.get(s, 0)}" for s in crafter_data.STATS)
        items = ", ".join(f"{i} {held[i]}" for i in crafter_data.ITEMS if held.get(i)) or "nothing"
        nearby = "; ".join(f"{c} {displacement_text(cx - x, cy - y)}" for c, cx, cy in creatures[step])
        lines[step] = [" | ".join(condition), f"{stats} | inventory: {items}", "view:",
                       *(f"  {row}" for row in _grid((x, y), cells[step], creatures[step])),
                       f"creatures in view: {nearby or 'none'}"]
    return lines


def crafter_legend() -> str:
    materials = ", ".join(f"{s} {m}" for m, s in MATERIAL_SYMBOLS.items())
    creatures = ", ".join(f"{s} {c}" for c, s in CREATURE_SYMBOLS.items())
    return (f"View symbols: {PLAYER_SYMBOL} you; {materials}; {creatures}; {OUTSIDE_SYMBOL} outside the "
            "world. The view is 9 cells wide and 7 high; up is the top row.")


CRAFTER = EvaluateEnvironment("crafter", "Crafter, a two-dimensional survival game seen from above", state_lines,
                              legend=crafter_legend(), screens=True)
