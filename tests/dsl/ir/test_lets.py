"""How lets lower (dsl/ir/exprs.py): a picked row's column (`nth(rel, k).column`, first, last) is a list
column of the relation's aggregate node indexed by k, beside the count and every other aggregate over
the same rows; the rows a condition picks are read by the nodes that read them; a node keyed by every
parameter reads the sampled bindings themselves. The differential tests check their answers on every
template; these check the shape, and that list_extract is nth's rule."""

from __future__ import annotations

import duckdb
from support.ground_truth import library

from qtc.dsl.compile import template_ir
from qtc.dsl.functions.rows import Nth


def ir_of(template_id: str):
    return template_ir(next(c for c in library() if c.id == template_id), 16, premise=True)


def test_a_picked_column_is_an_aggregate_column_not_a_ranked_row():
    """events.count_between's anchors (`first(...).step`) and the counted event's first and last steps
    need no ranking: first(times) and last(times) index one list of times' steps."""
    ir = ir_of("events.count_between")
    assert not [n for n in ir.nodes if n.op == "row"]
    lists = [n for n in ir.nodes if n.op == "aggregate" and "list(t.\"step\" ORDER BY" in n.sql]
    assert len(lists) == 3  # opened, closed, and times (its first and last one column)
    answerable = ir.node(next(n.name for n in ir.nodes if n.op == "assemble"))
    assert "list_extract(" in answerable.sql and ", -1)" in answerable.sql


def test_nodes_keyed_by_every_parameter_read_the_sample_and_rows_are_read_where_picked():
    ir = ir_of("events.count_between")
    every = set(ir.params)
    assert not [n for n in ir.nodes if n.op == "demand" and set(n.key) == every]
    # Only `times` has a relation node, for `between` (a condition over times' rows); the aggregates, and
    # domains, read the rows their conditions pick where they pick them.
    relations = [n for n in ir.nodes if n.op == "relation"]
    assert len(relations) == 1 and relations[0].key == ("kind", "subject")
    assert [n.op for n in ir.nodes if relations[0].name in n.inputs] == ["aggregate"]  # between's count, steps


class _Values:
    """The two things Nth.reference asks of the reference evaluator: a relation's rows in order, and k."""
    def __init__(self, rows: list, k: int):
        self.rows, self.k = rows, k

    def value(self, arg, scope):
        return self.rows if arg == "rel" else self.k

    def ordered(self, rows, scope):
        return rows


class _Call:
    args = ("rel", "k")


def test_list_extract_is_the_rule_of_nth():
    """The reference evaluator's nth and DuckDB's list_extract agree for every k and every length
    (from the end for k < 0, nothing past either end or for k = 0)."""
    con = duckdb.connect()
    nth = Nth("nth", "")
    for length in range(4):
        values = list(range(10, 10 + length))
        for k in range(-5, 6):
            got = con.execute("SELECT list_extract(?::BIGINT[], ?)", [values, k]).fetchone()[0]
            assert got == nth.reference(_Values(values, k), _Call(), None), (length, k)
