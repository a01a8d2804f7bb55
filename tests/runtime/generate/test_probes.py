"""The probes that spare a template's statement where it would return no rows (dsl/ir/emit.py,
emit_probe and probes_statement; runtime/generate/shards.py, answers)."""

from __future__ import annotations

import pytest

from qtc.runtime.generate.run import STANDARD_LIBRARY, _by_cap, _compile, _statement
from qtc.runtime.generate.shards import Request, Settings, answers, candidate_rows, prepare
from qtc.runtime.trace.store import open_store

# Guarded by `where exists(steps | where reason is not null)` on every side: a walkthrough gives no reasons.
REASON_TEMPLATES = ("jericho.after_keyword_action", "jericho.keyword_count_reason", "jericho.keyword_in_reason_step")


@pytest.fixture(scope="module")
def store(crafter_trace_dir, jericho_trace_dir):
    con = open_store(crafter_trace_dir, jericho_trace_dir, configure=lambda con: prepare(con, Settings(42, None)))
    yield con
    con.close()


@pytest.fixture(scope="module")
def probed():
    return [c for c in _compile([STANDARD_LIBRARY], "domain") if c.probe is not None and c.env in ("crafter", "jericho")]


def request(compiled, sql: str | None = None) -> Request:
    return Request(compiled.id, compiled.env, 16, sql or _statement(compiled, 16, "domain"), (), compiled.probe)


def test_a_probe_finds_no_rows_only_where_the_statement_has_none(store, probed):
    skipped = {r.template_id for r, rows in answers(store, [request(c) for c in probed]) if rows is None}
    assert set(REASON_TEMPLATES) <= skipped
    for compiled in probed:
        if compiled.id in skipped:
            rows = candidate_rows(store, request(compiled))
            assert rows.num_rows == 0, compiled.id
            # What run.py makes of a skipped template is what it makes of the statement's no rows.
            assert {cap: (t.num_rows, cut) for cap, (t, cut) in _by_cap(None, (16,)).items()} == \
                   {cap: (t.num_rows, cut) for cap, (t, cut) in _by_cap(rows, (16,)).items()}


def test_the_statement_of_a_template_its_probe_finds_without_rows_is_not_run(store, probed):
    compiled = next(c for c in probed if c.id == REASON_TEMPLATES[0])
    never = request(compiled, "SELECT error('run although its probe found no rows')")
    assert list(answers(store, [never])) == [(never, None)]


def test_a_probe_that_fails_leaves_the_statements_to_run(store, probed):
    compiled = next(c for c in probed if c.id == REASON_TEMPLATES[0])
    broken = Request(compiled.id, compiled.env, 16, _statement(compiled, 16, "domain"), (),
                     type(compiled.probe)(compiled.probe.ctes, "error('a broken probe')"))
    [(_, rows)] = answers(store, [broken])
    assert rows is not None and rows.num_rows == 0
