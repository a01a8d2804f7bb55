"""What the trace format says of a trace as a whole, beyond each line's fields (docs/trace-format.md,
Consistency): checked at load, so that a trace that loads is one every template can run on.

Each line of a trace can be well formed while the lines disagree: a Jericho room listed twice in the
header (a room's name is then two rows where a question reads one), or a Crafter map whose rows differ
in length, a position, a change or a seen cell off the map (the spatial primitives index the map by
them). Each is refused with the file, the line and the field, as the reader refuses a malformed line.

Each environment's checks are its trace record's (environment.py: `check_trace`, in Python, and
`check_lines`, in SQL over the step lines the store's reader holds: Crafter's in crafter.py).
"""

from __future__ import annotations

import duckdb

from .format import TraceText
from .registry import TRACE_ENVIRONMENTS, by_environment


def check_consistency(reader: duckdb.DuckDBPyConnection, traces: list[TraceText]) -> None:
    """Raise a UserError naming the file, line and field of the first inconsistency of `traces`, whose
    lines the reader has read (and each environment's `register` has registered): each trace by its
    header, in file order, then each environment's lines."""
    for trace in traces:
        TRACE_ENVIRONMENTS[trace.header["env"]].check_trace(trace)
    for env, own in by_environment(traces).items():
        TRACE_ENVIRONMENTS[env].check_lines(reader, own)
