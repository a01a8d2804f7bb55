"""The values a game always has, where they are fixed by the game itself: Crafter's actions,
materials, items, achievements, directions and creatures, from Crafter's own data; the event kinds of
both games (dsl/events.py). Jericho's other vocabularies differ per story file and are only known from
traces (the `vocab` table)."""

from __future__ import annotations

import importlib

from . import types as T
from .events import KINDS
from .schema import ENVIRONMENTS


def game_values(env: str, ty: T.Type) -> tuple[str, ...] | None:
    """Every value of type `ty` in `env`, or None when they are not fixed ahead of the traces."""
    if ty == T.EVENT:
        return KINDS[env]
    environment = ENVIRONMENTS.get(env)  # None for a template of any game
    if environment is None or environment.fixed_values is None:
        return None
    # Imported only once a template of that game is checked (Crafter's imports the crafter package).
    return importlib.import_module(f"{__package__}.{environment.fixed_values}").FIXED_VALUES.get(ty)
