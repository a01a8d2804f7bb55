"""The compiler's entry point: a checked template to its relational IR (ir/lower.py) and to the DuckDB
statement that computes every candidate of the template for every episode of its env at once
(ir/emit.py), with what the runtime needs to know of its output.

The statement of `CompiledTemplate.sql` has every binding (`qtc compile --emit-sql`, `qtc sql`);
`statement(compiled, cap, premise)` is the one generation runs, keeping at most `cap` bindings per
episode (ir/sample.py) and, asked for, checking false premises. Its output columns are: episode_id,
adversarial, p_<param> for each parameter, l_<let> for each scalar let, answer, accepted (every correct
answer, the answer first), evidence (a sorted list of steps), and display_<name> (a room's display
name) for each room-valued parameter, let and answer. The horizon cut is the compiler's: templates
never write it. Trace values never enter the SQL text; only the template's own literals are written.

A call of a spatial primitive (dsl/primitives.py) compiles to a call of the DuckDB function qtc_<name>,
which runtime/spatial/udf.py registers; such a statement runs where those functions are registered
(`qtc sql`, or any connection from runtime.trace.store.open_store).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import types as T
from .check import CheckedTemplate
from .ir.emit import Probe, emit, emit_probe
from .ir.lower import lower
from .ir.nodes import TemplateIR
from .ir.sample import sampling_for

__all__ = ["CompiledTemplate", "compile_template", "statement", "template_ir"]


@dataclass
class CompiledTemplate:
    id: str
    env: str
    category: str
    answer_type: str
    difficulty: str | None
    sql: str  # every binding, no premise check
    params: dict[str, T.Type]
    lets: dict[str, T.Type]  # the scalar lets, exported as l_<name>
    room_outputs: list[str]  # names with a display_<name> column
    checked: CheckedTemplate
    # What says the template has no rows on a store, cheaply (ir/emit.py, emit_probe); None: nothing does.
    probe: Probe | None = None
    # The statements made by `statement`, by (sampling plan, premise, cut, horizon): made once for the many
    # caps a run asks (the cap is a variable of the statement), and kept with a cached library.
    statements: dict[tuple[str, bool, bool, bool], str] = field(default_factory=dict)


def compile_template(checked: CheckedTemplate) -> CompiledTemplate:
    """Raises ir.nodes.Unsupported for a construct the IR cannot lower (dsl/library.py reports it)."""
    template = checked.template
    lets = {n: ty for n, ty in checked.let_types.items() if isinstance(ty, (T.Scalar, T.ListOf))}
    room_outputs = [p.name for p in template.params if checked.param_types.get(p.name) == T.ROOM]
    room_outputs += [n for n, ty in lets.items() if ty == T.ROOM]
    ir = lower(checked, "every")
    return CompiledTemplate(template.id, checked.env, checked.category, checked.answer_type, checked.difficulty,
                            emit(ir, checked), dict(checked.param_types), lets, room_outputs, checked, emit_probe(ir))


def template_ir(compiled: CompiledTemplate, cap: int | None = None, premise: bool = False,
                order: str = "domain", cut: bool = False) -> TemplateIR:
    return lower(compiled.checked, sampling_for(cap, order), premise, cut)


def statement(compiled: CompiledTemplate, cap: int | None = None, premise: bool = False,
              order: str = "domain", cut: bool = False, horizon: bool = True) -> str:
    """The statement generation runs: at most `cap` bindings per episode and side (read from the
    variable `qtc_max_candidates`; None: every binding) drawn in `order` (ir/sample.py: domain or
    compat), with the false-premise column if `premise`, and if `cut` the rows saying where the cap
    cut a sample (ir/lower.py, CUT_COLUMN), which tell generate whether a larger cap could add any.
    With `horizon` false, for a run that sets no horizon (ir/emit.py: fewer CTEs, the same rows);
    both are made from one IR."""
    if cap is None and not premise:
        return compiled.sql
    key = (sampling_for(cap, order), premise, cut)
    if (*key, horizon) not in compiled.statements:
        ir = template_ir(compiled, cap, premise, order, cut)
        for each in (True, False):
            compiled.statements[(*key, each)] = emit(ir, compiled.checked, each)
    return compiled.statements[(*key, horizon)]
