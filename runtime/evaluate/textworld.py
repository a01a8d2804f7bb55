"""TextWorld's evaluation record (environment.py): a text game (text_games.py), shown as Jericho's is."""

from __future__ import annotations

from . import text_games
from .environment import EvaluateEnvironment

TEXTWORLD = EvaluateEnvironment("textworld", text_games.DESCRIPTION, text_games.state_lines("textworld"),
                                commands=True)
