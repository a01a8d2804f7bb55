"""Seeded choices for question generation that do not depend on the order anything arrives in.

Every choice is made from a SHA-256 of the seed and stable names (template id, episode id, question
id), never from an RNG's call order, a set's order or the order of files on disk: the same inputs and
seed make the same choices, whatever order the rows come in.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import defaultdict
from typing import Callable, Iterable, Iterator, TypeVar

Item = TypeVar("Item")


def seeded_key(seed: int, *names: str) -> str:
    """A sort key: the hex SHA-256 of the seed and the names, joined by a separator so that ('ab', 'c')
    and ('a', 'bc') give different keys.

    >>> seeded_key(42, "crafter.action_at", "c1")[:16], seeded_key(1, "ab", "c") == seeded_key(1, "a", "bc")
    ('7053f6173584bf76', False)
    """
    return hashlib.sha256("\x1f".join([str(seed), *names]).encode("utf-8")).hexdigest()


def seeded_index(seed: int, size: int, *names: str) -> int:
    """An index in range(size) chosen by the seed and the names."""
    return int(seeded_key(seed, *names), 16) % size


def spread_over_episodes(items: Iterable[Item], episode_of: Callable[[Item], str], key_of: Callable[[Item], str],
                         seed: int, scope: str) -> Iterator[Item]:
    """The items in a seeded order that takes one from each episode in turn.

    Each episode's items are shuffled by `key_of` (a seeded key); the episodes themselves come in an
    order seeded by `scope` (a template id), so that a cap on the list's length spreads the questions
    over as many episodes as it can and no episode comes first for every template. An episode's items
    are keyed only once the order reaches it (a key costs a hash; a cap may stop before the last episode).

    >>> items = ["e1/1", "e1/2", "e1/3", "e2/1", "e3/1"]
    >>> list(spread_over_episodes(items, lambda item: item[:2], lambda item: seeded_key(1, item), 1, "crafter.t"))
    ['e1/2', 'e2/1', 'e3/1', 'e1/1', 'e1/3']
    """
    by_episode: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        by_episode[episode_of(item)].append(item)
    queues = []
    for episode in sorted(by_episode, key=lambda episode: seeded_key(seed, scope, episode)):
        queues.append(sorted(by_episode[episode], key=key_of))
        yield queues[-1][0]
    for depth in itertools.count(1):
        layer = [queue[depth] for queue in queues if depth < len(queue)]
        if not layer:
            return
        yield from layer


def mix(answerable: Iterator[Item], adversarial: Iterator[Item], ratio: float, limit: int) -> list[Item]:
    """At most `limit` items, drawn in order from both iterators; every prefix of n items holds at
    most round(ratio * n) adversarial ones, and exactly that many while they last (so a shorter prefix,
    cut by a later cap, keeps the ratio as nearly as its length allows).

    It stops when the next item would have to be adversarial beyond the ratio and no answerable one is
    left: a template short of answerable questions is not filled up with false premises.

    >>> "".join(mix(iter("ABCDEF"), iter("xyz"), 0.25, 8)), "".join(mix(iter("AB"), iter("xyz"), 0.5, 8))
    ('AxBCDyEF', 'xAyBz')
    """
    chosen: list[Item] = []
    adversarial_count = 0
    adversarial_left = True
    while len(chosen) < limit:
        if adversarial_left and adversarial_count + 1 <= nearest(ratio * (len(chosen) + 1)):
            item = next(adversarial, None)
            if item is not None:
                chosen.append(item)
                adversarial_count += 1
                continue
            adversarial_left = False
        item = next(answerable, None)
        if item is None:
            break
        chosen.append(item)
    return chosen


def nearest(value: float) -> int:
    """`value` rounded half up (Python's round() rounds half to even), tolerant of float error.

    >>> nearest(2.5), round(2.5), nearest(0.29 * 50), 0.29 * 50
    (3, 2, 15, 14.499999999999998)
    """
    return math.floor(value + 0.5 + 1e-9)


def share(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Split `total` among the keys as evenly as it goes, none above its size (water-filling).

    Smaller keys are served first, and what they leave goes to the larger ones; the remainder of an
    uneven split goes to the last keys in (size, key) order, so the split is fixed by its inputs.

    >>> share({"a": 1, "b": 5, "c": 5}, 8), share({"a": 2, "b": 2}, 9)
    ({'a': 1, 'b': 3, 'c': 4}, {'a': 2, 'b': 2})
    """
    shares = {}
    left = total
    ordered = sorted(sizes, key=lambda key: (sizes[key], key))
    for position, key in enumerate(ordered):
        fair = left // (len(ordered) - position)
        shares[key] = min(sizes[key], fair)
        left -= shares[key]
    return shares
