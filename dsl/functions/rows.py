"""Functions of a relation: how many rows it has, one of its rows, its runs and its groups
(CONVENTIONS.md, Ordinals, Ties, Runs and Groups)."""

from __future__ import annotations

import itertools
from collections import defaultdict

from qtc.dsl import types as T
from qtc.dsl.ir.nodes import CARD_DEMAND, CARD_N
from qtc.dsl.ir.sql import From, RelRef, S, combine, key_columns, key_match, pcol
from qtc.dsl.reference.values import Rel, hashable, plain
from qtc.dsl.sql import ident, sql_string

from .record import Function

ARG_TIES = ("first", "last", "unique")
# The rows of `runs(rel, expr)`: maximal runs of consecutive steps with equal `expr`.
RUNS_COLUMNS = (("start", T.STEP), ("end", T.STEP), ("length", T.INTEGER))


def coalesced_count(lo, call, form: str) -> S:
    """How many rows the relation has per key, as a column of its aggregate node (computed once with
    every other aggregate over the same rows), put in `form`."""
    n = lo.aggregate(lo.rows_of(call.args[0])[0], "count(*)")
    return combine(form.format(n=n.sql), n)


class Count(Function):
    name, arity, usage = "count", (1,), "count(relation)"

    def type(self, c, call, types):
        return T.INTEGER if self.relation_arg(c, call, types) else None

    def lower(self, lo, call, row):
        return coalesced_count(lo, call, "coalesce({n}, 0)")

    def reference(self, ev, call, scope):
        return len(ev.value(call.args[0], scope).rows)


class Exists(Function):
    name, arity, usage = "exists", (1,), "exists(relation)"

    def type(self, c, call, types):
        return T.BOOLEAN if self.relation_arg(c, call, types) else None

    def lower(self, lo, call, row):
        return coalesced_count(lo, call, "(coalesce({n}, 0) > 0)")

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

    def lower(self, lo, call, row):
        rel = lo.relation(call.args[0])
        k = S(str(self.k)) if self.k is not None else lo.scalar(call.args[1], None)
        key = lo.keyed(rel.key, lo.fp(call.args[1]) if len(call.args) > 1 else ())
        # The relation's rows are ranked once per binding of its own key, whatever k is bound to: then
        # each binding of k picks its row from them (nth(rel, $k) over k's bindings ranks rel once).
        own = key_columns("c", rel.key)
        ranked = lo.add("rank", "row", rel.key, f"SELECT {own}, {lo.columns(rel)}, row_number() OVER (PARTITION BY "
                        f"{own} ORDER BY {lo.order_sql(rel)}) AS qtc_rn, count(*) OVER (PARTITION BY {own}) AS qtc_n "
                        f"{lo.row_from(rel, rel.key).render()}", CARD_DEMAND, "rows ranked", fence=True)
        frm = lo.with_scalar(From(lo.context(key), key), k)
        frm.add(f"JOIN {ranked} r ON {key_match('r', rel.key)}")
        frm.wheres.append(f"r.qtc_rn = CASE WHEN {k.sql} > 0 THEN {k.sql} ELSE r.qtc_n + 1 + {k.sql} END")
        sql = f"SELECT {key_columns('c', key)}, {lo.columns(rel, 'r')} {frm.render()}"
        return lo.add("row", "row", key, sql, CARD_DEMAND, f"{self.name} row", fence=True)

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

    def lower(self, lo, call, row):
        rel = lo.relation(call.args[0])
        key = lo.keyed(rel.key, lo.fp(call.args[1]))
        frm = lo.row_from(rel, key)
        value = lo.scalar(call.args[1], rel)
        lo.with_scalar(frm, value)
        ties = call.kwargs["ties"].name
        # The value is computed once per row (a spatial primitive is a Python call), in a column the ranks
        # read; rows without one sort last, so the first row has one if any row has.
        valued = f"SELECT {key_columns('c', key)}, {lo.columns(rel)}, {value.sql} AS qtc_v {frm.render()}"
        if ties == "unique":
            return self._unique(lo, rel, key, valued)
        keys = key_columns("t", key)
        ranked = (f"SELECT *, row_number() OVER (PARTITION BY {keys} ORDER BY t.qtc_v {self.direction} NULLS LAST, "
                  f"{lo.order_sql(rel, reverse=ties == 'last')}) AS qtc_rn FROM ({valued}) t")
        sql = f"SELECT * EXCLUDE (qtc_rn, qtc_v) FROM ({ranked}) WHERE qtc_rn = 1 AND qtc_v IS NOT NULL"
        return lo.add("row", "row", key, sql, CARD_DEMAND, f"{self.name} (ties={ties})", fence=True)

    def _unique(self, lo, rel, key: tuple[str, ...], valued: str) -> str:
        """The row holding the extreme where no other row ties it, by one aggregate per binding: its row and
        the two best values (no order of the rows is needed, as no tie is broken)."""
        best = "min" if self.direction == "ASC" else "max"
        row = "{" + ", ".join(f"{sql_string(name)}: t.{ident(name)}" for name, _ in rel.rtype.columns) + "}"
        keys = key_columns("t", key)
        extreme = (f"SELECT {keys}, arg_{best}({row}, t.qtc_v) AS qtc_row, {best}(t.qtc_v, 2) AS qtc_best "
                   f"FROM ({valued}) t WHERE t.qtc_v IS NOT NULL GROUP BY {keys}")
        sql = (f"SELECT {key_columns('e', key)}, unnest(e.qtc_row) FROM ({extreme}) e "
               f"WHERE len(e.qtc_best) = 1 OR e.qtc_best[1] <> e.qtc_best[2]")
        return lo.add("row", "row", key, sql, CARD_DEMAND, f"{self.name} (ties=unique)", fence=True)

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

    def lower(self, lo, call, row):
        base = lo.relation(call.args[0])
        key = lo.keyed(base.key, lo.fp(call.args[1]))
        frm = lo.row_from(base, key)
        value = lo.scalar(call.args[1], row=base)
        lo.with_scalar(frm, value)
        keys = key_columns("c", key)
        # Consecutive steps with one value share step - (its position among that value's steps).
        inner = (f"SELECT {keys}, {value.sql} AS value, t.step AS step, t.step - row_number() OVER "
                 f"(PARTITION BY {keys}, {value.sql} ORDER BY t.step) AS qtc_group {frm.render()}")
        outer_keys = ", ".join(["episode_id", *map(pcol, key)])
        sql = (f"SELECT {outer_keys}, value, min(step) AS start, max(step) AS \"end\", count(*) AS length "
               f"FROM ({inner}) GROUP BY {outer_keys}, value, qtc_group")
        name = lo.add("runs", "relation", key, sql, CARD_DEMAND if key else CARD_N, "runs", fence=True)
        return RelRef(name, key, call.ty, (("start", False),))

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


