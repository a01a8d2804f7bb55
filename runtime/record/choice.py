"""What an agent returns for one step: the action, and the reason it gave (None when it gave none)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    action: str
    reason: str | None = None
