"""Every environment's trace record (environment.py), by name: the one list the trace stage reads an
environment from. An environment added to dsl/schema.py's ENVIRONMENTS is added here too (tests/test_layout.py
checks that they agree)."""

from __future__ import annotations

from .crafter import CRAFTER
from .environment import TraceEnvironment
from .jericho import JERICHO
from .textworld import TEXTWORLD

TRACE_ENVIRONMENTS: dict[str, TraceEnvironment] = {env.name: env for env in (JERICHO, CRAFTER, TEXTWORLD)}


def by_environment(traces: list) -> dict[str, dict]:
    """Each environment's traces of `traces` (TraceText, in file order) by file number, as the store's
    `files` table numbers them; the environments with none left out, the others in registry order."""
    numbered: dict[str, dict] = {env: {} for env in TRACE_ENVIRONMENTS}
    for number, trace in enumerate(traces):
        numbered[trace.header["env"]][number] = trace
    return {env: own for env, own in numbered.items() if own}