# The rows of `groups(rel, value[, counted])`, after its `value` column: a group stands at the step its
# value first occurred, so it sorts, filters and lists (`sequence`) by first occurrence like any event.
GROUPS_COLUMNS = (("step", T.STEP), ("last_step", T.STEP), ("count", T.INTEGER))


class Groups(Function):
    """One row per distinct non-null value of an expression over a relation: the first and last step
    among the rows that have it, how many they are, and with a third argument how many different
    non-null values that expression takes among them (CONVENTIONS.md, Groups). A winner is then
    `argmax(groups(...), ...)`."""
    name, arity, per_row_from = "groups", (2, 3), 1
    usage = "groups(relation, value[, counted]) -> rows (value, step, last_step, count[, different])"

    def type(self, c, call, types):
        if not self.relation_arg(c, call, types):
            return None
        if not self.need(c, call, 0, types[0].has_step, "a relation with a step column", types[0]):
            return None
        for position in range(1, len(types)):
            if not self.need(c, call, position, isinstance(types[position], T.Scalar) and types[position] != T.NULL,
                             "a value per row", types[position]):
                return None
        different = (("different", T.INTEGER),) if len(types) == 3 else ()
        return T.Relation("groups", (("value", types[1]), *GROUPS_COLUMNS, *different), has_step=True)

    def lower(self, lo, call, row):
        base = lo.relation(call.args[0])
        key = lo.keyed(base.key, *(lo.fp(arg) for arg in call.args[1:]))
        frm = lo.row_from(base, key)
        value = lo.scalar(call.args[1], row=base)
        counted = lo.scalar(call.args[2], row=base) if len(call.args) == 3 else S("NULL")
        lo.with_scalar(frm, value)
        lo.with_scalar(frm, counted)
        keys = key_columns("c", key)
        inner = (f"SELECT {keys}, {value.sql} AS value, t.step AS step, {counted.sql} AS qtc_counted "
                 f"{frm.render()}")
        outer_keys = ", ".join(["episode_id", *map(pcol, key)])
        different = ", count(DISTINCT qtc_counted) AS different" if len(call.args) == 3 else ""
        sql = (f"SELECT {outer_keys}, value, min(step) AS step, max(step) AS last_step, count(*) AS count"
               f"{different} FROM ({inner}) WHERE value IS NOT NULL GROUP BY {outer_keys}, value")
        name = lo.add("groups", "relation", key, sql, CARD_DEMAND if key else CARD_N, "groups", fence=True)
        return RelRef(name, key, call.ty, (("step", False),))

    def reference(self, ev, call, scope):
        groups: dict = {}
        for base_row in ev.value(call.args[0], scope).rows:
            row_scope = scope.with_row(base_row)
            value = ev.value(call.args[1], row_scope)
            if value is None:
                continue
            group = groups.setdefault(hashable(value), {"value": plain(value), "steps": [], "counted": set()})
            group["steps"].append(base_row["step"])
            if len(call.args) == 3 and (counted := ev.value(call.args[2], row_scope)) is not None:
                group["counted"].add(hashable(counted))
        rows = []
        for group in groups.values():
            row = {"value": group["value"], "step": min(group["steps"]), "last_step": max(group["steps"]),
                   "count": len(group["steps"])}
            if len(call.args) == 3:
                row["different"] = len(group["counted"])
            rows.append(row)
        return Rel(rows, [("step", False)], call.ty)


FUNCTIONS = (
    Count(), Exists(),
    Nth("first", "first(relation) -> its first row in sort order", k=1),
    Nth("last", "last(relation) -> its last row in sort order", k=-1),
    Nth("nth", "nth(relation, k) -> the k-th row (k < 0 counts from the end)"),
    ArgExtreme("argmax", max, "DESC"), ArgExtreme("argmin", min, "ASC"),
    Runs(), Groups(),
)
