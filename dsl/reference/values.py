"""The values of the reference evaluator, and what null does to them.

A relation is a list of dicts with its sort keys, a bag a list of (value, step) pairs; a row is a dict,
a list a list, a displacement a dict {'dx', 'dy'}. Null is None: arithmetic and comparison with null
give null, and `and`, `or`, `not` follow three-valued logic.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

from qtc.dsl import ast as A
from qtc.dsl import types as T


@dataclass
class Rel:
    """A relation: its rows, and its sort keys as (expression or column name, descending)."""
    rows: list[dict]
    keys: list[tuple[A.Expr | str, bool]]
    type: T.Relation


@dataclass
class Bag:
    """A multiset of values, each with the step of the row it came from (None if it has none)."""
    items: list[tuple[Any, int | None]]

    def values(self) -> list:
        return [v for v, _ in self.items if v is not None]


def is_true(value) -> bool:
    return value is True


def not_(value):
    return None if value is None else not value


def and_(left, right):
    if left is False or right is False:
        return False
    return None if left is None or right is None else True


def or_(left, right):
    if left is True or right is True:
        return True
    return None if left is None or right is None else False


_COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                ">=": operator.ge}


def compare(op: str, left, right):
    if left is None or right is None:
        return None
    return _COMPARISONS[op](left, right)


def arithmetic(op: str, left, right):
    """`+ - * / %` on numbers; null with a null operand, and for a division or remainder by zero."""
    if left is None or right is None:
        return None
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right == 0:
        return None
    if op == "/":
        return left / right
    # '%': the remainder has the sign of the dividend (division that truncates toward zero).
    if isinstance(left, float) or isinstance(right, float):
        return math.fmod(left, right)
    remainder = abs(left) % abs(right)
    return remainder if left >= 0 else -remainder


def sort_key(value) -> tuple:
    """A sort key for one value: nulls after everything, structs by their fields."""
    if value is None:
        return (1, 0)
    return (0, tuple(value.values()) if isinstance(value, dict) else value)


def hashable(value):
    """A value usable as a set member or dict key (lists and structs become tuples)."""
    if isinstance(value, list):
        return ("list", tuple(hashable(v) for v in value))
    if isinstance(value, dict):
        return ("struct", tuple((k, hashable(v)) for k, v in value.items()))
    return value


def plain(value):
    """The inverse of `hashable`."""
    if isinstance(value, tuple) and value and value[0] == "list":
        return [plain(v) for v in value[1]]
    if isinstance(value, tuple) and value and value[0] == "struct":
        return {k: plain(v) for k, v in value[1]}
    return value


def distinct_sorted(values) -> list:
    return [plain(v) for v in sorted({hashable(v) for v in values}, key=lambda v: sort_key(plain(v)))]
