"""The conventions of CONVENTIONS.md that code needs: ordinals, tie rules, keyword words, commands.

The SQL compiler and the reference evaluator both take these definitions from here, so the two can
only differ in how they compute, never in what they mean. The word rule is given twice from the same
constants, as Python (`words`, `is_keyword`) and as SQL text (`words_sql`, `keyword_sql`).
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

from .sql import sql_string

ORDINALS = {"first": 1, "second": 2, "third": 3, "last": -1, "second_last": -2}
# How a question writes an ordinal: in words up to the tenth, so one template never mixes "the third"
# with "the 4th" (dsl/render.py writes larger ones as "11th").
ORDINAL_WORDS = {**{value: word.replace("_", "-") for word, value in ORDINALS.items()},
                 **dict(enumerate(("fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"), start=4))}

TIE_RULES = ("first", "last", "alpha", "unique")

# Multiple choice (CONVENTIONS.md, Multiple choice): the answer types whose answers are single values an
# option can hold, how many options at most (lettered A to Z), and the text of the "none of these" option.
CHOICE_ANSWER_TYPES = ("step", "integer", "string", "action", "location", "item", "terrain", "achievement",
                       "direction")
MAX_CHOICES = 26
NONE_OF_THESE = "none of these"

# A word is a maximal run of ASCII letters and digits of the text as written, lowercased after it is
# found: lowercasing first would turn two other characters into ASCII letters and join them to a word
# (U+212A KELVIN SIGN into 'k', U+0130 LATIN CAPITAL LETTER I WITH DOT ABOVE into 'i').
WORD_REGEX = "[A-Za-z0-9]+"
_WORDS = re.compile(WORD_REGEX)
DIGITS_REGEX = "[0-9]+"
KEYWORD_MIN_LENGTH = 4
STOPWORDS = frozenset("""
about above after again against also because been before being below between both cannot could does
doing down during each from further have having here into itself just more most once only other over
same should some such than that their them then there these they this those through under until very
what when where which while will with would your yours yourself like want need make sure going next
""".split())


@functools.lru_cache(maxsize=65536)
def words(text: str | None) -> tuple[str, ...]:
    """The words of a text, in order, lowercased (CONVENTIONS.md, Keywords).

    >>> words("Take the brass-lantern, then GO north 2x!")
    ('take', 'the', 'brass', 'lantern', 'then', 'go', 'north', '2x')
    >>> words("Caf\\u00e9 \\u212aeyboard \\u0130stanbul")  # 'é', the Kelvin sign and 'İ' are not ASCII letters
    ('caf', 'eyboard', 'stanbul')
    >>> words(None)
    ()
    """
    # Words are ASCII letters and digits, so the words joined by spaces lowercase in one call and split back
    # into the same words.
    return tuple(" ".join(_WORDS.findall(text)).lower().split()) if text else ()


def is_keyword(word: str) -> bool:
    """Whether a word (of `words`) is a keyword: at least 4 characters, not a stop word, not a number.

    >>> [w for w in ("lamp", "the", "before", "2024", "x2y4") if is_keyword(w)]
    ['lamp', 'x2y4']
    """
    return len(word) >= KEYWORD_MIN_LENGTH and word not in STOPWORDS and not re.fullmatch(DIGITS_REGEX, word)


def words_sql(text_sql: str) -> str:
    """`words` in DuckDB SQL: the list of the words of a text (null for a null text)."""
    return f"list_transform(regexp_extract_all({text_sql}, {sql_string(WORD_REGEX)}), lambda w: lower(w))"


def keyword_sql(word_sql: str) -> str:
    """`is_keyword` in DuckDB SQL, as a condition on a word."""
    stop = "[" + ", ".join(sql_string(w) for w in sorted(STOPWORDS)) + "]"
    return (f"length({word_sql}) >= {KEYWORD_MIN_LENGTH} AND NOT list_contains({stop}, {word_sql}) "
            f"AND NOT regexp_full_match({word_sql}, {sql_string(DIGITS_REGEX)})")


# Jericho's parser abbreviations of a command's first word (CONVENTIONS.md, Commands); the compass ones
# are also directions a command names (DIRECTION_WORDS).
DIRECTION_ABBREVIATIONS = {"n": "north", "s": "south", "e": "east", "w": "west", "ne": "northeast",
                           "nw": "northwest", "se": "southeast", "sw": "southwest", "u": "up", "d": "down"}
COMMAND_ABBREVIATIONS = {**DIRECTION_ABBREVIATIONS,
                         "x": "examine", "l": "look", "i": "inventory", "z": "wait", "g": "again"}
COMMAND_ARTICLES = frozenset({"the", "a", "an"})


# Cached, as object_words: the store reads each step's command three times (steps.command,
# named_item_steps, introduced_steps), and an episode repeats its commands ("north", "take lamp").
@functools.lru_cache(maxsize=65536)
def command(text: str) -> str:
    """A Jericho command as the game's parser reads it (CONVENTIONS.md, Commands): lowercased words
    (split at whitespace, underscores and hyphens), articles dropped, the first word unabbreviated, and
    'go <direction>' as the direction. Two commands are one action exactly when this is equal.

    >>> command("x the lamp"), command("Go n"), command("Kill thief with  nasty knife"), command("n")
    ('examine lamp', 'north', 'kill thief with nasty knife', 'north')
    """
    words = [w for w in text.lower().replace("_", " ").replace("-", " ").split() if w not in COMMAND_ARTICLES]
    if words:
        words[0] = COMMAND_ABBREVIATIONS.get(words[0], words[0])
    if len(words) == 2 and words[0] == "go":
        words = [COMMAND_ABBREVIATIONS.get(words[1], words[1])]
    return " ".join(words)


# Words a command puts around the objects it names, which name no object (CONVENTIONS.md, False premises).
COMMAND_PARTICLES = frozenset("in on at to of with from into onto under over up down out off and all it them "
                              "everything except but".split())


@functools.lru_cache(maxsize=65536)
def object_words(text: str) -> frozenset[str]:
    """The words a Jericho command names objects by: its words after the verb, less particles.

    >>> sorted(object_words("get bag")), sorted(object_words("Put the pouch in toolkit"))
    (['bag'], ['pouch', 'toolkit'])
    """
    return frozenset(w for w in words(command(text))[1:] if w not in COMMAND_PARTICLES)


def named_item_steps(items: list[str], steps: list[tuple[int, str, list[str]]]) -> dict[str, int]:
    """The first step (of (step, command, items carried after it), in step order) at which a thing of the
    game could have been met by name (CONVENTIONS.md, False premises): a command names it by one of its
    words ("get bag" and "brown bag"), or its name lies within the name of a thing carried ("key" within
    "brass key"). Such a thing is never offered as a false premise from that step on.

    >>> named_item_steps(["bag", "brown bag", "key", "lamp"], [(1, "get bag", []), (2, "look", ["brass key"])])
    {'bag': 1, 'brown bag': 1, 'key': 2}
    """
    names = {item: frozenset(words(item)) for item in items}
    order = {item: i for i, item in enumerate(names)}
    by_word = word_index(names)
    named: dict[str, int] = {}
    for step, text, carried in steps:
        by_command = object_words(text)
        held = [frozenset(words(thing)) for thing in carried]
        # Only an item with a word of the command or of a thing carried can be named by either.
        candidates = {item for word in by_command.union(*held) for item in by_word.get(word, ())}
        for item in sorted(candidates.difference(named), key=order.__getitem__):
            item_words = names[item]
            if item_words & by_command or any(item_words < thing for thing in held):
                named[item] = step
    return named


def word_index(names: Iterable[str]) -> dict[str, list[str]]:
    """Each word (`words`) of some names, with the names that hold it, in their order.

    >>> word_index(["brass key", "key"])
    {'brass': ['brass key'], 'key': ['brass key', 'key']}
    """
    index: dict[str, list[str]] = {}
    for name in dict.fromkeys(names):
        for word in dict.fromkeys(words(name)):
            index.setdefault(word, []).append(name)
    return index


# The directions a command may name (CONVENTIONS.md, Commands): how the recorder reads a move's
# direction, and how a room graph knows an exit tried in vain.
DIRECTION_WORDS = {
    **DIRECTION_ABBREVIATIONS, "in": "in", "inside": "in", "out": "out", "outside": "out",
    **{d: d for d in ("north", "south", "east", "west", "northeast", "northwest", "southeast",
                      "southwest", "up", "down", "upstairs", "downstairs")},
}
_STAIRS = {"upstairs": "up", "downstairs": "down"}
MOVE_VERBS = frozenset({"go", "walk", "run", "climb", "head", "move", "crawl", "swim", "jump", "step",
                        "travel", "proceed", "wade", "slide", "descend", "ascend"})
_VERB_DIRECTIONS = {"enter": "in", "exit": "out", "leave": "out", "ascend": "up", "descend": "down"}
_FILLER = frozenset({"to", "the", "towards", "toward"})


def command_direction(text: str) -> str | None:
    """The direction a command names, if any, whether or not it moved the player.

    >>> command_direction("n"), command_direction("go north"), command_direction("climb up"), command_direction("enter house")
    ('north', 'north', 'up', 'in')
    """
    words = [w for w in re.findall(r"[a-z]+", text.lower()) if w not in _FILLER]
    if not words:
        return None
    first, rest = words[0], words[1:]
    if first in DIRECTION_WORDS and not rest:
        direction = DIRECTION_WORDS[first]
    elif first in MOVE_VERBS and rest and rest[0] in DIRECTION_WORDS:
        direction = DIRECTION_WORDS[rest[0]]
    else:
        direction = _VERB_DIRECTIONS.get(first)
    return _STAIRS.get(direction, direction)


def direction_vocabulary() -> list[str]:
    return sorted({_STAIRS.get(d, d) for d in DIRECTION_WORDS.values()})
