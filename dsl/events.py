"""The events of an episode (CONVENTIONS.md, Events): the closed vocabulary of event kinds, each
game's kinds, and how a question words an event.

The store derives the table `events(step, kind, subject)` from these kinds (runtime/trace/events.py),
and `event_subjects(kind, subject)`, the plausible subjects of each kind that false premises are drawn
from. A kind is a value of the language type `event`, so a template that writes a kind that is not one
(`kind == "achievment"`) is refused by the checker, as a misspelt Crafter material is.
"""

from __future__ import annotations

# Each kind with the question text of one such event ("{}" is its subject), per game. A kind without a
# subject (falling asleep, a score change) has null as its subject.
PHRASES: dict[str, dict[str, str]] = {
    "jericho": {
        "item_gained": "you got the {}",
        "item_lost": "the {} left your inventory",
        "room_entered": "you entered {}",
        "room_left": "you left {}",
        "score_changed": "your score changed",
        "death": "you died",
    },
    "crafter": {
        "achievement": "you were credited with the achievement {}",
        "item_gained": "your {} count went up",
        "item_lost": "your {} count went down",
        "damage": "you took damage from {}",
        "sleep": "you fell asleep",
        "wake": "you woke up",
        "stat_low": "your {} fell below 3",
        "terrain_first": "you stood on {} for the first time",
        "death": "you died",
    },
}

KINDS: dict[str, tuple[str, ...]] = {env: tuple(phrases) for env, phrases in PHRASES.items()}
KINDS["any"] = tuple(dict.fromkeys(kind for kinds in PHRASES.values() for kind in kinds))

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


def phrase(kind: str, subject: str | None, env: str) -> str:
    """How a question words one event of `env`: a Crafter identifier as words, a Jericho name as printed.

    >>> phrase("achievement", "collect_wood", "crafter"), phrase("room_entered", "West of House", "jericho")
    ('you were credited with the achievement collect wood', 'you entered West of House')
    >>> phrase("damage", "zombie", "crafter"), phrase("sleep", None, "crafter")
    ('you took damage from a zombie', 'you fell asleep')
    """
    text = PHRASES[env][kind]
    if "{}" not in text:
        return text
    if kind == "damage":
        return text.format({**DAMAGE_CAUSES, **UNKNOWN_CAUSE}.get(subject, subject))
    return text.format(subject.replace("_", " ") if env == "crafter" else subject)
