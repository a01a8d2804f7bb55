"""What the player saw of Jericho's object tree (CONVENTIONS.md, Sightings): one rule, used by the
recorder (which objects to ask the game's names of), the store (`sightings`, `things_present`) and the
tests.

An object is **sighted** after step t when, in the tree after step t, it is inside the player's room
at any depth and not the player nor carried by it, its name is a thing of the game (`things`: the item
vocabulary), and the text the game printed at step t names it: the words of its name (`words`,
CONVENTIONS.md, Keywords) stand in the text one after another ("There is a brass lantern here" names
the brass lantern, "the lamp" does not).

A thing **present** after step t is one in the room so, named by the text or not: one never present
was never seen under any name, which is what a false premise "you saw X" needs. A thing is
**mentioned** at step t when the text names it and the player does not carry it, wherever it is: a
rope tied in the room above, seen from below, is mentioned but not sighted, and a question a reader
could answer otherwise from such a text is not asked.

A thing's name is **introduced** at the first step a reader of the episode met it (`introduced_steps`):
the text the game printed names it (as above), or the command typed names it by one of its words
(CONVENTIONS.md, Commands: `object_words`). An answerable question names only things introduced by its
horizon (CONVENTIONS.md, Items).
"""

from __future__ import annotations

import functools
from typing import Iterable, Mapping

from .conventions import object_words, words


def names_object(text: str | None, name: str) -> bool:
    """Whether a text names an object: its name's words, in order, one right after another.

    >>> names_object("There is a small mailbox here.", "small mailbox"), names_object("A mailbox.", "small mailbox")
    (True, False)
    >>> names_object("Opening the bag reveals a clove of garlic.", "clove of garlic")
    True
    """
    wanted = _words(name)
    if not wanted:
        return False
    found, places = _indexed(text)
    return any(found[i:i + len(wanted)] == wanted for i in places.get(wanted[0], ()))


# The store asks of every step's text whether it names each object of the tree: each text and name is
# split into words once, not once an object, and a text's words are indexed by where each stands, so
# that a name is compared only where its first word does.
_words = functools.lru_cache(maxsize=4096)(words)


@functools.lru_cache(maxsize=4096)
def _indexed(text: str | None) -> tuple[tuple[str, ...], dict[str, list[int]]]:
    found = words(text)
    places: dict[str, list[int]] = {}
    for i, word in enumerate(found):
        places.setdefault(word, []).append(i)
    return found, places


def in_room(parents: Mapping[int, int], num: int, room: int, player: int) -> bool:
    """Whether an object lies inside `room` at any depth, neither the player nor inside it (carried)."""
    seen = set()
    while num and num not in seen:
        if num == player:
            return False
        seen.add(num)
        num = parents.get(num, 0)
        if num == room:
            return True
    return False


def room_objects(parents: Mapping[int, int], room: int, player: int) -> list[int]:
    """The objects inside `room` at any depth, the player and what it carries left out, in number order."""
    return sorted(num for num in parents if in_room(parents, num, room, player))


def present(parents: Mapping[int, int], player: int, room: int, names: Mapping[int, str | None],
            things: Iterable[str]) -> list[int]:
    """The things in the player's room with the tree `parents` (object -> parent), seen or not: inside
    `room` at any depth, not carried, a thing by name. A thing never present was surely never seen."""
    things = set(things)
    # The name first: it is the cheaper test, and most objects of a tree are no thing (rooms, scenery).
    return [num for num in sorted(parents) if names.get(num) in things and in_room(parents, num, room, player)]


def carried(parents: Mapping[int, int], num: int, player: int) -> bool:
    """Whether an object is inside the player at any depth."""
    return num != player and in_room(parents, num, player, 0)


def mentioned(parents: Mapping[int, int], player: int, text: str | None, names: Mapping[int, str | None],
              things: Iterable[str]) -> list[int]:
    """The things of the game the text names that the player does not carry, wherever they are."""
    things = set(things)
    return [num for num in sorted(parents) if names.get(num) in things and names_object(text, names[num])
            and not carried(parents, num, player)]


def sighted(present_things: Iterable[int], text: str | None, names: Mapping[int, str | None]) -> list[int]:
    """The objects sighted after the game printed `text`: the things present (`present`) that it names."""
    return [num for num in present_things if names_object(text, names[num])]


def introduced_steps(names: Iterable[str], steps: Iterable[tuple[int, str | None, str | None]]) -> dict[str, int]:
    """The first step (of (step, command, text printed), in step order; step 0 the opening text with no
    command) at which each name was introduced: the text names it, or the command names it by a word.

    >>> introduced_steps(["jewel-encrusted egg", "golden clockwork canary", "leaflet"],
    ...                  [(0, None, "A small leaflet."), (4, "get egg", "Taken.")])
    {'leaflet': 0, 'jewel-encrusted egg': 4}
    """
    pending = {name: frozenset(words(name)) for name in names}
    introduced: dict[str, int] = {}
    for step, command, text in steps:
        typed = object_words(command) if command else frozenset()
        for name, name_words in list(pending.items()):
            if name_words & typed or names_object(text, name):
                introduced[name] = step
                del pending[name]
    return introduced
