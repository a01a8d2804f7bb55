"""What an agent returns for one step: the action, and the reason it gave (None when it gave none)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    action: str
    reason: str | None = None


def as_choice(chosen) -> Choice | None:
    """What an agent's `choose` returned, as a Choice: a Choice, an action, an (action, reason) pair, or
    None (the agent stops). Whether the action is one of the game's is the recording's to say.

    >>> as_choice("north"), as_choice(("do", "hit the tree")), as_choice(None)
    (Choice(action='north', reason=None), Choice(action='do', reason='hit the tree'), None)
    """
    if chosen is None or isinstance(chosen, Choice):
        return chosen
    if isinstance(chosen, tuple) and len(chosen) == 2:
        return Choice(*chosen)
    return Choice(chosen)
