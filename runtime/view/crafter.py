"""Crafter's report record (environment.py): a spatial question's figure is the map before its step, with
the player, the material asked about and the shortest route (maps.py)."""

from __future__ import annotations

from qtc.runtime.qa.questions import Question

from .environment import ViewEnvironment
from .maps import crafter_map, crafter_map_legend


def figure(episodes, q: Question, step: int):
    material = q.bindings.get("material")
    maps = episodes.spatial.episode(q.episode_id).state

    def draw() -> str:
        drawn = crafter_map(maps, step, material) if maps else ""
        return drawn and drawn + crafter_map_legend()
    return (q.episode_id, step, material), draw


CRAFTER = ViewEnvironment("crafter", figure)
