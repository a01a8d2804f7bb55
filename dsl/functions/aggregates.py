"""Functions of the values of a relation: of one column (a bag, `f(rel.column)`) or of values computed
per row (`f(rel, expr, ...)`). Aggregates skip null values; `mode` breaks ties by its tie rule
(CONVENTIONS.md, Ties)."""

from __future__ import annotations

from collections import Counter, defaultdict

from qtc.dsl import ast as A
from qtc.dsl import types as T
from qtc.dsl.conventions import TIE_RULES
from qtc.dsl.ir.nodes import CARD_DEMAND, CARD_N
from qtc.dsl.ir.sql import S, combine, key_columns, pcol
from qtc.dsl.reference.values import Bag, distinct_sorted, hashable, sort_key

from .record import Function


def bag_aggregate(lo, call, outer: str, inner: str) -> S:
    """`inner` (an aggregate of the bag's values `{v}`, and their steps `{s}`) per key, as a column of
    the bag's aggregate node, put in `outer`."""
    bag = lo.bag(call.args[0])
    value = lo.aggregate(bag.frm, inner.format(v=bag.v, s=bag.s))
    return combine(outer.format(value.sql), value)


class PerRowAggregate(Function):
    """An aggregate of one bag, or of the values of expressions over each row of a relation."""
    per_row_from = 1

    def row_values(self, c, call, types, numeric: bool) -> list | None:
        """The types of the per-row values of `f(relation, expr, ...)`, or the element of `f(relation.column)`."""
        if len(call.args) == 1:
            return [types[0].element] if self.bag_arg(c, call, types) else None
        if not self.relation_arg(c, call, types) or len(types) < len(call.args):
            return None
        for position, ty in enumerate(types[1:], start=1):
            ok = isinstance(ty, T.Scalar) and (ty in T.NUMERIC if numeric else True)
            if not self.need(c, call, position, ok, "a number per row" if numeric else "a value per row", ty):
                return None
        return types[1:]

    def per_row_lowered(self, lo, call):
        """The FROM clause of the relation's rows, and each per-row value over it."""
        rel = lo.relation(call.args[0])
        key = lo.keyed(rel.key, *(lo.fp(a) for a in call.args[1:]))
        frm = lo.row_from(rel, key)
        values = [lo.scalar(a, rel) for a in call.args[1:]]
        for value in values:
            lo.with_scalar(frm, value)
        return frm, values

    def per_row(self, ev, call, scope) -> list[tuple]:
        """The tuple of the expressions' values on each row of the relation."""
        rel = ev.value(call.args[0], scope)
        return [tuple(ev.value(arg, scope.with_row(row)) for arg in call.args[1:]) for row in rel.rows]


class CountDistinct(PerRowAggregate):
    name, arity = "count_distinct", (1, 2, 3)
    usage = ("count_distinct(relation.column) or count_distinct(relation, key, ...) -> how many distinct values "
             "(rows with a null key skipped)")

    def type(self, c, call, types):
        return T.INTEGER if self.row_values(c, call, types, numeric=False) is not None else None

    def lower(self, lo, call, row):
        if len(call.args) == 1:
            return bag_aggregate(lo, call, "coalesce({}, 0)", "count(DISTINCT {v})")
        frm, values = self.per_row_lowered(lo, call)
        present = " AND ".join(f"{v.sql} IS NOT NULL" for v in values)
        n = lo.aggregate(frm, f"count(DISTINCT CASE WHEN {present} THEN row({', '.join(v.sql for v in values)}) END)")
        return combine(f"coalesce({n.sql}, 0)", n)

    def reference(self, ev, call, scope):
        if len(call.args) == 1:
            return len({hashable(v) for v in ev.value(call.args[0], scope).values()})
        return len({hashable(key) for key in self.per_row(ev, call, scope) if None not in key})


class Sum(PerRowAggregate):
    name, arity, usage = "sum", (1, 2), "sum(relation.column) or sum(relation, value per row)"

    def type(self, c, call, types):
        values = self.row_values(c, call, types, numeric=True)
        if values is None or len(call.args) == 1 and not self.need(c, call, 0, values[0] in T.NUMERIC, "numbers",
                                                                    types[0]):
            return None
        return T.FLOAT if values[0] == T.FLOAT else T.INTEGER

    def lower(self, lo, call, row):
        if len(call.args) == 1:
            return bag_aggregate(lo, call, "coalesce({}, 0)", "sum({v})")
        frm, (value,) = self.per_row_lowered(lo, call)
        total = lo.aggregate(frm, f"sum({value.sql})")
        return combine(f"coalesce({total.sql}, 0)", total)

    def reference(self, ev, call, scope):
        if len(call.args) == 1:
            return sum(ev.value(call.args[0], scope).values())
        return sum(v for (v,) in self.per_row(ev, call, scope) if v is not None)


class MinMax(Function):
    arity = (1,)

    def __init__(self, name: str, best):
        self.name, self.best, self.usage = name, best, f"{name}(relation.column)"

    def type(self, c, call, types):
        if not self.bag_arg(c, call, types) or not self.need(c, call, 0, types[0].element in T.NUMERIC, "numbers",
                                                             types[0]):
            return None
        return types[0].element

    def lower(self, lo, call, row):
        return bag_aggregate(lo, call, "{}", self.name + "({v})")

    def reference(self, ev, call, scope):
        return self.best(ev.value(call.args[0], scope).values(), default=None)


