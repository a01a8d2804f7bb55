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
