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

# The kinds of each game, a closed vocabulary (`kind == "achievment"` is refused).
KINDS: dict[str, tuple[str, ...]] = {
    "jericho": ("item_gained", "item_lost", "room_entered", "room_left", "score_changed", "death", "first_seen",
                "score_changed_by", "action"),
    "crafter": ("achievement", "item_gained", "item_lost", "damage", "sleep", "wake", "stat_low", "terrain_first",
                "death", "first_seen", "action"),
}
KINDS["textworld"] = KINDS["jericho"]  # a text game of the same kinds (runtime/trace/events.py)
KINDS["any"] = tuple(PHRASES)
# The vocabularies (vocab kinds) each kind's plausible subjects come from, per game; damage's are
# DAMAGE_CAUSES. Crafter's items lost are those a rule uses up: a tool never leaves (a false premise
# "the stone pickaxe left your inventory" is rejected at once). Jericho's first sightings have none: a
# thing present but never named as listed may have been seen under another name (CONVENTIONS.md,
# Sightings), and the store does not tell them apart here.
SUBJECT_VOCABULARY: dict[str, dict[str, tuple[str, ...]]] = {
    "jericho": {"item_gained": ("item",), "item_lost": ("item",), "room_entered": ("room",), "room_left": ("room",)},
    "crafter": {"achievement": ("achievement",), "item_gained": ("item",), "item_lost": ("consumable",),
                "stat_low": ("stat",), "terrain_first": ("terrain",), "first_seen": ("material", "creature"),
                "action": ("action",)},
}
SUBJECT_VOCABULARY["textworld"] = SUBJECT_VOCABULARY["jericho"]
# The kinds whose subject is a room's display name: under a horizon it is the name the rooms entered by
# then give it (dsl/room_names.py).
ROOM_KINDS: tuple[str, ...] = tuple(k for k, v in SUBJECT_VOCABULARY["jericho"].items() if v == ("room",))

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
