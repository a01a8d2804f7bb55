"""The events of an episode (CONVENTIONS.md, Events): the closed vocabulary of event kinds, each
game's kinds, and how a question words an event.

The store derives the table `events(step, kind, subject)` from these kinds (runtime/trace/events.py),
and `event_subjects(step, kind, subject, met)`, the plausible subjects of each kind and the step the
episode met each, that false premises are drawn from. A kind is a value of the language type `event`,
so a template that writes a kind that is not one (`kind == "achievment"`) is refused by the checker, as
a misspelt Crafter material is.
"""

from __future__ import annotations

from functools import cache

from . import ast as A
from . import schema

# Each kind with the question text of one such event ("{}" is its subject); a kind without a subject
# (falling asleep, a score change) has null as its subject. One wording per kind, in both games.
PHRASES: dict[str, str] = {
    "item_gained": "you got the {}",
    "item_lost": "the {} left your inventory",
    "room_entered": "you entered {}",
    "room_left": "you left {}",
    "score_changed": "your score changed",
    "achievement": "you were credited with the achievement {}",
    "damage": "you took damage from {}",
    "sleep": "you fell asleep",
    "wake": "you woke up",
    "stat_low": "your {} fell below 3",
    "terrain_first": "you first stood on {}",
    "death": "you died",
    "first_seen": "you first saw the {}",
    "action": "you chose the action {}",
    "score_changed_by": "your score went {}",
}

# Each kind with a subject, worded for any subject (`{{ kind | event(none) }}`): "how many steps at which
# you got an item".
ANY_SUBJECT_PHRASES: dict[str, str] = {
    "item_gained": "you got an item",
    "item_lost": "an item left your inventory",
    "room_entered": "you entered a room",
    "room_left": "you left a room",
    "achievement": "you were credited with an achievement",
    "damage": "you took damage",
    "stat_low": "one of your stats fell below 3",
    "terrain_first": "you stood on a terrain for the first time",
    "first_seen": "you saw something for the first time",
    "action": "you chose an action",
    "score_changed_by": "your score changed",
}
assert set(ANY_SUBJECT_PHRASES) == {kind for kind, text in PHRASES.items() if "{}" in text}

# Each game's kinds, and the kinds of templates of every game (schema.Environment.events).
KINDS: dict[str, tuple[str, ...]] = {
    **{name: env.events.kinds for name, env in schema.ENVIRONMENTS.items()}, "any": tuple(PHRASES)}
# Per game, the kinds a question may word as a whole (vocab.whole_event).
WHOLE_KINDS: dict[str, tuple[str, ...]] = {
    name: tuple(kind for kind in env.events.kinds if kind not in env.events.broader_than_recorded)
    for name, env in schema.ENVIRONMENTS.items()}
# Per game, the vocabularies each kind's plausible subjects come from; damage's are DAMAGE_CAUSES.
SUBJECT_VOCABULARY: dict[str, dict[str, tuple[str, ...]]] = {
    name: env.events.subject_vocabulary for name, env in schema.ENVIRONMENTS.items()}
# The kinds whose subject is a room's display name: under a horizon it is the name the rooms entered by
# then give it (dsl/room_names.py).
ROOM_KINDS: tuple[str, ...] = tuple(k for k, v in schema.TEXT_GAME_EVENTS.subject_vocabulary.items() if v == ("room",))

# Crafter's stats are counted from 0 to 9: a stat event is the step it first goes below this level after
# being at it or above (the player starts with every stat at 9).
STAT_LOW_LEVEL = 3

# What the recorder attributes Crafter's damage to (runtime/record/crafter.py, DamageTracker), as a
# question words it: the creatures, and the player's own update. "unknown" is recorded too, but is never
# a false premise (nothing plausible is "unknown").
DAMAGE_CAUSES = {"zombie": "a zombie", "skeleton": "a skeleton's arrow", "lava": "lava", "starvation": "starvation",
                 "thirst": "thirst", "exhaustion": "exhaustion"}
UNKNOWN_CAUSE = {"unknown": "an unknown cause"}


