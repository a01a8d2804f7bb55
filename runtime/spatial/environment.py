"""What the spatial primitives hold of one environment (docs/architecture.md, Adding an environment): a
`SpatialEnvironment` record, written in the environment's own module (`crafter.py`, `jericho.py`,
`textworld.py`) and listed in `registry.py`. udf.py reads its fields and never compares an environment's
name; the text games share their room graph's loader (rooms.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class SpatialEnvironment:
    name: str  # as dsl/schema.py's ENVIRONMENTS names it
    # load(rows, episode_ids): the episodes' spatial histories from the store (rows: an EpisodeRows), read
    # together, by episode: the state its primitives (dsl/primitives.py) are answered from, a CrafterMaps,
    # a RoomHistory; an episode left out has none.
    load: Callable
