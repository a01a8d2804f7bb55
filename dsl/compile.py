"""The compiler: a checked template to one DuckDB SQL statement that anyone can read and run as it is
(`qtc compile --emit-sql`).

The statement computes every candidate of the template for every episode of its env at once, rather
than looping over candidates in Python:

    qtc_horizon                 the horizon N (SQL variable `qtc_horizon`; unset means no horizon)
    h_<table>                   every table the template reads, cut to steps 0..N
    c0                          one row per episode of the template's env
    c1 .. cP                    one parameter each: a lateral join with its domain, then its condition
    sampled                     at most `qtc_max_candidates` bindings per episode (seeded), if set
    l1 .. lL                    one scalar let each, as a column
    answerable                  requires hold and the answer is not null
    adversarial_<p>             false-premise candidates: p drawn from its adversarial domain
    SELECT ...                  both, ordered

Relation- and row-valued lets are expanded where they are used. The horizon cut is the compiler's:
templates never write it. Trace values never enter the SQL text: they are read from the tables; only
the template's own literals are written as SQL literals. A call compiles through its function's record
(dsl/functions/).
The output columns are: episode_id, adversarial, p_<param> for each parameter, l_<let> for each scalar
let, answer, accepted (every correct answer, the answer first), evidence (a sorted list of steps), and
display_<name> (a room's display name) for each room-valued parameter, let and answer.

A call of a spatial primitive (dsl/primitives.py) compiles to a call of the DuckDB function qtc_<name>,
which runtime/spatial/udf.py registers on the connection; the SQL of such a template runs where those
functions are registered (`qtc sql`, or any connection from runtime.store.open_store).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from . import ast as A
from . import schema
from . import types as T
from .check import CheckedTemplate
from .conventions import ORDINALS
from .functions import FUNCTIONS
from .primitives import PRIMITIVES
from .sql import Rel, ident, sql_literal, sql_string
from .visit import Visitor

HORIZON_VARIABLE = "qtc_horizon"
CAP_VARIABLE = "qtc_max_candidates"  # at most this many parameter bindings per episode (unset: all)
SEED_VARIABLE = "qtc_seed"  # which bindings the cap keeps: a seeded hash order, the same on every run
NO_HORIZON = 9223372036854775807


@dataclass
class CompiledTemplate:
    id: str
    env: str
    category: str
    answer_type: str
    difficulty: str | None
    sql: str
    params: dict[str, T.Type]
    lets: dict[str, T.Type]  # the scalar lets, exported as l_<name>
    room_outputs: list[str]  # names with a display_<name> column
    checked: CheckedTemplate


class Compiler(Visitor):
    """Compiles one template. `scalar(e, row_alias)` compiles a value through `visit_<Node>`; `domain`,
    `bag`, `relation` and `row` compile the SELECTs of the other kinds of expression."""

    def __init__(self, checked: CheckedTemplate):
        self.checked = checked
        self.template = checked.template
        self.tables_used: dict[str, schema.Table] = {}
        self.lets = {let.name: let for let in self.template.lets}
        self._aliases = itertools.count(1)

    def alias(self) -> str:
        return f"q{next(self._aliases)}"

    # ---- the statement ----
    def compile(self) -> CompiledTemplate:
        t, checked = self.template, self.checked
        ctes: list[tuple[str, str]] = []
        env_filter = "" if checked.env == "any" else f" WHERE env = {sql_string(checked.env)}"
        ctes.append(("c0", f"SELECT episode_id FROM h_episodes{env_filter}"))
        self.tables_used["episodes"] = schema.EPISODES
        ctes += self._param_ctes("c", t.params, adversarial=None)
        ctes.append(("sampled", self._sample(f"c{len(t.params)}")))
        previous = "sampled"
        scalar_lets = {n: ty for n, ty in checked.let_types.items() if isinstance(ty, (T.Scalar, T.ListOf))}
        for number, let in enumerate((l for l in t.lets if l.name in scalar_lets), start=1):
            ctes.append((f"l{number}", f"SELECT c.*, {self.scalar(let.expr, None)} AS {ident('l_' + let.name)} "
                                       f"FROM {previous} c"))
            previous = f"l{number}"
        requires = " AND ".join(f"({self.scalar(r, None)})" for r in t.requires) or "TRUE"
        evidence = self._evidence_sql()
        room_outputs = [p.name for p in t.params if checked.param_types.get(p.name) == T.ROOM]
        room_outputs += [n for n, ty in scalar_lets.items() if ty == T.ROOM]
        accept = f"{self.scalar(t.accept, None)} AS qtc_accept, " if t.accept is not None else ""
        exclude = " EXCLUDE (qtc_accept)" if accept else ""
        ctes.append(("answerable", f"SELECT *{exclude}, {self._accepted_sql()} AS accepted "
                                   f"FROM (SELECT c.*, FALSE AS adversarial, {accept}"
                                   f"{self.scalar(t.answer, None)} AS answer, {evidence} AS evidence "
                                   f"FROM {previous} c WHERE {requires}) c WHERE c.answer IS NOT NULL"))
        parts = ["answerable"]
        for adversarial in t.adversarials:
            prefix = f"a_{adversarial.param}_"
            ctes += self._param_ctes(prefix, t.params, adversarial=adversarial)
            ctes.append((f"{prefix}sampled", self._sample(f"{prefix}{len(t.params)}")))
            last = f"{prefix}sampled"
            nulls = "".join(f", NULL AS {ident('l_' + n)}" for n in scalar_lets)
            name = f"adversarial_{adversarial.param}"
            ctes.append((name, f"SELECT c.*{nulls}, TRUE AS adversarial, NULL AS answer, "
                               f"CAST([] AS BIGINT[]) AS evidence FROM {last} c"))
            parts.append(name)
        displays = "".join(
            f", {self._room_display(ident(('p_' if n in checked.param_types else 'l_') + n))} AS {ident('display_' + n)}"
            for n in room_outputs)
        answer_display = (f", {self._room_display('c.answer')} AS display_answer"
                          if checked.answer_type == "location" else "")
        union = "\n  UNION ALL BY NAME\n  ".join(f"SELECT * FROM {p}" for p in parts)
        ctes.append(("candidates", union))
        order = ", ".join(["episode_id", "adversarial"] + [ident("p_" + p.name) for p in t.params])
        final = (f"SELECT c.*{displays}{answer_display} FROM candidates c ORDER BY {order}")
        horizon = [("qtc_horizon", f"SELECT COALESCE(TRY_CAST(getvariable({sql_string(HORIZON_VARIABLE)}) AS BIGINT), "
                                   f"{NO_HORIZON}) AS n")]
        horizon += [(f"h_{table.sql_name}", self._horizon_cut(table)) for table in self.tables_used.values()]
        body = ",\n".join(f"{name} AS (\n  {sql}\n)" for name, sql in horizon + ctes)
        header = (f"-- qtc template {t.id} ({checked.env}, {checked.category}, answer {checked.answer_type})\n"
                  f"-- from {t.path}; horizon: SET VARIABLE {HORIZON_VARIABLE} = N; (unset: whole episodes)\n"
                  + "".join(f"-- calls Python primitive {call}\n" for call in self._primitive_calls()))
        return CompiledTemplate(t.id, checked.env, checked.category, checked.answer_type, checked.difficulty,
                                f"{header}WITH {body}\n{final};\n", dict(checked.param_types), scalar_lets,
                                room_outputs, checked)

    def _primitive_calls(self) -> list[str]:
        """Where the template calls a spatial primitive: 'qtc_<name>(...) in <clause> (line N)'."""
        calls = []
        for clause, root in self.template.expressions():
            for node in A.walk(root):
                if isinstance(node, A.Call) and node.function in PRIMITIVES:
                    primitive = PRIMITIVES[node.function]
                    arguments = ", ".join(["episode_id", *(n for n, _ in primitive.args), *primitive.kwargs])
                    calls.append(f"{primitive.sql_name}({arguments}) in {clause} (line {node.span.line}); "
                                 f"registered by qtc (runtime/spatial/udf.py)")
        return calls

    def _param_ctes(self, prefix: str, params: list[A.Param], adversarial: A.Adversarial | None):
        ctes = []
        first = "c0"
        for number, param in enumerate(params, start=1):
            previous = first if number == 1 else f"{prefix}{number - 1}"
            domain_expr = adversarial.domain if adversarial and adversarial.param == param.name else param.domain
            domain = self.domain(domain_expr)
            joined = (f"SELECT c.*, d.v AS {ident('p_' + param.name)} FROM {previous} c, "
                      f"LATERAL (SELECT DISTINCT v FROM ({domain}) d WHERE v IS NOT NULL) d")
            condition = f" WHERE {self.scalar(param.condition, None)}" if param.condition is not None else ""
            ctes.append((f"{prefix}{number}", f"SELECT * FROM ({joined}) c{condition}"))
        return ctes

    def _sample(self, bindings: str) -> str:
        """At most `qtc_max_candidates` bindings per episode, chosen by a seeded hash of the bindings.

        The cap applies before lets and answers are computed, which is where the cost is."""
        params = [ident("p_" + p.name) for p in self.template.params]
        key = ", ".join(["c.episode_id", *[f"c.{p}" for p in params],
                         f"COALESCE(getvariable({sql_string(SEED_VARIABLE)}), 0)"])
        order = ", ".join([f"hash({key})", *[f"c.{p}" for p in params]])
        return (f"SELECT * FROM {bindings} c QUALIFY row_number() OVER (PARTITION BY c.episode_id ORDER BY {order}) "
                f"<= COALESCE(TRY_CAST(getvariable({sql_string(CAP_VARIABLE)}) AS BIGINT), {NO_HORIZON})")

    def _horizon_cut(self, table: schema.Table) -> str:
        if table is schema.EPISODES:
            return ("SELECT * REPLACE (least(n_steps, h.n) AS n_steps, "
                    "CASE WHEN n_steps > h.n THEN 'horizon' ELSE ended_by END AS ended_by, "
                    "CASE WHEN death_step <= h.n THEN death_step END AS death_step, "
                    "CASE WHEN death_step <= h.n THEN death_cause END AS death_cause) FROM episodes, qtc_horizon h")
        if table.has_step:
            return f"SELECT * FROM {table.sql_name} WHERE step <= (SELECT n FROM qtc_horizon)"
        return f"SELECT * FROM {table.sql_name}"

    def _room_display(self, value_sql: str) -> str:
        self.tables_used["rooms"] = schema.JERICHO_ROOMS
        return (f"(SELECT r.display_name FROM h_jericho_rooms r "
                f"WHERE r.episode_id = c.episode_id AND r.room = {value_sql})")

    def _accepted_sql(self) -> str:
        """Every correct answer: the answer first, then the other accepted values, sorted."""
        if self.template.accept is None:
            return "[c.answer]"
        return ("list_concat([c.answer], list_sort(list_distinct(list_filter(c.qtc_accept, "
                "lambda a: a IS DISTINCT FROM c.answer))))")

    def _evidence_sql(self) -> str:
        lists = []
        for e in self.template.evidence:
            if isinstance(e, A.Range):
                lists.append(f"range(CAST({self.scalar(e.low, None)} AS BIGINT), "
                             f"CAST({self.scalar(e.high, None)} AS BIGINT) + 1)")
            elif isinstance(e.ty, T.Bag):
                q = self.alias()
                lists.append(f"(SELECT list(CAST({q}.v AS BIGINT)) FROM ({self.bag(e)}) {q})")
            else:
                lists.append(f"[CAST({self.scalar(e, None)} AS BIGINT)]")
        return f"list_sort(list_distinct(flatten([{', '.join(lists)}])))"

    # ---- domains and bags: SELECTs with a value column v and a step column s ----
    def domain(self, e: A.Expr) -> str:
        if isinstance(e, A.ListLiteral) and e.ty == T.ListOf(T.ORDINAL):
            values = ", ".join(f"({ORDINALS[item.name]})" for item in e.items)
            return f"SELECT v, NULL AS s FROM (VALUES {values}) t(v)"
        if isinstance(e, A.ListLiteral):
            values = ", ".join(f"({sql_literal(item.value)})" for item in e.items)
            return f"SELECT v, NULL AS s FROM (VALUES {values}) t(v)"
        if isinstance(e, A.Range):
            return (f"SELECT unnest(range(CAST({self.scalar(e.low, None)} AS BIGINT), "
                    f"CAST({self.scalar(e.high, None)} AS BIGINT) + 1)) AS v, NULL AS s")
        if isinstance(e.ty, T.ListOf):
            return f"SELECT unnest({self.scalar(e, None)}) AS v, NULL AS s"
        return self.bag(e)

    def bag(self, e: A.Expr) -> str:
        if isinstance(e, A.Field) and isinstance(e.base, A.Name) and e.base.ref == ("vocab", None):
            self.tables_used["vocab"] = schema.VOCAB
            self.tables_used["episodes"] = schema.EPISODES
            return (f"SELECT value AS v, NULL AS s FROM h_vocab WHERE kind = {sql_string(e.name)} "
                    f"AND game = (SELECT game FROM h_episodes e WHERE e.episode_id = c.episode_id)")
        if isinstance(e, A.Field):
            rel = self.relation(e.base)
            q = self.alias()
            step = f"{q}.step" if rel.relation.has_step else "NULL"
            return f"SELECT {q}.{ident(e.name)} AS v, {step} AS s FROM ({rel.sql}) {q}"
        if isinstance(e, A.Binary) and e.op == "-":
            q, r = self.alias(), self.alias()
            return (f"SELECT {q}.v, {q}.s FROM ({self.bag(e.left)}) {q} WHERE {q}.v NOT IN "
                    f"(SELECT {r}.v FROM ({self.bag(e.right)}) {r} WHERE {r}.v IS NOT NULL)")
        if isinstance(e, A.Name) and e.ref[0] == "let":
            return self.bag(self.lets[e.name].expr)
        if isinstance(e, A.Call):
            return self.call(e, None)
        raise AssertionError(f"not a bag expression: {e}")

    # ---- relations ----
    def default_order(self, relation: T.Relation) -> list:
        keys = ["step"] if relation.has_step else []
        return [(k, False) for k in keys]

    def order_sql(self, rel: Rel, alias: str, reverse: bool = False) -> str:
        """The total order of a relation's rows: its keys, then every column (so nothing is left to chance)."""
        named = {key for key, _ in rel.order if isinstance(key, str)}
        keys = rel.order + [(name, False) for name, ty in rel.relation.columns
                            if name not in named and not isinstance(ty, T.ListOf)]
        parts = []
        for key, descending in keys:
            sql = f"{alias}.{ident(key)}" if isinstance(key, str) else self.scalar(key, alias)
            parts.append(f"{sql} {'DESC' if descending != reverse else 'ASC'} NULLS LAST")
        return ", ".join(parts)

    def relation(self, e: A.Expr) -> Rel:
        if isinstance(e, A.Name) and e.ref[0] == "table":
            table: schema.Table = e.ref[1]
            self.tables_used[table.name] = table
            return Rel(f"SELECT * FROM h_{table.sql_name} WHERE episode_id = c.episode_id",
                       self.default_order(e.ty), e.ty)
        if isinstance(e, A.Name) and e.ref[0] == "let":
            return self.relation(self.lets[e.name].expr)
        if isinstance(e, A.Where):
            base = self.relation(e.base)
            q = self.alias()
            return Rel(f"SELECT {q}.* FROM ({base.sql}) {q} WHERE {self.scalar(e.condition, q)}",
                       base.order, base.relation)
        if isinstance(e, A.Sort):
            base = self.relation(e.base)
            return Rel(base.sql, [(k.expr, k.descending) for k in e.keys], base.relation)
        if isinstance(e, A.Call):
            return self.call(e, None)
        raise AssertionError(f"not a relation expression: {e}")

    # ---- rows: SELECTs of at most one row ----
    def row(self, e: A.Expr) -> str:
        if isinstance(e, A.Name) and e.ref[0] == "let":
            return self.row(self.lets[e.name].expr)
        if isinstance(e, A.Index):
            rel = self.relation(e.base)
            q = self.alias()
            return f"SELECT {q}.* FROM ({rel.sql}) {q} WHERE {q}.step = {self.scalar(e.index, None)}"
        if isinstance(e, A.Call):
            return self.call(e, None)
        raise AssertionError(f"not a row expression: {e}")

    # ---- scalars ----
    def scalar(self, e: A.Expr, row_alias: str | None) -> str:
        return self.visit(e, row_alias)

    def visit_Literal(self, e: A.Literal, row_alias):
        return sql_literal(e.value)

    def visit_ListLiteral(self, e: A.ListLiteral, row_alias):
        return "[" + ", ".join(sql_literal(i.value) for i in e.items) + "]"

    def visit_ParamRef(self, e: A.ParamRef, row_alias):
        return f"c.{ident('p_' + e.name)}"

    def visit_Name(self, e: A.Name, row_alias):
        kind = e.ref[0]
        if kind == "column":
            return f"{row_alias}.{ident(e.name)}"
        if kind == "let":
            ty = self.checked.let_types[e.name]
            if isinstance(ty, (T.Scalar, T.ListOf)):
                return f"c.{ident('l_' + e.name)}"
        raise AssertionError(f"not a scalar name: {e.name} ({e.ref})")

    def visit_Range(self, e: A.Range, row_alias):
        return (f"range(CAST({self.scalar(e.low, row_alias)} AS BIGINT), "
                f"CAST({self.scalar(e.high, row_alias)} AS BIGINT) + 1)")

    def visit_Field(self, e: A.Field, row_alias):
        if isinstance(e.base.ty, T.Row):
            q = self.alias()
            return f"(SELECT {q}.{ident(e.name)} FROM ({self.row(e.base)}) {q})"
        if e.base.ty == T.DISPLACEMENT:
            return f"({self.scalar(e.base, row_alias)}).{e.name}"
        raise AssertionError(f"not a scalar field: {e}")

    def visit_Index(self, e: A.Index, row_alias):
        # A list, indexed as ordinals count: 1 is the first element, -1 the last; beyond the ends, null.
        return f"list_extract({self.scalar(e.base, row_alias)}, {self.scalar(e.index, row_alias)})"

    def visit_Unary(self, e: A.Unary, row_alias):
        operand = self.scalar(e.operand, row_alias)
        return f"(NOT {operand})" if e.op == "not" else f"(-{operand})"

    def visit_Binary(self, e: A.Binary, row_alias):
        left, right = self.scalar(e.left, row_alias), self.scalar(e.right, row_alias)
        op = {"==": "=", "!=": "<>", "and": "AND", "or": "OR"}.get(e.op, e.op)
        return f"({left} {op} {right})"

    def visit_In(self, e: A.In, row_alias):
        item = self.scalar(e.item, row_alias)
        negate = "NOT " if e.negated else ""
        container = e.container
        if isinstance(container, A.Range):
            low, high = self.scalar(container.low, row_alias), self.scalar(container.high, row_alias)
            return f"({negate}({item} BETWEEN {low} AND {high}))"
        if isinstance(container.ty, T.Bag):
            q = self.alias()
            return f"({negate}({item} IN (SELECT {q}.v FROM ({self.bag(container)}) {q})))"
        return f"({negate}list_contains({self.scalar(container, row_alias)}, {item}))"

    def visit_Call(self, e: A.Call, row_alias):
        return self.call(e, row_alias)

    # ---- calls: whatever their kind, as their function's record writes them ----
    def call(self, e: A.Call, row_alias: str | None):
        return FUNCTIONS[e.function].sql(self, e, row_alias)


def compile_template(checked: CheckedTemplate) -> CompiledTemplate:
    return Compiler(checked).compile()
