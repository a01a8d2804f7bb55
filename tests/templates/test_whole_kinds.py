"""A kind whose words say more than its events hold is never worded as a whole (issue 30, item 3):
Jericho's first sightings are of things named whole, while "you saw something for the first time" is
true from step 1. No false premise names that kind by itself, and no count of it without its subject is
asked (CONVENTIONS.md, Events: vocab.whole_event), through the compiled SQL and the reference alike."""

from __future__ import annotations

from support.ground_truth import differences, library, reference_candidates, sql_candidates, store_of
from support.strategies import jericho_episode

# Nothing named whole is seen (no look in a room with things): no first_seen event, which a reader of
# "you saw something for the first time" would still find at step 1 (a new room).
UNSEEN = [(("move", "north", 20), None, 0), (("idle", "wait"), None, 5), (("move", "south", 10), None, 0)]
# The egg and the lamp are first seen at steps 2 and 6, between getting the key (1) and a score change (7).
SEEN = [(("take", "brass key"), None, 0), (("move", "north", 20), None, 0), (("idle", "look"), None, 0),
        (("move", "south", 10), None, 0), (("move", "east", 21), None, 0), (("idle", "look"), None, 0),
        (("idle", "wait"), None, 5)]


def _candidates(template_id: str, steps: list) -> list:
    compiled, store = next(c for c in library() if c.id == template_id), store_of([jericho_episode(steps, room=10)])
    sql = sql_candidates(store.con, compiled, None)
    assert not differences(sql, reference_candidates(store, compiled, None))
    return sql


def test_no_false_premise_names_a_kind_broader_than_its_events():
    # Death never happened either: a false premise it may be (not for its k-th time: counted once).
    for template_id, param, others in (("events.event_kth_plain", "kind", set()),
                                       ("events.events_before_plain", "anchor", {"death"})):
        false = {c.params[param] for c in _candidates(template_id, UNSEEN) if c.adversarial}
        assert false == others, template_id


def test_no_count_of_a_kind_broader_than_its_events():
    asked = {c.params["kind"] for c in _candidates("events.kind_count_between", SEEN) if not c.adversarial}
    assert "first_seen" not in asked and "room_entered" in asked
