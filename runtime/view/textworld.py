"""TextWorld's report record (environment.py): no figure yet (its map, the true one of textworld_exits,
is not drawn)."""

from __future__ import annotations

from .environment import ViewEnvironment

TEXTWORLD = ViewEnvironment("textworld")
