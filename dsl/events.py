"""The events of an episode (CONVENTIONS.md, Events): the closed vocabulary of event kinds, each
game's kinds, and how a question words an event.

The store derives the table `events(step, kind, subject)` from these kinds (runtime/trace/events.py),
and `event_subjects(kind, subject)`, the plausible subjects of each kind that false premises are drawn
from. A kind is a value of the language type `event`, so a template that writes a kind that is not one
(`kind == "achievment"`) is refused by the checker, as a misspelt Crafter material is.
"""

from __future__ import annotations

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
}

# The kinds of each game, a closed vocabulary (`kind == "achievment"` is refused).
KINDS: dict[str, tuple[str, ...]] = {
    "jericho": ("item_gained", "item_lost", "room_entered", "room_left", "score_changed", "death"),
    "crafter": ("achievement", "item_gained", "item_lost", "damage", "sleep", "wake", "stat_low", "terrain_first",
                "death"),
}
KINDS["any"] = tuple(PHRASES)
# The vocabulary (vocab kind) each kind's plausible subjects come from, per game; damage's are DAMAGE_CAUSES.
SUBJECT_VOCABULARY: dict[str, dict[str, str]] = {
    "jericho": {"item_gained": "item", "item_lost": "item", "room_entered": "room", "room_left": "room"},
    "crafter": {"achievement": "achievement", "item_gained": "item", "item_lost": "item", "stat_low": "stat",
                "terrain_first": "terrain"},
}

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
    """How a question words one event: its subject shown as names are (dsl/render.py, name_text: a
    Crafter identifier as words; a Jericho name, which has no underscore, as printed).

    >>> phrase("achievement", "collect_wood"), phrase("room_entered", "West of House")
    ('you were credited with the achievement collect wood', 'you entered West of House')
    >>> phrase("damage", "zombie"), phrase("sleep", None)
    ('you took damage from a zombie', 'you fell asleep')
    """
    text = PHRASES[kind]
    if "{}" not in text:
        return text
    if kind == "damage":
        return text.format({**DAMAGE_CAUSES, **UNKNOWN_CAUSE}.get(subject, subject))
    return text.format(subject.replace("_", " "))
