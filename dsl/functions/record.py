"""What a built-in function is: one record holding everything the three passes need of it.

    name, arity, usage      how it is called; `usage` is shown in error messages
    options                 its required keyword options (`ties=`, `cells=`) and their values
    per_row_from            arguments from this position on are read per row of the first (a relation)
    type(c, call, types)    the typing rule, for the checker `c`: the result type, or None after
                            reporting the error with `c.error(...)`
    lower(lo, call, row)    the relational IR, for the lowerer `lo` (dsl/ir/exprs.py), in the form
                            of the result type: a scalar `S` (over the context `c`, and over the rows
                            `t` of the relation `row` where one is given), the name of a node of at
                            most one row per key, the name of a bag node (columns v and s), or a
                            `RelRef`; every keyed value is joined by key, never correlated
    reference(ev, call, scope)
                            the value, for the reference evaluator `ev`: a second reading written
                            from CONVENTIONS.md that never calls the SQL side

A part asks the pass for what it needs: `lo.relation(arg)`, `lo.bag(arg)`, `lo.scalar(arg, row)`,
`lo.aggregate(from, sql)`, `ev.value(arg, scope)`, `ev.ordered(rel, scope)`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from qtc.dsl import ast as A
from qtc.dsl import types as T

# Why a call must always give an option: there is no default.
OPTION_REASONS = {
    "ties": "ties are never broken silently: see CONVENTIONS.md, Ties",
    "cells": "say which map: 'seen' (what the player had seen) or 'all' (the true map); see docs/spatial.md",
}


class Function(ABC):
    name: str
    arity: tuple[int, ...]
    usage: str
    options: dict[str, tuple[str, ...]] = {}
    per_row_from: int | None = None

    @abstractmethod
    def type(self, c, call: A.Call, types: list[T.Type]) -> T.Type | None: ...

    @abstractmethod
    def lower(self, lo, call: A.Call, row) -> Any: ...

    @abstractmethod
    def reference(self, ev, call: A.Call, scope) -> Any: ...

    # ---- for typing rules: each reports what is wrong with one argument and says whether it is right ----
    def need(self, c, call: A.Call, position: int, ok: bool, wanted: str, got: T.Type) -> bool:
        if not ok:
            c.error(call.args[position].span, f"'{call.function}' needs {wanted} here, not {got}",
                    f"usage: {self.usage}")
        return ok

    def relation_arg(self, c, call: A.Call, types: list[T.Type]) -> bool:
        return self.need(c, call, 0, isinstance(types[0], T.Relation), "a relation", types[0])

    def bag_arg(self, c, call: A.Call, types: list[T.Type]) -> bool:
        return self.need(c, call, 0, isinstance(types[0], T.Bag), "a column of a relation (rel.column)", types[0])

    def text_arg(self, c, call: A.Call, types: list[T.Type], position: int = 0) -> bool:
        ty = types[position]
        return self.need(c, call, position, ty in T.TEXTUAL or ty == T.NULL, "text", ty)
