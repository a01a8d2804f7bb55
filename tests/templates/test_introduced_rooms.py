"""No answerable question and no option names a room whose title the game had not printed by the
question's horizon: zork1's walkthrough goes down the trap door into the dark Cellar at step 25 ("You have
moved into a dark place.") and prints its title only at step 26 ("Light lamp"). CONVENTIONS.md, Items;
issue 30, closing audit. Through the compiled SQL and the reference evaluator alike, on the session's
recorded zork1 episode."""

from __future__ import annotations

import pytest

from support.ground_truth import Store, differences, library, reference_candidates, sql_candidates
from qtc.dsl.reference.evaluator import read_tables
from qtc.runtime.trace.store import open_store

CELLAR = 72
TEMPLATES = ("jericho.room_first_visit_step", "jericho.choice_room_before", "jericho.room_before")


@pytest.fixture(scope="module")
def store(jericho_trace_dir):
    con = open_store(jericho_trace_dir)
    yield Store(con, read_tables(con))
    con.close()


def _rooms(candidate, compiled) -> list:
    types = compiled.checked.param_types
    rooms = [v for p, v in candidate.params.items() if types[p].name == "room"]
    if compiled.checked.answer_type == "location":
        rooms += [candidate.answer, *(candidate.distractors or [])]
    return rooms


@pytest.mark.parametrize("horizon", [25, 26])
def test_no_question_names_a_room_before_its_title_was_printed(store, horizon):
    named = []
    for compiled in (c for c in library() if c.id in TEMPLATES):
        sql = sql_candidates(store.con, compiled, horizon, cap=200)
        assert not differences(sql, reference_candidates(store, compiled, horizon), sampled=True), compiled.id
        named += [compiled.id for c in sql if not c.adversarial and {CELLAR, "Cellar"} & set(_rooms(c, compiled))]
    assert bool(named) == (horizon == 26)
