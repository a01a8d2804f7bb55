"""`qtc compile --explain ID`: a template's IR (its nodes, keys and cardinalities) and the SQL it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .emit import emit
from .lower import lower
from .sample import sampling_for
from .sql import CAP_VARIABLE, DEFAULT_CAP

if TYPE_CHECKING:
    from qtc.dsl.compile import CompiledTemplate


def explain(compiled: CompiledTemplate) -> str:
    ir = lower(compiled.checked, sampling_for(DEFAULT_CAP), premise=True)
    lines = ["-- components (crossed only inside the sample): "
             + " ".join("{" + ", ".join(c) + "}" for c in ir.components),
             "-- IR (key: the parameters besides the episode; M: materialised fence):"]
    width = max(len(n.name) for n in ir.nodes)
    for node in ir.nodes:
        key = "{" + ", ".join(["e", *node.key]) + "}"
        inputs = f" <- {', '.join(node.inputs)}" if node.inputs else ""
        lines.append(f"--   {node.name:<{width}}  {node.op:<9} {key:<22} {node.card:<9} {'M' if node.fence else ' '}  "
                     f"{node.note}{inputs}")
    lines.append(f"-- SQL as generate runs it (sampled: SET VARIABLE {CAP_VARIABLE} = N bindings per episode, "
                 f"{DEFAULT_CAP} when unset; `qtc sql` and --emit-sql get every binding):")
    return "\n".join(lines) + "\n" + emit(ir, compiled.checked)
