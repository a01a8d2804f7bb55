"""Jericho's evaluation record (environment.py): a text game (text_games.py)."""

from __future__ import annotations

from . import text_games
from .environment import EvaluateEnvironment

JERICHO = EvaluateEnvironment("jericho", text_games.DESCRIPTION, text_games.state_lines("jericho"), commands=True)
