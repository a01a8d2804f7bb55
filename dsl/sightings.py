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

from .conventions import object_words, word_index, words


def names_object(text: str | None, name: str) -> bool:
    """Whether a text names an object: its name's words, in order, one right after another.

    >>> names_object("There is a small mailbox here.", "small mailbox"), names_object("A mailbox.", "small mailbox")
    (True, False)
    >>> names_object("Opening the bag reveals a clove of garlic.", "clove of garlic")
    True
    """
    return bool(named(text, name_index([name])))


def name_index(names: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """Names with their words (`words`) as `_spaced` text, by first word, for `named`; a name without words
    names nothing."""
    index: dict[str, list[tuple[str, str]]] = {}
    for name in dict.fromkeys(names):
        wanted = words(name)
        if wanted:
            index.setdefault(wanted[0], []).append((name, _spaced(wanted)))
    return index


def named(text: str | None, index: Mapping[str, list[tuple[str, str]]]) -> set[str]:
    """The names of a `name_index` that a text names (`names_object`).

    >>> sorted(named("A brass lantern and a lamp.", name_index(["brass lantern", "lamp", "brass key"])))
    ['brass lantern', 'lamp']
    """
    # The store asks this of every step's text for every thing of the tree: only names whose first word
    # the text holds are looked for, and a name's words stand one after another in the text exactly when
    # its spaced words lie within the text's (words hold no space).
    spaced, found = _indexed(text)
    return {name for first in index.keys() & found for name, wanted in index[first] if wanted in spaced}


def _spaced(found: tuple[str, ...]) -> str:
    """Words joined by spaces, with a space before and after: "brass lantern" as " brass lantern "."""
    return f" {' '.join(found)} "


@functools.lru_cache(maxsize=4096)
def _indexed(text: str | None) -> tuple[str, frozenset[str]]:
    """A text's words `_spaced`, and the set of them."""
    found = words(text)
    return _spaced(found), frozenset(found)


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


def thing_objects(names: Mapping[int, str | None], things: Iterable[str]) -> list[int]:
    """The objects of a tree (`names`: object -> name) whose name is a thing of the game (`things`), in
    number order: the only ones `present`, `mentioned` or sighted. Most objects of a tree are no thing
    (rooms, scenery)."""
    things = set(things)
    return sorted(num for num, name in names.items() if name in things)


def present(parents: Mapping[int, int], player: int, room: int, things: Iterable[int]) -> list[int]:
    """The thing objects (`thing_objects`) in the player's room with the tree `parents` (object -> parent),
    seen or not: inside `room` at any depth, not carried. A thing never present was surely never seen."""
    return [num for num in things if in_room(parents, num, room, player)]


def carried(parents: Mapping[int, int], num: int, player: int) -> bool:
    """Whether an object is inside the player at any depth."""
    return num != player and in_room(parents, num, player, 0)


def mentioned(parents: Mapping[int, int], player: int, named_names: set[str], things: Iterable[int],
              names: Mapping[int, str | None]) -> list[int]:
    """The thing objects whose name the text names (`named_names`, of `named`) that the player does not
    carry, wherever they are."""
    return [num for num in things if names[num] in named_names and not carried(parents, num, player)]


def sighted(present_things: Iterable[int], named_names: set[str], names: Mapping[int, str | None]) -> list[int]:
    """The objects sighted after the game printed a text: the things present (`present`) whose name it
    names (`named_names`, of `named`)."""
    return [num for num in present_things if names[num] in named_names]


def introduced_steps(names: Iterable[str], steps: Iterable[tuple[int, str | None, str | None]]) -> dict[str, int]:
    """The first step (of (step, command, text printed), in step order; step 0 the opening text with no
    command) at which each name was introduced: the text names it, or the command names it by a word.

    >>> introduced_steps(["jewel-encrusted egg", "golden clockwork canary", "leaflet"],
    ...                  [(0, None, "A small leaflet."), (4, "get egg", "Taken.")])
    {'leaflet': 0, 'jewel-encrusted egg': 4}
    """
    order = {name: i for i, name in enumerate(dict.fromkeys(names))}
    index = name_index(order)
    by_word = word_index(order)
    introduced: dict[str, int] = {}
    for step, command, text in steps:
        met = named(text, index)
        for word in object_words(command) if command else ():
            met.update(by_word.get(word, ()))
        for name in sorted(met.difference(introduced), key=order.__getitem__):
            introduced[name] = step
    return introduced
