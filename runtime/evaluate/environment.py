"""What the evaluation stage holds of one environment (docs/architecture.md, Adding an environment): an
`EvaluateEnvironment` record, written in the environment's own module (`jericho.py`, `crafter.py`,
`textworld.py`) and listed in `registry.py`. The prompt, the context, the scorer, the screens, the report
and the memory feed read its fields and never compare an environment's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class EvaluateEnvironment:
    name: str  # as dsl/schema.py's ENVIRONMENTS names it
    # The game, as the answering prompt names it ("You answer questions about ... {description}").
    description: str
    # state_lines(rows, episode_id, steps): per step of `steps` (0: the start), the lines of the state
    # after it as the agent observed it (context.py), read through an EpisodeRows.
    state_lines: Callable
    # What a log shows once before its blocks (the symbols of a view), or "".
    legend: str = ""
    # Whether its actions are commands, compared as the parser reads them (CONVENTIONS.md, Commands).
    commands: bool = False
    # Whether its episodes may have screens recorded beside their traces (a vision model is shown them).
    screens: bool = False


def one_line(text: str | None) -> str:
    """A text on one line, its runs of white space one space."""
    return " ".join((text or "").split())
