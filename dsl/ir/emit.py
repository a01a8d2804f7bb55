"""The IR as one DuckDB statement: the horizon cuts, then one CTE per node (fences MATERIALIZED, the
rest left to DuckDB to inline), then the final SELECT."""

from __future__ import annotations

from qtc.dsl.compile import HORIZON_VARIABLE, NO_HORIZON, Compiler
from qtc.dsl.sql import sql_string
from qtc.dsl.check import CheckedTemplate

from .nodes import TemplateIR


def emit(ir: TemplateIR, checked: CheckedTemplate) -> str:
    cuts = Compiler(checked)  # the legacy emitter's horizon cuts, so "within the horizon" means one thing
    ctes = [("qtc_horizon", f"SELECT COALESCE(TRY_CAST(getvariable({sql_string(HORIZON_VARIABLE)}) AS BIGINT), "
                            f"{NO_HORIZON}) AS n", False)]
    ctes += [(f"h_{table.sql_name}", cuts._horizon_cut(table), False) for table in ir.tables.values()]
    ctes += [(node.name, node.sql, node.fence) for node in ir.nodes]
    body = ",\n".join(f"{name} AS {'MATERIALIZED ' if fence else ''}(\n  {sql}\n)" for name, sql, fence in ctes)
    mode = {"every": "every binding", "top_n": "compat sampling (streaming top-N of qtc_max_candidates)",
            "window": "compat sampling (window sort of qtc_max_candidates)"}[ir.sampling]
    header = (f"-- qtc template {ir.template_id} ({checked.env}, {checked.category}, answer {checked.answer_type}); "
              f"IR backend, {mode}\n-- horizon: SET VARIABLE {HORIZON_VARIABLE} = N; (unset: whole episodes)\n")
    return f"{header}WITH {body}\n{ir.final};\n"
