"""The values a game always has, where they are fixed by the game itself: Crafter's actions,
materials, items, achievements, directions and creatures, from Crafter's own data. Jericho's
vocabularies differ per story file and are only known from traces (the `vocab` table)."""

from __future__ import annotations

from . import types as T


def game_values(env: str, ty: T.Type) -> tuple[str, ...] | None:
    """Every value of type `ty` in `env`, or None when they are not fixed ahead of the traces."""
    if env != "crafter":
        return None
    from . import crafter_data  # imports the crafter package: only once a Crafter template is checked
    return {T.ACTION: crafter_data.ACTIONS, T.MATERIAL: crafter_data.MATERIALS,
            T.ITEM: crafter_data.INVENTORY_KEYS, T.ACHIEVEMENT: crafter_data.ACHIEVEMENTS,
            T.DIRECTION: tuple(crafter_data.FACINGS.values()), T.CREATURE: crafter_data.CREATURES}.get(ty)