class Mode(Function):
    name, arity, options = "mode", (1,), {"ties": TIE_RULES}
    usage = f"mode(relation.column, ties={'|'.join(TIE_RULES)})"

    def type(self, c, call, types):
        return types[0].element if self.bag_arg(c, call, types) else None

    def lower(self, lo, call, row):
        bag = lo.bag(call.args[0])
        ties = call.kwargs["ties"].name
        frm = bag.frm.copy()
        frm.wheres.append(f"{bag.v} IS NOT NULL")
        keys = ", ".join(["episode_id", *map(pcol, bag.key)])
        grouped = (f"SELECT {key_columns('c', bag.key)}, {bag.v} AS v, count(*) AS n, min({bag.s}) AS first_step, "
                   f"max({bag.s}) AS last_step {frm.render()} GROUP BY ALL")
        if ties == "unique":
            sql = (f"SELECT {keys}, CASE WHEN count(*) = 1 THEN any_value(v) END AS v FROM (SELECT *, max(n) OVER "
                   f"(PARTITION BY {keys}) AS qtc_max FROM ({grouped})) WHERE n = qtc_max GROUP BY {keys}")
        else:
            tie_order = {"first": "first_step ASC", "last": "last_step DESC", "alpha": "v ASC"}[ties]
            sql = (f"SELECT {keys}, v FROM (SELECT *, row_number() OVER (PARTITION BY {keys} ORDER BY n DESC, "
                   f"{tie_order}, v ASC) AS qtc_rn FROM ({grouped})) WHERE qtc_rn = 1")
        name = lo.add("mode", "aggregate", bag.key, sql, CARD_DEMAND, f"mode (ties={ties})")
        return S(f"{name}.v", (name,))

    def reference(self, ev, call, scope):
        bag = ev.value(call.args[0], scope)
        counts = Counter(v for v, _ in bag.items if v is not None)
        if not counts:
            return None
        top = max(counts.values())
        tied = sorted((v for v, n in counts.items() if n == top), key=sort_key)
        ties = call.kwargs["ties"].name
        if ties == "unique":
            return tied[0] if len(tied) == 1 else None
        if ties == "alpha":
            return tied[0]
        steps = defaultdict(list)
        for v, s in bag.items:
            if s is not None:
                steps[v].append(s)
        if ties == "first":
            return min(tied, key=lambda v: sort_key(min(steps[v], default=None)))
        return min(tied, key=lambda v: sort_key(-max(steps[v]) if steps[v] else None))


class List(Function):
    name, arity, usage = "list", (1,), "list(relation.column) -> its distinct values, sorted"

    def type(self, c, call, types):
        return T.ListOf(types[0].element) if self.bag_arg(c, call, types) else None

    def lower(self, lo, call, row):
        return bag_aggregate(lo, call, "coalesce({}, [])",
                             "list(DISTINCT {v} ORDER BY {v}) FILTER (WHERE {v} IS NOT NULL)")

    def reference(self, ev, call, scope):
        return distinct_sorted(ev.value(call.args[0], scope).values())


class Sequence(Function):
    name, arity = "sequence", (1,)
    usage = "sequence(relation.column) -> its values in step order, repeats kept (rows of one step by value)"

    def type(self, c, call, types):
        if not self.bag_arg(c, call, types):
            return None
        base = call.args[0].base.ty if isinstance(call.args[0], A.Field) else None
        if not self.need(c, call, 0, isinstance(base, T.Relation) and base.has_step, "a column of a relation with "
                         "a step column", types[0]):
            return None
        return T.ListOf(types[0].element)

    def lower(self, lo, call, row):
        return bag_aggregate(lo, call, "coalesce({}, [])", "list({v} ORDER BY {s}, {v}) FILTER (WHERE {v} IS NOT NULL)")

    def reference(self, ev, call, scope):
        items = [(step, value) for value, step in ev.value(call.args[0], scope).items if value is not None]
        return [value for _, value in sorted(items, key=lambda item: (item[0], sort_key(item[1])))]


class Flatten(Function):
    name, arity, usage = "flatten", (1,), "flatten(relation.list_column) -> the values in the lists"

    def type(self, c, call, types):
        if not self.bag_arg(c, call, types) or not self.need(c, call, 0, isinstance(types[0].element, T.ListOf),
                                                             "lists", types[0]):
            return None
        return T.Bag(types[0].element.element)

    def lower(self, lo, call, row):
        inner = lo.bag(call.args[0])
        sql = f"SELECT {key_columns('c', inner.key)}, unnest({inner.v}) AS v, {inner.s} AS s {inner.frm.render()}"
        return lo.add("bag", "bag", inner.key, sql, CARD_N, "flatten", fence=True)

    def reference(self, ev, call, scope):
        bag = ev.value(call.args[0], scope)
        return Bag([(item, step) for values, step in bag.items if values is not None for item in values])


FUNCTIONS = (CountDistinct(), Sum(), MinMax("min", min), MinMax("max", max), Mode(), List(), Sequence(), Flatten())
