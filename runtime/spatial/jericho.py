"""Jericho's spatial record (environment.py): the room graph of the moves made (rooms.py)."""

from __future__ import annotations

from qtc.dsl.schema import JERICHO_STEPS

from .environment import SpatialEnvironment
from .rooms import room_history_loader

JERICHO = SpatialEnvironment("jericho", room_history_loader(JERICHO_STEPS))
