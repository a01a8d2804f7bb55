"""What the report holds of one environment (docs/architecture.md, Adding an environment): a
`ViewEnvironment` record, written in the environment's own module (`jericho.py`, `crafter.py`,
`textworld.py`) and listed in `registry.py`; its log's legend and screens are its evaluation record's
(runtime/evaluate/environment.py). episodes.py reads its fields and never compares an environment's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from qtc.runtime.qa.questions import Question


@dataclass(frozen=True)
class ViewEnvironment:
    name: str  # as dsl/schema.py's ENVIRONMENTS names it
    # figure(episodes, q, step): the figure of a spatial question at `step` (episodes.Episodes reads the
    # store: its `spatial`, `rows`), as (what the figure depends on, a function drawing it), or None;
    # None: the environment has no figure.
    figure: Callable | None = None


def step_binding(q: Question, names: tuple[str, ...]) -> int | None:
    """The first of the bindings `names` that the question binds to a number (a step or a room)."""
    for name in names:
        value = q.bindings.get(name)
        if value is not None and str(value).isdigit():
            return int(value)
    return None
