"""The conventions of CONVENTIONS.md that code needs: ordinals, tie rules, keyword words.

The SQL compiler and the reference evaluator both take these definitions from here, so the two can
only differ in how they compute, never in what they mean.
"""

from __future__ import annotations

import re

ORDINALS = {"first": 1, "second": 2, "third": 3, "last": -1, "second_last": -2}
ORDINAL_WORDS = {value: word.replace("_", "-") for word, value in ORDINALS.items()}

TIE_RULES = ("first", "last", "alpha", "unique")

# A word is a maximal run of ASCII letters and digits, lowercased.
WORD_SPLIT_REGEX = "[^a-z0-9]+"
KEYWORD_MIN_LENGTH = 4
STOPWORDS = frozenset("""
about above after again against also because been before being below between both cannot could does
doing down during each from further have having here into itself just more most once only other over
same should some such than that their them then there these they this those through under until very
what when where which while will with would your yours yourself like want need make sure going next
""".split())


def words(text: str | None) -> list[str]:
    """The words of a text, in order, lowercased (CONVENTIONS.md, Keywords)."""
    if not text:
        return []
    return [w for w in re.split(WORD_SPLIT_REGEX, text.lower()) if w]


def is_keyword(word: str) -> bool:
    return len(word) >= KEYWORD_MIN_LENGTH and word not in STOPWORDS and not word.isdigit()
