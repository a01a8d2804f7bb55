"""The spatial primitives as functions: one record per declaration of dsl/primitives.py, which gives
its name, arguments, options and result type. The SQL calls the DuckDB function `qtc_<name>` that
runtime/spatial/udf.py registers; the reference reading is dsl/reference/spatial.py. Both are null
when an argument is null."""

from __future__ import annotations

from qtc.dsl import types as T
from qtc.dsl.ir.sql import combine
from qtc.dsl.primitives import PRIMITIVES, Primitive
from qtc.dsl.sql import sql_string

from .record import Function


class SpatialFunction(Function):
    def __init__(self, primitive: Primitive):
        self.primitive = primitive
        self.name, self.usage, self.options = primitive.name, primitive.usage, dict(primitive.kwargs)
        self.arity = (len(primitive.args),)

    def type(self, c, call, types):
        primitive = self.primitive
        if c.env not in primitive.envs:
            c.error(call.function_span, f"'{primitive.name}' is a {' and '.join(primitive.envs)} primitive; "
                                        f"this template's env is {c.env}")
            return None
        for position, ((name, wanted), got) in enumerate(zip(primitive.args, types)):
            ok = T.compatible(wanted, got) or isinstance(wanted, T.Scalar) and T.comparable(wanted, got)
            if not self.need(c, call, position, ok, f"{wanted} ({name})", got):
                return None
            c.check_literal_value(call.args[position], wanted)
        return primitive.returns

    def lower(self, lo, call, row):
        # Calls the Python implementation registered in DuckDB (runtime/spatial/udf.py).
        args = [lo.scalar(a, row) for a in call.args]
        options = [sql_string(call.kwargs[name].name) for name in self.options]

        def called(columns: list[str]) -> str:
            return f"{self.primitive.sql_name}({', '.join([*columns, *options])})"
        if row is None or not row.key:
            return combine(called(["c.episode_id", *(a.sql for a in args)]), *args)
        # Over the rows of a relation computed for the bindings (a range of steps per binding), once per
        # distinct argument tuple. Over a whole table, the rows a caller reads may be fewer than its rows
        # (a where's step range): computed in place.
        return lo.per_argument_values(row, lo.keyed(row.key, lo.fp(call)), args, called,
                                      f"{self.name} once per distinct argument tuple")

    def reference(self, ev, call, scope):
        args = [ev.value(a, scope) for a in call.args]
        if None in args:
            return None
        options = [call.kwargs[name].name for name in self.options]
        return ev.space(scope).call(self.name, *args, *options)


FUNCTIONS = tuple(SpatialFunction(primitive) for primitive in PRIMITIVES.values())
