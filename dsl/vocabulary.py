"""The values a game always has, where they are fixed by the game itself: Crafter's actions,
materials, items, achievements, directions and creatures, from Crafter's own data; the event kinds of
both games (dsl/events.py). Jericho's other vocabularies differ per story file and are only known from
traces (the `vocab` table)."""

from __future__ import annotations

from . import types as T
from .events import KINDS


def game_values(env: str, ty: T.Type) -> tuple[str, ...] | None:
    """Every value of type `ty` in `env`, or None when they are not fixed ahead of the traces."""
    if ty == T.EVENT:
        return KINDS[env]
    if env != "crafter":
        return None
    from . import crafter_data  # imports the crafter package: only once a Crafter template is checked
    return {T.ACTION: crafter_data.ACTIONS, T.MATERIAL: crafter_data.MATERIALS,
            T.ITEM: crafter_data.INVENTORY_KEYS, T.ACHIEVEMENT: crafter_data.ACHIEVEMENTS,
            T.DIRECTION: tuple(crafter_data.FACINGS.values()), T.CREATURE: crafter_data.CREATURES}.get(ty)
