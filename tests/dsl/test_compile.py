"""Compiled SQL on hand-written traces (tests/support/handmade.py), for what is not a template's candidate rows:
the seeded candidate cap, and SQL that never holds a trace's strings. The rows themselves, worked out by
hand, are the fixture pairs of tests/dsl/fixtures/candidates/ (run by test_fixtures.py)."""

import pytest

from support.handmade import compile_source, make_db, template

from qtc.dsl.compile import statement


@pytest.fixture(scope="module")
def con():
    return make_db()


def test_candidate_cap_is_seeded_and_deterministic(con):
    source = template("crafter", """
  param t: steps.step
  question "{{ t }}"
  answer $t
  evidence $t""", "step")
    (compiled,) = compile_source(source)
    sampled = statement(compiled, cap=3)

    def run():
        return [row[1] for row in con.execute(sampled).fetchall()]  # episode_id, p_t, ...
    con.execute("SET VARIABLE qtc_max_candidates = 3")
    try:
        con.execute("SET VARIABLE qtc_seed = 1")
        first, again = run(), run()
        con.execute("SET VARIABLE qtc_seed = 2")
        other = run()
    finally:
        con.execute("RESET VARIABLE qtc_max_candidates")
        con.execute("RESET VARIABLE qtc_seed")
    assert len(first) == 3 and first == again and set(first) <= set(range(1, 9))
    assert len(other) == 3


def test_trace_strings_are_never_in_the_sql():
    (compiled,) = compile_source(template("jericho", """
  param item: item_events.item
  question "{{ item }}"
  answer first(item_events | where item == $item).step
  evidence 1""", "step"))
    assert "leaflet" not in compiled.sql and "c.\"p_item\"" in compiled.sql


def test_a_premise_stated_as_a_condition_is_checked_per_binding(con):
    """c1's actions: move_left at 1, 2, 4, 5, 6, do at 3 and 7, noop at 8 (8 steps). The question presumes
    a step `offset` after the first time of the action: it exists for (move_left, 5) and (do, 5) only."""
    (compiled,) = compile_source(template("crafter", """
  param action: steps.action
  param offset: [1]
  let anchor = first(steps | where action == $action).step
  question "{{ action }} {{ offset }}"
  answer steps[anchor + $offset].action
  evidence anchor
  adversarial offset: [5, 10] premise exists(steps | where step == anchor + $offset)""", "action"))
    rows = con.execute(statement(compiled, premise=True)).fetchall()
    columns = [d[0] for d in con.description]
    false_premises = {(r["p_action"], r["p_offset"]): r["qtc_premise_false"]
                      for r in (dict(zip(columns, row)) for row in rows) if r["adversarial"]}
    assert false_premises == {("move_left", 5): False, ("move_left", 10): True, ("do", 5): False,
                              ("do", 10): True, ("noop", 5): True, ("noop", 10): True}


@pytest.mark.parametrize("domain, message", [
    ("steps.step", "cannot be checked"),  # any value outside [1, 2] would pass, whatever the trace
    ("[50]", "give a list with the premise"),  # a list of values to try needs the premise they are tried on
])
def test_a_premise_on_a_fixed_list_must_be_stated(domain, message):
    source = template("crafter", f"""
  param offset: [1, 2]
  question "{{{{ offset }}}}"
  answer steps[$offset].action
  evidence $offset
  adversarial offset: {domain}""", "action")
    with pytest.raises(AssertionError, match=message):
        compile_source(source)
