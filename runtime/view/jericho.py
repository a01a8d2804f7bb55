"""Jericho's report record (environment.py): a spatial question's figure is the room graph of the moves
made before its step (text_games.py)."""

from __future__ import annotations

from qtc.dsl.schema import JERICHO_ROOMS, JERICHO_STEPS

from .environment import ViewEnvironment
from .text_games import room_graph_figure

JERICHO = ViewEnvironment("jericho", room_graph_figure(JERICHO_STEPS, JERICHO_ROOMS))
