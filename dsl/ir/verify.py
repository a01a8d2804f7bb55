"""Invariants of a lowered template, checked by the tests on every template they compile.

- No product before the sample: a node whose rows are a product of parameter domains (a component of
  linked parameters) feeds only its own component's next node (directly, or through the demand that
  is the context of the next parameter's domain) or the sample.
- Every key covers the free parameters: a node reads no parameter column outside its key.
- A Python primitive over the rows of a relation computed for the bindings is called once per distinct
  argument tuple: only in a `values` node (exprs.per_argument_values), which the rows read by a join.
- No correlated subquery: every subquery of the statement is a derived table (after FROM or JOIN),
  none is LATERAL, and DuckDB plans the statement without a dependent (DELIM) join.
"""

from __future__ import annotations

import re

import duckdb

from qtc.dsl.primitives import PRIMITIVES

from .nodes import CARD_PRODUCT, TemplateIR

KEYED_OPS = ("domain", "demand", "relation", "bag", "aggregate", "row", "let")
PRIMITIVE_CALL = re.compile(r"\b(?:%s)\(" % "|".join(p.sql_name for p in PRIMITIVES.values()))
KEYED_ROWS = re.compile(r"\bJOIN (?!h_)\w+ t ON")  # the rows t of a node, not of a horizon-cut table


def problems(ir: TemplateIR) -> list[str]:
    found = []
    by_name = {n.name: n for n in ir.nodes}
    for node in ir.nodes:
        for name in node.inputs:
            source = by_name[name]
            if source.card == CARD_PRODUCT and node.op not in ("component", "demand", "sample") and ir.sampling != "every":
                found.append(f"{node.name} ({node.op}) reads the product {name} before the sample")
        if node.op != "values" and PRIMITIVE_CALL.search(node.sql) and KEYED_ROWS.search(node.sql):
            found.append(f"{node.name} calls a primitive over the rows of a keyed relation, not once per argument tuple")
        if node.op in KEYED_OPS:
            read = set(re.findall(r'"p_([^"]+)"', node.sql))
            if not read <= set(node.key):
                found.append(f"{node.name} reads {sorted(read - set(node.key))} outside its key {list(node.key)}")
    return found


def correlated(con: duckdb.DuckDBPyConnection, sql: str) -> list[str]:
    """Why `sql` is correlated (empty if it is not): a LATERAL join, or a dependent join in DuckDB's plan."""
    found = ["a LATERAL join"] if re.search(r"\bLATERAL\b", sql) else []
    # A subquery must be a derived table.
    found += [f"a subquery outside FROM: ...{sql[max(0, m.start() - 40):m.start() + 20]}..."
              for m in re.finditer(r"\(SELECT\b", sql) if not re.search(r"\b(FROM|JOIN)\s*$", sql[:m.start()])]
    # The plan as JSON: the same operator names as the text form, which takes DuckDB ten times as long to draw.
    plan = "\n".join(row[1] for row in con.execute("EXPLAIN (FORMAT json) " + sql.rstrip().rstrip(";")).fetchall())
    # DuckDB 1.x names a dependent join DELIM_JOIN; 2.x plans it as a CTE named __duckdb_delim_<n>.
    if re.search("delim", plan, re.IGNORECASE):
        found.append("a dependent (delim) join in DuckDB's plan")
    return found
