"""False premises, checked: an adversarial question is kept only if its premise is false on its trace.

A template's `adversarial p: DOMAIN` clause says which values of p make a false premise; this check
does not take the clause's word for it. The values a question of the template presumes to have
occurred are the parameter's own (answerable) domain. An adversarial candidate is kept only if a value
bound from an adversarial domain lies outside that domain, evaluated on the same episode within the
same horizon. The check is one statement per template that adds a column `qtc_premise_false` (null for
answerable rows): on the IR (dsl/ir/), an anti join with the very domain node the answerable side drew
from; on the legacy emitter, the template's SQL wrapped in a query that compiles the domains again.
"""

from __future__ import annotations

from qtc.dsl.compile import NO_HORIZON, CompiledTemplate, Compiler, ident
from qtc.dsl.ir.backend import choose, ir_statement
from qtc.dsl.ir.lower import PREMISE_COLUMN


def with_premise_check(compiled: CompiledTemplate, horizon: int | None, cap: int | None = None) -> str:
    """The template's statement with the `qtc_premise_false` column added (unchanged without adversarials),
    on the template's backend; `cap` is the `qtc_max_candidates` it will run with (None: unset)."""
    if choose(compiled).backend == "ir":
        return ir_statement(compiled, cap, premise=True)
    return legacy_with_premise_check(compiled, horizon)


def legacy_with_premise_check(compiled: CompiledTemplate, horizon: int | None) -> str:
    """The legacy emitter's statement, wrapped in the check."""
    template = compiled.checked.template
    if not template.adversarials:
        return compiled.sql
    # A fresh compiler compiles the parameters' answerable domains; its horizon cut of the tables they
    # read is the compiler's own, so "within the horizon" means the same thing here as in the template.
    compiler = Compiler(compiled.checked)
    domains = {param.name: param.domain for param in template.params}
    outside = [f"NOT EXISTS (SELECT 1 FROM ({compiler.domain(domains[a.param])}) d "
               f"WHERE d.v = c.{ident('p_' + a.param)})" for a in template.adversarials]
    cuts = [f"h_{table.sql_name} AS ({compiler._horizon_cut(table)})" for table in compiler.tables_used.values()]
    statement = compiled.sql.rstrip().removesuffix(";")
    return (f"WITH qtc_horizon AS (SELECT CAST({NO_HORIZON if horizon is None else horizon} AS BIGINT) AS n),\n"
            + ",\n".join(cuts)
            + f"\nSELECT c.*, CASE WHEN c.adversarial THEN ({' OR '.join(outside)}) END AS {PREMISE_COLUMN}\n"
            f"FROM (\n{statement}\n) c")
