"""Rejected commands of Jericho games (CONVENTIONS.md, Rejected commands): a command the game's parser
refused, read from the reply it printed.

A reply is a refusal when it begins (after whitespace and an opening bracket) with one of the parser's
own messages below: the Infocom parser's (zork1, sorcerer), the Inform library's (detective, reverb) and
the ones 905 prints in brackets. A command the parser took but the story turned down ("The windows are
all boarded.") is not one: the game understood it.
"""

from __future__ import annotations

import re

PARSER_REFUSALS = (
    # Infocom
    "I don't know the word ",
    "You used the word ",
    "I beg your pardon?",
    "What do you want to ",
    "It's not clear what you're referring to",
    "I don't see what you're referring to",
    "There was no verb in that sentence",
    "There seems to be a noun missing in that sentence",
    "That sentence isn't one I recognize",
    "I don't understand that sentence",
    # Inform
    "That's not a verb I recognise",
    "That's not a verb I recognize",
    "You can't see any such thing",
    "I didn't understand that sentence",
    "I only understood you as far as ",
    "You seem to want to talk to someone, but I can't see whom",
    "I didn't understand the way that finished",
    "You can't use multiple objects with that verb",
    "You excepted something not included anyway",
    "Your interpreter does not provide ",
    # 905's own wording of the same errors
    "!: Verb error",
    "!: Noun error",
    "!: No command entered",
    "!: Your interpreter does not provide ",
)
_REFUSAL = re.compile(r"\s*\[?\s*(?:" + "|".join(re.escape(text) for text in PARSER_REFUSALS)
                      + r"|You can't see any [^.!?\n]* here!)")


def parser_refused(reply: str | None) -> bool:
    """Whether a Jericho reply is the parser refusing the command.

    >>> parser_refused('I don\\'t know the word "xyzzyq".'), parser_refused("\\nThat's not a verb I recognise.\\n")
    (True, True)
    >>> parser_refused("[What do you want to take?]"), parser_refused("The windows are all boarded.")
    (True, False)
    """
    return bool(reply) and _REFUSAL.match(reply) is not None
