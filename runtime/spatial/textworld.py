"""TextWorld's spatial record (environment.py): the room graph of the moves made (rooms.py), as Jericho's:
its steps table has the same columns."""

from __future__ import annotations

from qtc.dsl.schema import TEXTWORLD_STEPS

from .environment import SpatialEnvironment
from .rooms import room_history_loader

TEXTWORLD = SpatialEnvironment("textworld", room_history_loader(TEXTWORLD_STEPS))
