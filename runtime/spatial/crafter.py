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
SIGHTINGS = ("(SELECT v.step, v.x, v.y, coalesce(c.creature, v.material) AS material "
             "FROM {crafter_view} v LEFT JOIN {crafter_creatures} c "
             "ON c.step = v.step AND c.x = v.x AND c.y = v.y AND c.creature IN ("
             + ", ".join(sql_string(c) for c in crafter_data.FIXED_CREATURES) + "))")


def _coded(rows: EpisodeRows, source: str, columns: str, material: str, episode: str,
           names: list[str]) -> np.ndarray:
    """Rows (columns..., material) of an episode's rows of `source` as integers, each material as its
    index in `names`, in no order: grid.py orders what it reads in order (a cell is at most once a step),
    and sorting the ~60 sightings of every step in SQL costs more than what reads them."""
    found = rows.execute(f"SELECT {columns}, list_position($names, {material}) - 1 FROM {source}",
                         episode, names=names).fetchnumpy()
    return np.column_stack([np.asarray(column, dtype=np.int64) for column in found.values()])


def load(rows: EpisodeRows, episode: str) -> CrafterMaps | None:
    if not rows.has("crafter_map_init", episode):
        return None
    materials = rows.execute("SELECT DISTINCT material FROM (SELECT material FROM {crafter_map_init} "
                             "UNION ALL SELECT material_after FROM {crafter_map_changes} "
                             "UNION ALL SELECT material FROM {crafter_view})", episode).fetchall()
    names = list(crafter_data.MATERIALS) + list(crafter_data.FIXED_CREATURES)
    names += sorted({material for (material,) in materials} - set(names))
    cells = _coded(rows, "{crafter_map_init}", "x, y", "material", episode, names)
    initial = np.zeros((cells[:, 0].max() + 1, cells[:, 1].max() + 1), dtype=np.int16)
    initial[cells[:, 0], cells[:, 1]] = cells[:, 2]
    changes = _coded(rows, "{crafter_map_changes}", "step, x, y", "material_after", episode, names)
    views = _coded(rows, SIGHTINGS, "step, x, y", "material", episode, names)
    positions = rows.execute("SELECT step, x_before, y_before FROM {crafter_steps}", episode).fetchall()
    return CrafterMaps(tuple(names), initial, changes, {s: (x, y) for s, x, y in positions}, views)


CRAFTER = SpatialEnvironment("crafter", load)
