"""`qtc compile --explain ID`: which backend runs the template and why, its IR, and the SQL it runs."""

from __future__ import annotations

from qtc.dsl.compile import CompiledTemplate

from .backend import choose, ir_statement, template_ir


def explain(compiled: CompiledTemplate) -> str:
    choice = choose(compiled)
    lines = [f"-- backend: {choice.backend} ({choice.reason})"]
    if choice.backend == "legacy":
        return "\n".join(lines) + "\n" + compiled.sql
    ir = template_ir(compiled, cap=16, premise=True)
    lines.append("-- components (crossed only inside the sample): "
                 + " ".join("{" + ", ".join(c) + "}" for c in ir.components))
    lines.append("-- IR (key: the parameters besides the episode; M: materialised fence):")
    width = max(len(n.name) for n in ir.nodes)
    for node in ir.nodes:
        key = "{" + ", ".join(["e", *node.key]) + "}"
        inputs = f" <- {', '.join(node.inputs)}" if node.inputs else ""
        lines.append(f"--   {node.name:<{width}}  {node.op:<9} {key:<22} {node.card:<9} {'M' if node.fence else ' '}  "
                     f"{node.note}{inputs}")
    lines.append("-- SQL as generate runs it (compat sampling; uncapped, `qtc sql` gets every binding):")
    return "\n".join(lines) + "\n" + ir_statement(compiled, cap=16, premise=True)
