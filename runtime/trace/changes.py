"""Jericho's `steps.changed`: whether each step changed the world (CONVENTIONS.md, Changes).

The recorder asks the interpreter right after each command and lists in the header the steps that
changed nothing (`unchanged_steps`); the store turns the list into one flag per step. A step whose
inventory, room or score changed changed the world whatever the list says (karn's access card digested
while the interpreter's test saw nothing). A trace recorded before the list existed reads it as null
(format.ADDED_HEADER_FIELDS): its flags are null, never a guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from .format import TraceText


def with_changed(steps: pa.Table, traces: dict[int, TraceText]) -> pa.Table:
    """Jericho's steps with `changed` appended, in its declared place (the last column), from its traces."""
    unchanged = {trace.header["episode_id"]: trace.header["unchanged_steps"] for trace in traces.values()}
    unchanged = {episode: None if listed is None else set(listed) for episode, listed in unchanged.items()}
    columns = ("episode_id", "step", "inventory_before", "inventory_after", "room_before", "room_after", "reward")
    flags = [None if unchanged[episode] is None else step not in unchanged[episode] or visibly_changed(*state)
             for episode, step, *state in zip(*(steps.column(name).to_pylist() for name in columns))]
    return steps.append_column("changed", pa.array(flags, pa.bool_()))


def visibly_changed(inventory_before: list, inventory_after: list, room_before: int, room_after: int,
                    reward: int) -> bool:
    """Whether a step changed what the trace itself shows: the inventory, the room or the score.

    >>> visibly_changed(["card"], [], 5, 5, 0), visibly_changed(["card"], ["card"], 5, 5, 0)
    (True, False)
    """
    return sorted(inventory_before) != sorted(inventory_after) or room_before != room_after or reward != 0
