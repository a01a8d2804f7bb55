"""No answerable question and no option names a thing whose name the game had not printed, nor the
player typed, by the question's horizon (CONVENTIONS.md, Items; issue 30, item 9: zork1's canary got
inside the egg, 905's ID card inside the wallet), on a hand-made episode, through the compiled SQL and
the reference evaluator alike."""

from __future__ import annotations

import pytest

from support.ground_truth import differences, library, reference_candidates, sql_candidates, store_of
from support.strategies import jericho_episode

# Start in West of House (10) carrying nothing.
#  step  action      printed                          typed   the rope
#   1    take key    "... You take key."              key     got inside the key's take: never named
#   2    wait        "... You wait."                  -       carried, unnamed
#   3    drop rope   "... You drop rope."             rope    named from here on
#   4    take rope   "... You take rope."             rope
STEPS = [(("take", "brass key", "rope"), None, 0), (("idle", "wait"), None, 0), (("drop", "rope"), None, 0),
         (("take", "rope"), None, 0)]


def _names(candidate) -> list:
    values = [*candidate.params.values(), *candidate.lets.values(), candidate.answer, *(candidate.distractors or [])]
    return [name for value in values for name in (value if isinstance(value, list) else [value])]


@pytest.fixture(scope="module")
def store():
    return store_of([jericho_episode(STEPS, room=10)])


# Templates that name items in a parameter, a let, the answer (a name, a list) or the options; the rule
# is the compiler's, one for every template (dsl/ir/lower.py, _introduced).
TEMPLATES = ("jericho.has_item_at", "jericho.inventory_after", "jericho.item_gain_step", "jericho.after_gain_action",
             "jericho.choice_first_gain_after", "events.event_kth")


@pytest.mark.parametrize("horizon", [2, None])
def test_no_question_names_a_thing_before_its_name_was_met(store, horizon):
    named_rope = []
    for compiled in (c for c in library() if c.id in TEMPLATES):
        sql = sql_candidates(store.con, compiled, horizon)
        assert not differences(sql, reference_candidates(store, compiled, horizon)), compiled.id
        named_rope += [compiled.id for c in sql if not c.adversarial and "rope" in _names(c)]
    # Before step 3 nothing names the rope; once "drop rope" named it, questions may (what was got at step 1).
    assert bool(named_rope) == (horizon is None)
