"""Jericho's `steps.changed`: whether each step changed the world (CONVENTIONS.md, Changes).

The recorder asks the interpreter right after each command and lists in the header the steps that
changed nothing (`unchanged_steps`); the store turns the list into one flag per step. A trace recorded
before the list existed reads it as null (format.ADDED_HEADER_FIELDS): its flags are null, never a guess.
"""

from __future__ import annotations

import pyarrow as pa

from .format import TraceText


def with_changed(steps: pa.Table, traces: list[TraceText]) -> pa.Table:
    """Jericho's steps with `changed` appended, in its declared place (the last column)."""
    unchanged = {trace.header["episode_id"]: trace.header["unchanged_steps"]
                 for trace in traces if trace.header["env"] == "jericho"}
    unchanged = {episode: None if listed is None else set(listed) for episode, listed in unchanged.items()}
    flags = [None if unchanged[episode] is None else step not in unchanged[episode]
             for episode, step in zip(steps.column("episode_id").to_pylist(), steps.column("step").to_pylist())]
    return steps.append_column("changed", pa.array(flags, pa.bool_()))
