"""`qtc compile --explain ID`: a template's IR (its nodes, keys and cardinalities) and the SQL it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .emit import emit
from .lower import lower
from .sample import sampling_for

if TYPE_CHECKING:
    from qtc.dsl.compile import CompiledTemplate

EXPLAIN_CAP = 16  # the cap the explained statement samples with (generation raises it as needed)


def explain(compiled: CompiledTemplate) -> str:
    ir = lower(compiled.checked, sampling_for(EXPLAIN_CAP), premise=True)
    lines = ["-- components (crossed only inside the sample): "
             + " ".join("{" + ", ".join(c) + "}" for c in ir.components),
             "-- IR (key: the parameters besides the episode; M: materialised fence):"]
    width = max(len(n.name) for n in ir.nodes)
    for node in ir.nodes:
        key = "{" + ", ".join(["e", *node.key]) + "}"
        inputs = f" <- {', '.join(node.inputs)}" if node.inputs else ""
        lines.append(f"--   {node.name:<{width}}  {node.op:<9} {key:<22} {node.card:<9} {'M' if node.fence else ' '}  "
                     f"{node.note}{inputs}")
    lines.append(f"-- SQL as generate runs it (sampled, SET VARIABLE qtc_max_candidates = {EXPLAIN_CAP}; "
                 f"`qtc sql` and --emit-sql get every binding):")
    return "\n".join(lines) + "\n" + emit(ir, compiled.checked)
