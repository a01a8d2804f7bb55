"""No question counts events that happen at most once by construction (issue 30, item 11): "how many
steps at which you first saw the egg came before ..." is 0 or 1 whatever the episode. The rule is the
compiler's (dsl/events.py, degenerate_kinds), not each template's; on a hand-made episode, through the
compiled SQL and the reference evaluator alike."""

from __future__ import annotations

import pytest

from support.ground_truth import differences, library, reference_candidates, sql_candidates, store_of
from support.strategies import jericho_episode

from qtc.dsl.events import ONCE_PER_SUBJECT, degenerate_kinds

# The egg and the lamp are first seen at steps 2 and 6 (first_seen events); the key is got at step 4.
STEPS = [(("move", "north", 20), None, 0), (("idle", "look"), None, 0), (("move", "south", 10), None, 0),
         (("take", "brass key"), None, 0), (("move", "east", 21), None, 0), (("idle", "look"), None, 0),
         (("idle", "wait"), None, 5)]
TEMPLATES = ("events.events_before_first", "events.events_before_plain", "events.count_between", "events.event_kth")


@pytest.fixture(scope="module")
def store():
    return store_of([jericho_episode(STEPS, room=10)])


@pytest.mark.parametrize("template_id", TEMPLATES)
def test_no_count_of_events_that_happen_once_by_construction(store, template_id):
    compiled = next(c for c in library() if c.id == template_id)
    degenerate = degenerate_kinds(compiled.checked.template)
    assert degenerate.get("kind", frozenset()) >= ONCE_PER_SUBJECT - {"death"}
    sql = sql_candidates(store.con, compiled, None)
    assert not differences(sql, reference_candidates(store, compiled, None))
    assert sql and not [c for c in sql if any(c.params.get(p) in kinds for p, kinds in degenerate.items())]
