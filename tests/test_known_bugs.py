"""Bugs the property tests found in code these tests do not own, each shown on a small trace as a
strict xfail: when the owner fixes one, its test passes, strict xfail fails, and the marker (and the
entry in ground_truth.KNOWN_BUG_FUNCTIONS) is removed."""

from __future__ import annotations

import pytest
from ground_truth import KNOWN_BUG_FUNCTIONS, differences, library, reference_candidates, sql_candidates, store_of
from strategies import jericho_episode


@pytest.mark.xfail(strict=True, reason=KNOWN_BUG_FUNCTIONS["first_sentence"])
@pytest.mark.parametrize("reason, first", [
    ("Use the 2.5 key. Then go north.", "Use the 2.5 key."),
    ("Wait... then look. Go.", "Wait... then look."),
    ("look around\n", "look around"),
])
def test_first_sentence(reason, first):
    compiled = next(c for c in library() if c.id == "jericho.reason_at")
    store = store_of([jericho_episode([(("idle", "look"), reason, 0)])])
    (sql,) = sql_candidates(store.con, compiled, None)
    assert sql.answer == first
    assert not differences([sql], reference_candidates(store, compiled, None))
