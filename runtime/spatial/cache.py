"""A bounded cache of the least recently used values, for the per-episode and per-version state the
spatial primitives keep between calls."""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Hashable


class LRU:
    """At most `size` values, each computed once by `compute(*key)` while it stays in the cache."""

    def __init__(self, size: int, compute: Callable):
        self.size, self.compute, self.items = size, compute, OrderedDict()

    def __call__(self, *key: Hashable):
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = self.compute(*key)
        self.put(value, *key)
        return value

    def __contains__(self, key: tuple) -> bool:
        return key in self.items

    def __len__(self) -> int:
        return len(self.items)

    def put(self, value, *key: Hashable) -> None:
        """Keep `value` for `key`, computed elsewhere (with others, for less than one at a time)."""
        self.items[key] = value
        self.items.move_to_end(key)
        if len(self.items) > self.size:
            self.items.popitem(last=False)
