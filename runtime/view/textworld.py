"""TextWorld's report record (environment.py): a spatial question's figure is the room graph of the moves
made before its step (text_games.py), as Jericho's."""

from __future__ import annotations

from qtc.dsl.schema import TEXTWORLD_ROOMS, TEXTWORLD_STEPS

from .environment import ViewEnvironment
from .text_games import room_graph_figure

TEXTWORLD = ViewEnvironment("textworld", room_graph_figure(TEXTWORLD_STEPS, TEXTWORLD_ROOMS))
