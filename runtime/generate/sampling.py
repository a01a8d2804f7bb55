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


class Mix:
    """One list drawn in order from two iterators, answerable and adversarial items: every prefix of n
    items holds at most round(ratio * n) adversarial ones, and exactly that many while they last (so a
    prefix, cut by a later cap, keeps the ratio as nearly as its length allows).

    The list ends when the next item would have to be adversarial beyond the ratio and no answerable one
    is left: a template short of answerable questions is not filled up with false premises. It is drawn
    only as far as it is read, and a longer read extends the same list.

    >>> "".join(Mix(iter("ABCDEF"), iter("xyz"), 0.25).first(8)), "".join(Mix(iter("AB"), iter("xyz"), 0.5).first(8))
    ('AxBCDyEF', 'xAyBz')
    """

    def __init__(self, answerable: Iterator[Item], adversarial: Iterator[Item], ratio: float):
        self.items: list[Item] = []
        self._rest = self._drawn(answerable, adversarial, ratio)

    def first(self, n: int) -> list[Item]:
        """The list's first `n` items (fewer where it ends sooner)."""
        self.items.extend(itertools.islice(self._rest, max(0, n - len(self.items))))
        return self.items[:n]

    @staticmethod
    def _drawn(answerable: Iterator[Item], adversarial: Iterator[Item], ratio: float) -> Iterator[Item]:
        drawn = adversarial_count = 0
        adversarial_left = True
        while True:
            if adversarial_left and adversarial_count + 1 <= nearest(ratio * (drawn + 1)):
                item = next(adversarial, None)
                if item is not None:
                    drawn += 1
                    adversarial_count += 1
                    yield item
                    continue
                adversarial_left = False
            item = next(answerable, None)
            if item is None:
                return
            drawn += 1
            yield item


def nearest(value: float) -> int:
    """`value` rounded half up (Python's round() rounds half to even), tolerant of float error.

    >>> nearest(2.5), round(2.5), nearest(0.29 * 50), 0.29 * 50
    (3, 2, 15, 14.499999999999998)
    """
    return math.floor(value + 0.5 + 1e-9)


def share(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Split `total` among the keys as evenly as it goes, none above its size (water-filling).

    Smaller keys are served first, and what they leave goes to the larger ones, which get an even
    share each; the remainder of an uneven split goes one each to the last of them in key order. So
    the split is fixed by its inputs, and a key that takes less than its size would take the same
    share, and leave the others the same, however much larger it were.

    >>> share({"a": 1, "b": 5, "c": 5}, 8), share({"a": 2, "b": 2}, 9), share({"a": 9, "b": 3, "c": 3}, 8)
    ({'a': 1, 'b': 3, 'c': 4}, {'a': 2, 'b': 2}, {'a': 2, 'b': 3, 'c': 3})
    """
    shares = {}
    left = total
    ordered = sorted(sizes, key=lambda key: (sizes[key], key))
    for position, key in enumerate(ordered):
        fair = left // (len(ordered) - position)
        if sizes[key] > fair:  # this key and the larger ones take `fair` each, and the remainder
            larger = sorted(ordered[position:])
            remainder = left - fair * len(larger)
            shares |= {other: fair + (index >= len(larger) - remainder) for index, other in enumerate(larger)}
            return shares
        shares[key] = sizes[key]
        left -= sizes[key]
    return shares
