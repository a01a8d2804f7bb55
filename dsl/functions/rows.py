"""Functions of a relation: how many rows it has, one of its rows, and its runs (CONVENTIONS.md,
Ordinals, Ties and Runs)."""

from __future__ import annotations

import itertools
from collections import defaultdict

from qtc.dsl import sql
from qtc.dsl import types as T
from qtc.dsl.reference.values import Rel, hashable, plain

from .record import Function

ARG_TIES = ("first", "last", "unique")
# The rows of `runs(rel, expr)`: maximal runs of consecutive steps with equal `expr`.
RUNS_COLUMNS = (("start", T.STEP), ("end", T.STEP), ("length", T.INTEGER))


class Count(Function):
    name, arity, usage = "count", (1,), "count(relation)"

    def type(self, c, call, types):
        return T.INTEGER if self.relation_arg(c, call, types) else None

    def sql(self, cx, call, row):
        return f"(SELECT count(*) FROM ({cx.relation(call.args[0]).sql}))"

    def reference(self, ev, call, scope):
        return len(ev.value(call.args[0], scope).rows)


class Exists(Function):
    name, arity, usage = "exists", (1,), "exists(relation)"

    def type(self, c, call, types):
        return T.BOOLEAN if self.relation_arg(c, call, types) else None

    def sql(self, cx, call, row):
        return f"(EXISTS ({cx.relation(call.args[0]).sql}))"

    def reference(self, ev, call, scope):
        return bool(ev.value(call.args[0], scope).rows)


class Nth(Function):
    """The k-th row in sort order; a negative k counts from the end. `first` and `last` fix k."""

    def __init__(self, name: str, usage: str, k: int | None = None):
        self.name, self.usage, self.k = name, usage, k
        self.arity = (2,) if k is None else (1,)

    def type(self, c, call, types):
        if not self.relation_arg(c, call, types):
            return None
        if self.k is None and not self.need(c, call, 1, types[1] in (T.ORDINAL, T.INTEGER),
                                            "an ordinal or an integer", types[1]):
            return None
        return T.Row(types[0])

    def sql(self, cx, call, row):
        rel = cx.relation(call.args[0])
        q = cx.alias()
        k = str(self.k) if self.k is not None else cx.scalar(call.args[1], None)
        return (f"SELECT * EXCLUDE (qtc_rn, qtc_n) FROM (SELECT {q}.*, row_number() OVER "
                f"(ORDER BY {cx.order_sql(rel, q)}) AS qtc_rn, count(*) OVER () AS qtc_n "
                f"FROM ({rel.sql}) {q}) WHERE qtc_rn = CASE WHEN ({k}) > 0 THEN ({k}) ELSE qtc_n + 1 + ({k}) END")

    def reference(self, ev, call, scope):
        rows = ev.ordered(ev.value(call.args[0], scope), scope)
        k = self.k if self.k is not None else ev.value(call.args[1], scope)
        if k is None or k == 0 or abs(k) > len(rows):
            return None
        return rows[k - 1] if k > 0 else rows[k]


class ArgExtreme(Function):
    """The row with the largest (argmax) or smallest (argmin) value, ties broken by the tie rule."""
    arity, options, per_row_from = (2,), {"ties": ARG_TIES}, 1

    def __init__(self, name: str, best, direction: str):
        self.name, self.best, self.direction = name, best, direction
        self.usage = f"{name}(relation, value, ties={'|'.join(ARG_TIES)})"

    def type(self, c, call, types):
        if not self.relation_arg(c, call, types):
            return None
        if not self.need(c, call, 1, isinstance(types[1], T.Scalar) and types[1] in T.NUMERIC,
                         "a number per row", types[1]):
            return None
        return T.Row(types[0])

    def sql(self, cx, call, row):
        rel = cx.relation(call.args[0])
        q = cx.alias()
        ties = call.kwargs["ties"].name
        value = cx.scalar(call.args[1], q)
        inner = f"SELECT {q}.*, {value} AS qtc_v FROM ({rel.sql}) {q} WHERE {value} IS NOT NULL"
        r = cx.alias()
        ranked = (f"SELECT *, count(*) OVER (PARTITION BY qtc_v) AS qtc_ties FROM ({inner}) {r} "
                  f"ORDER BY qtc_v {self.direction}, {cx.order_sql(rel, r, reverse=ties == 'last')} LIMIT 1")
        unique = " WHERE qtc_ties = 1" if ties == "unique" else ""
        return f"SELECT * EXCLUDE (qtc_v, qtc_ties) FROM ({ranked}){unique}"

    def reference(self, ev, call, scope):
        rows = ev.ordered(ev.value(call.args[0], scope), scope)
        valued = [(row, ev.value(call.args[1], scope.with_row(row))) for row in rows]
        valued = [(row, v) for row, v in valued if v is not None]
        if not valued:
            return None
        top = self.best(v for _, v in valued)
        tied = [row for row, v in valued if v == top]
        ties = call.kwargs["ties"].name
        if ties == "unique":
            return tied[0] if len(tied) == 1 else None
        return tied[0] if ties == "first" else tied[-1]


class Runs(Function):
    name, arity, per_row_from = "runs", (2,), 1
    usage = "runs(relation, value) -> rows (value, start, end, length)"

    def type(self, c, call, types):
        if not self.relation_arg(c, call, types):
            return None
        if not self.need(c, call, 0, types[0].has_step, "a relation with a step column", types[0]):
            return None
        if not self.need(c, call, 1, isinstance(types[1], T.Scalar), "a value per row", types[1]):
            return None
        return T.Relation("runs", (("value", types[1]), *RUNS_COLUMNS), has_step=False)

    def sql(self, cx, call, row):
        base = cx.relation(call.args[0])
        q = cx.alias()
        value = cx.scalar(call.args[1], q)
        inner = (f"SELECT {value} AS value, {q}.step AS step, {q}.step - row_number() OVER "
                 f"(PARTITION BY {value} ORDER BY {q}.step) AS qtc_group FROM ({base.sql}) {q}")
        return sql.Rel(f"SELECT value, min(step) AS start, max(step) AS \"end\", count(*) AS length "
                       f"FROM ({inner}) GROUP BY value, qtc_group", [("start", False)], call.ty)

    def reference(self, ev, call, scope):
        base = ev.value(call.args[0], scope)
        steps_by_value: dict = defaultdict(set)
        for row in base.rows:
            value = ev.value(call.args[1], scope.with_row(row))
            if value is not None:
                steps_by_value[hashable(value)].add(row["step"])
        runs = []
        for value, steps in steps_by_value.items():
            ordered = sorted(steps)
            # Consecutive steps share step - position; each such group is one maximal run.
            for _, group in itertools.groupby(enumerate(ordered), key=lambda pair: pair[1] - pair[0]):
                run = [step for _, step in group]
                runs.append({"value": plain(value), "start": run[0], "end": run[-1], "length": len(run)})
        return Rel(runs, [("start", False)], call.ty)


FUNCTIONS = (
    Count(), Exists(),
    Nth("first", "first(relation) -> its first row in sort order", k=1),
    Nth("last", "last(relation) -> its last row in sort order", k=-1),
    Nth("nth", "nth(relation, k) -> the k-th row (k < 0 counts from the end)"),
    ArgExtreme("argmax", max, "DESC"), ArgExtreme("argmin", min, "ASC"),
    Runs(),
)
