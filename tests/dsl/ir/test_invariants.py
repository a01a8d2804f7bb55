"""IR invariants on every template of the library, for each sampling plan: no product of parameter
domains before the sample, every node keyed by the parameters it reads, no correlated subquery (in the
text, and in DuckDB's plan of the statement); and the backend choice that generate and --explain use."""

from __future__ import annotations

import pytest
from support.ground_truth import library

from qtc.dsl.ir.backend import choose, ir_statement, template_ir
from qtc.dsl.ir.explain import explain
from qtc.dsl.ir.verify import correlated, problems
from qtc.errors import UserError


@pytest.mark.parametrize("cap", (16, None, 2_000_000))
def test_every_template_lowers_without_products_correlation_or_missing_keys(trace_db, cap):
    for compiled in library():
        ir = template_ir(compiled, cap, premise=True)
        assert problems(ir) == [], compiled.id
        assert correlated(trace_db, ir_statement(compiled, cap, premise=True)) == [], compiled.id


def test_the_legacy_statement_is_correlated(trace_db):
    """The check above can fail: the legacy emitter's statements are correlated."""
    assert correlated(trace_db, library()[0].sql)


def test_the_backend_is_chosen_per_template_and_can_be_forced(monkeypatch):
    compiled = next(c for c in library() if c.id == "crafter.keyword_count_in_range")
    assert choose(compiled).backend == "ir"
    monkeypatch.setenv("QTC_BACKEND", "legacy")
    assert choose(compiled).backend == "legacy"
    assert explain(compiled).startswith("-- backend: legacy")
    monkeypatch.setenv("QTC_BACKEND", "fast")
    with pytest.raises(UserError, match="QTC_BACKEND"):
        choose(compiled)


def test_explain_shows_the_components_and_the_window_frame():
    compiled = next(c for c in library() if c.id == "crafter.keyword_count_in_range")
    text = explain(compiled)
    assert "components (crossed only inside the sample): {kw} {L, R}" in text
    assert "RANGE BETWEEN 19 FOLLOWING AND 59 FOLLOWING" in text and "min_by(" in text
