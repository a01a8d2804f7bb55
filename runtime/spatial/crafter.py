"""Crafter's spatial record (environment.py): the map history of an episode (grid.py's CrafterMaps),
read from the store's map, changes, views and positions."""

from __future__ import annotations

import numpy as np

from qtc.dsl import crafter_data
from qtc.dsl.sql import sql_string
from qtc.runtime.episode_rows import EpisodeRows

from .environment import SpatialEnvironment
from .grid import CrafterMaps

# The cells of each view, a fixed creature (a plant) seen on a cell shown in place of the material under
# it: what the player had seen (cells='seen') holds it as a cell no route enters (CONVENTIONS.md, Space).
SIGHTINGS = ("(SELECT v.episode_id, v.step, v.x, v.y, coalesce(c.creature, v.material) AS material "
             "FROM {crafter_view} v LEFT JOIN {crafter_creatures} c ON c.episode_id = v.episode_id "
             "AND c.step = v.step AND c.x = v.x AND c.y = v.y AND c.creature IN ("
             + ", ".join(sql_string(c) for c in crafter_data.FIXED_CREATURES) + "))")
# An episode's number among those read together.
EPISODE_NUMBER = "list_position($episodes, episode_id) - 1"


def _coded(rows: EpisodeRows, source: str, columns: str, material: str, episodes: list[str],
           names: list[str]) -> list[np.ndarray]:
    """Each episode's rows (columns..., material) of `source` as integers, each material as its index in
    `names`, in no order: grid.py orders what it reads in order (a cell is at most once a step), and
    sorting the ~60 sightings of every step in SQL costs more than what reads them."""
    found = rows.execute_many(f"SELECT {EPISODE_NUMBER}, {columns}, list_position($names, {material}) - 1 "
                              f"FROM {source}", episodes, names=names).fetchnumpy()
    coded = np.column_stack([np.asarray(column, dtype=np.int64) for column in found.values()])
    coded = coded[np.argsort(coded[:, 0], kind="stable")]
    parts = np.split(coded, np.searchsorted(coded[:, 0], np.arange(1, len(episodes))))
    return [part[:, 1:] for part in parts]


def load(rows: EpisodeRows, episodes: list[str]) -> dict[str, CrafterMaps]:
    mapped = [episode for (episode,) in rows.execute_many(
        "SELECT DISTINCT episode_id FROM {crafter_map_init} ORDER BY episode_id", episodes).fetchall()]
    if not mapped:
        return {}
    materials = rows.execute_many("SELECT DISTINCT material FROM (SELECT material FROM {crafter_map_init} "
                                  "UNION ALL SELECT material_after FROM {crafter_map_changes} "
                                  "UNION ALL SELECT material FROM {crafter_view})", mapped).fetchall()
    # Materials beyond the game's own (none in Crafter's traces) are numbered after them, the same numbers
    # for every episode read together: a number is only ever read back as its name.
    names = list(crafter_data.MATERIALS) + list(crafter_data.FIXED_CREATURES)
    names += sorted({material for (material,) in materials} - set(names))
    cells = _coded(rows, "{crafter_map_init}", "x, y", "material", mapped, names)
    changes = _coded(rows, "{crafter_map_changes}", "step, x, y", "material_after", mapped, names)
    views = _coded(rows, SIGHTINGS, "step, x, y", "material", mapped, names)
    positions: dict[int, dict[int, tuple]] = {number: {} for number in range(len(mapped))}
    for number, step, x, y in rows.execute_many(f"SELECT {EPISODE_NUMBER}, step, x_before, y_before "
                                                "FROM {crafter_steps}", mapped).fetchall():
        positions[number][step] = (x, y)
    maps = {}
    for number, episode in enumerate(mapped):
        initial = np.zeros((cells[number][:, 0].max() + 1, cells[number][:, 1].max() + 1), dtype=np.int16)
        initial[cells[number][:, 0], cells[number][:, 1]] = cells[number][:, 2]
        maps[episode] = CrafterMaps(tuple(names), initial, changes[number], positions[number], views[number])
    return maps


CRAFTER = SpatialEnvironment("crafter", load)
