"""The tree: walking an expression, the expressions of a template with their clauses, and the one
dispatch rule of every pass over them."""

import pytest

from qtc.dsl import ast as A
from qtc.dsl.check import check_template
from qtc.dsl.parse import parse_source
from qtc.dsl.render import make_environment
from qtc.dsl.visit import Visitor
from support.handmade import template

SOURCE = template("jericho", """
  param t: steps.step where $t > 1
  param k: words(steps.reason)
  let hits = steps | where mentions(reason, $k) and step < $t
  require count(hits) > 0
  question "{{ t }} {{ k }}"
  answer first(hits).step
  accept [1, 2]
  evidence hits.step
  adversarial k: words(vocab.item) - words(steps.reason)""", "step")


def parsed() -> A.Template:
    (t,), errors = parse_source("t.qtpl", SOURCE)
    assert not errors
    return t


def test_expressions_lists_every_clause_in_order():
    clauses = [clause for clause, _ in parsed().expressions()]
    assert clauses == ["param t", "param t", "param k", "let hits", "require", "answer", "accept", "evidence",
                       "adversarial k"]


def test_walk_reaches_every_call_of_a_clause():
    calls = {clause: sorted(n.function for n in A.walk(root) if isinstance(n, A.Call))
             for clause, root in parsed().expressions()}
    assert calls["let hits"] == ["mentions"]
    assert calls["require"] == ["count"]
    assert calls["param k"] == ["words"]


def test_check_template_returns_the_checked_template_or_the_diagnostics():
    checked, diagnostics = check_template(parsed(), make_environment())
    assert checked is not None and diagnostics == []
    (bad,), _ = parse_source("t.qtpl", SOURCE.replace("count(hits)", "count(hitz)"))
    checked, diagnostics = check_template(bad, make_environment())
    assert checked is None and [d.message for d in diagnostics] == ["unknown name 'hitz': not a let or a table"]


def test_a_visitor_calls_the_method_named_after_the_node_class():
    class Names(Visitor):
        def visit_Literal(self, e, prefix):
            return f"{prefix}{e.value!r}"

    span = A.Span(1, 1, 1, 2)
    assert Names().visit(A.Literal(span, 3), "literal ") == "literal 3"
    with pytest.raises(NotImplementedError, match="Names cannot visit a Range node: it has no method visit_Range"):
        Names().visit(A.Range(span, A.Literal(span, 1), A.Literal(span, 2)), "")
