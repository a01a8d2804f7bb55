"""Which emitter runs a template, and the statement it runs for a cap.

A template runs on the IR when it lowers and its family has been migrated (its generated questions
checked byte for byte against the legacy emitter's by bench/golden.py); otherwise on the legacy
emitter (dsl/compile.py). The environment variable QTC_BACKEND=legacy|ir overrides the choice for
every template (`ir` still falls back where the IR cannot lower), for golden checks and benchmarks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from qtc.dsl.compile import CompiledTemplate
from qtc.errors import UserError

from .emit import emit
from .lower import lower
from .nodes import TemplateIR, Unsupported
from .sample import MAX_TOP_N

BACKEND_VARIABLE = "QTC_BACKEND"
BACKENDS = ("legacy", "ir")
# Families on the IR, by category: each was golden-checked (bench/golden.py) before it was listed.
IR_CATEGORIES = frozenset({"induction", "temporal", "single_hop", "multi_hop", "logical", "spatial"})


@dataclass(frozen=True)
class Choice:
    backend: str  # "legacy" or "ir"
    reason: str


def choose(compiled: CompiledTemplate, override: str | None = None) -> Choice:
    wanted = override or os.environ.get(BACKEND_VARIABLE) or None
    if wanted not in (None, *BACKENDS):
        raise UserError(f"{BACKEND_VARIABLE} must be one of {', '.join(BACKENDS)}, got {wanted!r}")
    if wanted == "legacy":
        return Choice("legacy", f"{BACKEND_VARIABLE}=legacy")
    if wanted is None and compiled.category not in IR_CATEGORIES:
        return Choice("legacy", f"the {compiled.category} family is not migrated to the IR yet")
    try:
        lower(compiled.checked)
    except Unsupported as reason:
        return Choice("legacy", f"the IR cannot lower it yet: {reason}")
    return Choice("ir", f"{BACKEND_VARIABLE}=ir" if wanted else f"the {compiled.category} family is on the IR")


def sampling(cap: int | None) -> str:
    """How the IR samples for a cap: every binding, a streaming top-N, or (caps beyond what DuckDB's
    top-N aggregate takes) the legacy window."""
    if cap is None:
        return "every"
    return "top_n" if cap < MAX_TOP_N else "window"


def template_ir(compiled: CompiledTemplate, cap: int | None = None, premise: bool = False) -> TemplateIR:
    return lower(compiled.checked, sampling(cap), premise)


def ir_statement(compiled: CompiledTemplate, cap: int | None = None, premise: bool = False) -> str:
    """The IR statement for a cap (None: every binding); it reads the cap from `qtc_max_candidates`."""
    return emit(template_ir(compiled, cap, premise), compiled.checked)
