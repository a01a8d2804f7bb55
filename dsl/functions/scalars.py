"""Functions of single values: the length of a list, the absolute value of a number, and a displacement
built from its two offsets. Each is null when an argument is null."""

from __future__ import annotations

from qtc.dsl import types as T
from qtc.dsl.ir.sql import combine

from .record import Function


class Len(Function):
    name, arity, usage = "len", (1,), "len(list)"

    def type(self, c, call, types):
        return T.INTEGER if self.need(c, call, 0, isinstance(types[0], T.ListOf), "a list", types[0]) else None

    def lower(self, lo, call, row):
        value = lo.scalar(call.args[0], row)
        return combine(f"len({value.sql})", value)

    def reference(self, ev, call, scope):
        value = ev.value(call.args[0], scope)
        return None if value is None else len(value)


class Abs(Function):
    name, arity, usage = "abs", (1,), "abs(number)"

    def type(self, c, call, types):
        return types[0] if self.need(c, call, 0, types[0] in T.NUMERIC, "a number", types[0]) else None

    def lower(self, lo, call, row):
        value = lo.scalar(call.args[0], row)
        return combine(f"abs({value.sql})", value)

    def reference(self, ev, call, scope):
        value = ev.value(call.args[0], scope)
        return None if value is None else abs(value)


class Displacement(Function):
    name, arity, usage = "displacement", (2,), "displacement(dx, dy)"

    def type(self, c, call, types):
        for position in (0, 1):
            if not self.need(c, call, position, types[position] in (T.INTEGER, T.NULL), "an integer", types[position]):
                return None
        return T.DISPLACEMENT

    def lower(self, lo, call, row):
        dx, dy = (lo.scalar(a, row) for a in call.args)
        return combine(f"{{'dx': CAST({dx.sql} AS BIGINT), 'dy': CAST({dy.sql} AS BIGINT)}}", dx, dy)

    def reference(self, ev, call, scope):
        dx, dy = (ev.value(a, scope) for a in call.args)
        return None if dx is None or dy is None else {"dx": int(dx), "dy": int(dy)}


FUNCTIONS = (Len(), Abs(), Displacement())