def phrase(kind: str, subject: str | None) -> str:
    """How a question words one event: its subject shown as names are (CONVENTIONS.md, Names in
    questions): a Crafter identifier as words (dsl/render.py, name_text), anything else (a Jericho name,
    underscores and all) as the game printed it; a score change by its amount. Without a subject, a
    kind that has one is worded for any of its subjects.

    >>> phrase("achievement", "collect_wood"), phrase("room_entered", "West of House")
    ('you were credited with the achievement collect wood', 'you entered West of House')
    >>> phrase("damage", "zombie"), phrase("sleep", None), phrase("item_gained", "red_herring")
    ('you took damage from a zombie', 'you fell asleep', 'you got the red_herring')
    >>> phrase("score_changed_by", "10"), phrase("score_changed_by", "-5"), phrase("action", "place_table")
    ('your score went up by 10', 'your score went down by 5', 'you chose the action place table')
    >>> phrase("item_gained", None)
    'you got an item'
    """
    from .render import name_text  # render imports this module for its `event` filter
    text = PHRASES[kind]
    if "{}" not in text:
        return text
    if subject is None:
        return ANY_SUBJECT_PHRASES[kind]
    if kind == "damage":
        return text.format({**DAMAGE_CAUSES, **UNKNOWN_CAUSE}.get(subject, subject))
    if kind == "score_changed_by":
        amount = int(subject)
        return text.format(f"{'up' if amount > 0 else 'down'} by {abs(amount)}")
    return text.format(name_text(subject) if subject in _crafter_identifiers() else subject)


@cache
def _crafter_identifiers() -> frozenset[str]:
    """Every identifier of Crafter's own data an event's subject can be (items, stats, achievements,
    materials, creatures, actions)."""
    from . import crafter_data  # imports the crafter package: only once a question is worded
    return frozenset(value for values in crafter_data.vocabulary().values() for value in values)


# Kinds that happen at most once per subject in an episode, by their definition: the first stand on a
# terrain, the first sight of a thing, and death (once, without a subject). A count of one subject's
# events of such a kind (or of a kind without a subject) is 0 or 1 by construction, and its k-th time
# is its only one: not asked.
ONCE_PER_SUBJECT = frozenset({"terrain_first", "first_seen", "death"})
SUBJECTLESS = frozenset(kind for kind, text in PHRASES.items() if "{}" not in text)
COUNTING = ("count", "count_distinct", "nth")  # the functions that count a relation's rows, or number them


def degenerate_kinds(template) -> dict[str, frozenset[str]]:
    """For each parameter that binds the kind of events a template's answer counts or numbers
    (`count`, `count_distinct` or `nth` of `events | where kind == $p ...`, through the lets it reads),
    the kinds that make that count 0 or 1, or the k-th the only one, by construction: those of
    ONCE_PER_SUBJECT when the events are one subject's (`subject == ...`), else the subjectless ones
    among them (death). The compiler and the reference evaluator ask no question, true or false, with
    such a binding (CONVENTIONS.md, Events)."""
    lets = {let.name: let.expr for let in template.lets}

    def filters(e) -> tuple[bool, list] | None:
        """(whether the relation is the events table, the conjuncts of every filter on it)."""
        if isinstance(e, A.Field):
            return filters(e.base)
        if isinstance(e, A.Name) and e.ref and e.ref[0] == "let":
            return filters(lets[e.name])
        if isinstance(e, A.Name) and e.ref and e.ref[0] == "table":
            return (e.ref[1].name == "events", [])
        if isinstance(e, A.Where):
            inner = filters(e.base)
            return None if inner is None else (inner[0], inner[1] + A.conjuncts(e.condition))
        return None

    def column(e, name: str) -> bool:
        return isinstance(e, A.Name) and e.name == name and bool(e.ref) and e.ref[0] == "column"

    def answered(e):
        """The answer's nodes, through the lets it reads."""
        for node in A.walk(e):
            yield node
            if isinstance(node, A.Name) and node.ref and node.ref[0] == "let":
                yield from answered(lets[node.name])

    found: dict[str, frozenset[str]] = {}
    for node in answered(template.answer):
        if not (isinstance(node, A.Call) and node.function in COUNTING and node.args):
            continue
        counted = filters(node.args[0])
        if not counted or not counted[0]:
            continue
        tests = [c for c in counted[1] if isinstance(c, A.Binary) and c.op == "=="]
        by_subject = any(column(c.left, "subject") for c in tests)
        for test in tests:
            if column(test.left, "kind") and isinstance(test.right, A.ParamRef):
                kinds = ONCE_PER_SUBJECT if by_subject else ONCE_PER_SUBJECT & SUBJECTLESS
                found[test.right.name] = found.get(test.right.name, frozenset()) | kinds
    return found
