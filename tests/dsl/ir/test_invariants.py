"""IR invariants on every template of the library, for each sampling plan: no product of parameter
domains before the sample, every node keyed by the parameters it reads, no correlated subquery (in the
text, and in DuckDB's plan of the statement)."""

from __future__ import annotations

import pytest
from support.ground_truth import library

from qtc.dsl.compile import statement, template_ir
from qtc.dsl.ir.explain import explain
from qtc.dsl.ir.verify import correlated, problems


@pytest.mark.parametrize("cap", (16, None, 2_000_000))
def test_every_template_lowers_without_products_correlation_or_missing_keys(trace_db, cap):
    for compiled in library():
        ir = template_ir(compiled, cap, premise=True)
        assert problems(ir) == [], compiled.id
        assert correlated(trace_db, statement(compiled, cap, premise=True)) == [], compiled.id


def test_the_correlation_check_can_fail(trace_db):
    """The check above is not vacuous: a correlated subquery, and a LATERAL join, are found."""
    correlated_sql = ("SELECT episode_id, (SELECT count(*) FROM crafter_steps s WHERE s.episode_id = e.episode_id) "
                      "FROM episodes e")
    assert correlated(trace_db, correlated_sql)
    assert correlated(trace_db, "SELECT * FROM episodes e, LATERAL (SELECT e.episode_id AS x) d")
    # A derived table DuckDB joins laterally unasked: the text looks uncorrelated, only the plan tells.
    implicit = ("SELECT * FROM episodes e JOIN (SELECT count(*) AS n FROM crafter_steps s "
                "WHERE s.episode_id = e.episode_id) d ON true")
    assert correlated(trace_db, implicit) == ["a dependent (delim) join in DuckDB's plan"]


def test_explain_shows_the_components_and_the_window_frame():
    compiled = next(c for c in library() if c.id == "crafter.keyword_count_in_range")
    text = explain(compiled)
    assert "components (crossed only inside the sample): {kw} {L, R}" in text
    assert "RANGE BETWEEN 19 FOLLOWING AND 59 FOLLOWING" in text and "md5_number_lower(" in text


def test_a_step_range_joins_its_own_steps_and_a_primitive_is_called_once_per_argument_tuple():
    """`steps | where step in $L..$R` joins each binding's steps (a join on the episode alone tests every
    step of it against every binding), and the Python primitive that the require and argmin both read
    over the range's rows is called in one node, over the distinct (step, material) asked."""
    compiled = next(c for c in library() if c.id == "crafter.closest_step_in_range")
    text = explain(compiled)
    assert "unnest(range(greatest(CAST(c.\"p_L\" AS BIGINT)" in text and "AND t.step = c.qtc_step" in text
    ir = template_ir(compiled, 16, premise=True)
    calling = [n for n in ir.nodes if "qtc_nearest_distance(" in n.sql]
    assert [n.op for n in calling] == ["values"] and "SELECT DISTINCT" in calling[0].sql
    readers = [n for n in ir.nodes if calling[0].name in n.inputs]
    # the require's exists (an aggregate over the rows its condition picks) and argmin's row
    assert {n.op for n in readers} == {"aggregate", "row"}


def test_the_primitive_check_can_fail():
    """A primitive called in place over a keyed relation's rows is found."""
    compiled = next(c for c in library() if c.id == "crafter.closest_step_in_range")
    ir = template_ir(compiled, 16, premise=True)
    values = next(n for n in ir.nodes if n.op == "values")
    reader = next(n for n in ir.nodes if values.name in n.inputs and n.op == "row")
    reader.sql += " WHERE qtc_nearest_distance(c.episode_id, t.step, c.p_material, 'seen') > 0"
    assert any("calls a primitive over the rows" in p for p in problems(ir))
