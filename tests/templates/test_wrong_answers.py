"""Wrong answers and leaks found by checking every question of the library against independent
re-implementations on recorded episodes (issue 30), each shown on a small episode whose answers are worked
out below, through the compiled SQL and against the reference evaluator."""

from __future__ import annotations

from support.ground_truth import differences, library, reference_candidates, sql_candidates, store_of
from support.strategies import jericho_episode


def candidates(template_id: str, episodes: list, horizon: int | None = None) -> list:
    """The compiled SQL's candidates, checked to be the reference evaluator's."""
    compiled, store = next(c for c in library() if c.id == template_id), store_of(episodes)
    sql = sql_candidates(store.con, compiled, horizon)
    assert not differences(sql, reference_candidates(store, compiled, horizon))
    return sql


# Step 2 gets the egg with the lamp inside it ("get egg": a container and its contents), so "the first
# thing you got after step 1" has two right options; after step 2 it is the sword alone.
#  step  action       got
#   1    look         -
#   2    take egg     egg, lamp
#   3    take sword   sword
#   4    take rope    rope
#   5    take leaflet leaflet
TWO_AT_ONCE = [(("idle", "look"), None, 0), (("take", "egg", "lamp"), None, 0), (("take", "sword"), None, 0),
               (("take", "rope"), None, 0), (("take", "leaflet"), None, 0)]


def test_a_multiple_choice_is_not_asked_where_two_things_were_got_at_once():
    asked = {c.params["t"]: c for c in candidates("jericho.choice_first_gain_after", [jericho_episode(TWO_AT_ONCE)])
             if not c.adversarial}
    assert 1 not in asked
    assert asked[2].answer == "sword" and "sword" not in asked[2].distractors
