"""Functions of the values of a relation: of one column (a bag, `f(rel.column)`) or of values computed
per row (`f(rel, expr, ...)`). Aggregates skip null values; `mode` breaks ties by its tie rule
(CONVENTIONS.md, Ties)."""

from __future__ import annotations

from collections import Counter, defaultdict

from qtc.dsl import types as T
from qtc.dsl.conventions import TIE_RULES
from qtc.dsl.reference.values import Bag, distinct_sorted, hashable, sort_key

from .record import Function


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

    def per_row_sql(self, cx, call) -> tuple[str, str, list[str]]:
        """(the relation's SELECT, its alias, the SQL of each per-row value)."""
        rel = cx.relation(call.args[0])
        q = cx.alias()
        return rel.sql, q, [cx.scalar(a, q) for a in call.args[1:]]

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

    def sql(self, cx, call, row):
        if len(call.args) == 1:
            q = cx.alias()
            return f"(SELECT count(DISTINCT {q}.v) FROM ({cx.bag(call.args[0])}) {q})"
        rel, q, values = self.per_row_sql(cx, call)
        present = " AND ".join(f"{v} IS NOT NULL" for v in values)
        return f"(SELECT count(DISTINCT row({', '.join(values)})) FROM ({rel}) {q} WHERE {present})"

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

    def sql(self, cx, call, row):
        if len(call.args) == 1:
            q = cx.alias()
            return f"(SELECT coalesce(sum({q}.v), 0) FROM ({cx.bag(call.args[0])}) {q})"
        rel, q, (value,) = self.per_row_sql(cx, call)
        return f"(SELECT coalesce(sum({value}), 0) FROM ({rel}) {q})"

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

    def sql(self, cx, call, row):
        q = cx.alias()
        return f"(SELECT {self.name}({q}.v) FROM ({cx.bag(call.args[0])}) {q})"

    def reference(self, ev, call, scope):
        return self.best(ev.value(call.args[0], scope).values(), default=None)


class Mode(Function):
    name, arity, options = "mode", (1,), {"ties": TIE_RULES}
    usage = f"mode(relation.column, ties={'|'.join(TIE_RULES)})"

    def type(self, c, call, types):
        return types[0].element if self.bag_arg(c, call, types) else None

    def sql(self, cx, call, row):
        bag, ties = cx.bag(call.args[0]), call.kwargs["ties"].name
        q = cx.alias()
        grouped = (f"SELECT {q}.v, count(*) AS n, min({q}.s) AS first_step, max({q}.s) AS last_step "
                   f"FROM ({bag}) {q} WHERE {q}.v IS NOT NULL GROUP BY {q}.v")
        r = cx.alias()
        if ties == "unique":
            return (f"(SELECT CASE WHEN count(*) = 1 THEN any_value({r}.v) END FROM ({grouped}) {r} "
                    f"WHERE {r}.n = (SELECT max(n) FROM ({grouped})))")
        tie_order = {"first": f"{r}.first_step ASC", "last": f"{r}.last_step DESC", "alpha": f"{r}.v ASC"}[ties]
        return f"(SELECT {r}.v FROM ({grouped}) {r} ORDER BY {r}.n DESC, {tie_order}, {r}.v ASC LIMIT 1)"

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

    def sql(self, cx, call, row):
        q = cx.alias()
        return (f"(SELECT coalesce(list(DISTINCT {q}.v ORDER BY {q}.v) FILTER (WHERE {q}.v IS NOT NULL), []) "
                f"FROM ({cx.bag(call.args[0])}) {q})")

    def reference(self, ev, call, scope):
        return distinct_sorted(ev.value(call.args[0], scope).values())


class Flatten(Function):
    name, arity, usage = "flatten", (1,), "flatten(relation.list_column) -> the values in the lists"

    def type(self, c, call, types):
        if not self.bag_arg(c, call, types) or not self.need(c, call, 0, isinstance(types[0].element, T.ListOf),
                                                             "lists", types[0]):
            return None
        return T.Bag(types[0].element.element)

    def sql(self, cx, call, row):
        q = cx.alias()
        return f"SELECT unnest({q}.v) AS v, {q}.s AS s FROM ({cx.bag(call.args[0])}) {q}"

    def reference(self, ev, call, scope):
        bag = ev.value(call.args[0], scope)
        return Bag([(item, step) for values, step in bag.items if values is not None for item in values])


FUNCTIONS = (CountDistinct(), Sum(), MinMax("min", min), MinMax("max", max), Mode(), List(), Flatten())
