"""Expressions to keyed relations: scalars, relations, bags and rows of a template, lowered once each.

The key of whatever an expression computes is the set of parameters it reads (its free parameters,
through the lets it names). A relation, row or aggregate is computed for the distinct bindings of its
key that are asked for (its demand: the sampled bindings, or the bindings of earlier parameters while
parameters are enumerated), never for the product; a scalar reads the keyed nodes it needs through
joins on the key, so no correlated subquery is ever emitted. The rows a condition picks are read by
the node that reads them (an aggregate, a domain, a bag; a relation node holds them where they are
read as rows: the base of another condition, a row function), and a column of the k-th row is an
element of a list aggregated over them, beside their count.
"""

from __future__ import annotations

import re

from qtc.dsl import ast as A
from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.dsl.ast import walk
from qtc.dsl.check import CheckedTemplate
from qtc.dsl.conventions import ORDINALS, words_sql
from qtc.dsl.functions import FUNCTIONS
from qtc.dsl.functions.rows import Nth
from qtc.dsl.sql import ident, sql_literal, sql_string

from .nodes import CARD_DEMAND, CARD_N, CARD_NW, CARD_PRODUCT, Node, Unsupported
from .sql import SCOPE, Bag, From, RelRef, S, combine, cut_name, key_columns, key_match, pcol

# Tables whose rows are one per step, so that (episode, step) finds the row a token index row belongs to.
ONE_ROW_PER_STEP = ("steps",)
WORD = re.compile(r"\w+")


class ExprLowerer:
    def __init__(self, checked: CheckedTemplate):
        self.checked = checked
        self.template = checked.template
        self.param_order = [p.name for p in self.template.params]
        self.lets = {let.name: let for let in self.template.lets}
        self.nodes: list[Node] = []
        self.tables: dict[str, schema.Table] = {"episodes": schema.EPISODES}
        self.source: str | None = None  # the node whose distinct bindings are the demand of keyed nodes
        self._fp: dict[int, frozenset[str]] = {}
        self._cache: dict[tuple, object] = {}
        self._aggregates: dict[str, tuple[From, list[tuple[str, str]]]] = {}
        self._counter = 0
        self._by_body: dict[tuple[str, str], Node] = {}
        self._by_name: dict[str, Node] = {}

    # ---- nodes ----
    def fresh(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def add(self, prefix: str, op: str, key: tuple[str, ...], sql: str, card: str, note: str = "",
            fence: bool = False) -> str:
        """A node, or the existing node with the same body (common subexpressions are computed once)."""
        same = self._by_body.get((op, sql))
        if same is not None:
            same.fence = same.fence or fence
            return same.name
        words = set(WORD.findall(sql))  # a node is an input where its name is a whole word of the SQL
        inputs = tuple(n.name for n in self.nodes if n.name in words)
        return self.register(Node(self.fresh(prefix), op, key, sql, inputs, card, note, fence))

    def register(self, node: Node) -> str:
        self.nodes.append(node)
        self._by_body[node.op, node.sql] = self._by_name[node.name] = node
        return node.name

    def node_key(self, name: str) -> tuple[str, ...]:
        return self._by_name[name].key

    def node_card(self, name: str) -> str:
        return self._by_name[name].card

    def keyed(self, *sets) -> tuple[str, ...]:
        wanted = set().union(*sets)
        return tuple(p for p in self.param_order if p in wanted)

    def context(self, key: tuple[str, ...]) -> str:
        """The distinct bindings of `key` asked for: the episodes alone when the key is empty."""
        if not key:
            return SCOPE
        if self.source is None:
            raise Unsupported("a keyed value outside any binding context")
        source = self._by_name[self.source]
        if source.op in ("sample", "component") and source.card != CARD_PRODUCT and set(key) == set(source.key):
            return self.source  # distinct bindings already: the demand of all their parameters is themselves
        cached = ("demand", self.source, key)
        if cached not in self._cache:
            cols = ", ".join(["episode_id", *map(pcol, key)])
            self._cache[cached] = self.add("dem", "demand", key, f"SELECT DISTINCT {cols} FROM {self.source}",
                                           CARD_DEMAND, f"bindings of {', '.join(key)} asked for", fence=True)
        return self._cache[cached]

    def join_dep(self, name: str) -> str:
        return f"LEFT JOIN {name} ON {key_match(name, self.node_key(name))}"

    def with_scalar(self, frm: From, s: S) -> From:
        frm.add(*(self.join_dep(d) for d in s.deps), *s.lookups)
        return frm

    def table(self, table: schema.Table) -> str:
        self.tables[table.name] = table
        return cut_name(table)

    # ---- free parameters ----
    def fp(self, e: A.Expr | None) -> frozenset[str]:
        if e is None:
            return frozenset()
        if id(e) not in self._fp:
            found = set()
            for node in walk(e):
                if isinstance(node, A.ParamRef):
                    found.add(node.name)
                elif isinstance(node, A.Name) and node.ref and node.ref[0] == "let":
                    found |= self.fp(self.lets[node.name].expr)
            self._fp[id(e)] = frozenset(found)
        return self._fp[id(e)]

    # ---- relations ----
    def relation(self, e: A.Expr) -> RelRef:
        if isinstance(e, A.Name) and e.ref[0] == "table":
            table: schema.Table = e.ref[1]
            return RelRef(self.table(table), (), e.ty, (("step", False),) if e.ty.has_step else ())
        if isinstance(e, A.Name) and e.ref[0] == "let":
            return self._once(("let", e.name), lambda: self.relation(self.lets[e.name].expr))
        if isinstance(e, A.Where):
            return self._where(e)
        if isinstance(e, A.Sort):
            base = self.relation(e.base)
            return RelRef(base.source, base.key, base.rtype, tuple((k.expr, k.descending) for k in e.keys))
        if isinstance(e, A.Call):
            return FUNCTIONS[e.function].lower(self, e, None)
        raise Unsupported(f"relation {type(e).__name__}")

    def _once(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def row_from(self, rel: RelRef, key: tuple[str, ...]) -> From:
        """The rows of `rel` for each binding of `key` (a superset of its own key): context c, row t."""
        frm = From(self.context(key), key)
        frm.add(f"JOIN {rel.source} t ON {key_match('t', rel.key)}")
        return frm

    def rows_of(self, e: A.Expr, key: tuple[str, ...] = ()) -> tuple[From, RelRef]:
        """The rows `t` of a relation expression for each binding of `key` and the parameters it reads
        (the context `c`), and its relation. The rows a condition picks are read where they are picked,
        by an aggregate, a domain or a bag: no relation node holding them for each reader to read."""
        where = self.lets[e.name].expr if isinstance(e, A.Name) and e.ref[0] == "let" else e
        if isinstance(where, A.Where):
            frm, base = self._where_from(where, key)
            return frm, RelRef(base.source, frm.key, base.rtype, base.order)
        rel = self.relation(e)
        return self.row_from(rel, self.keyed(key, rel.key)), rel

    def columns(self, rel: RelRef, alias: str = "t") -> str:
        return ", ".join(f"{alias}.{ident(name)}" for name, _ in rel.rtype.columns)

    def _where(self, e: A.Where) -> RelRef:
        frm, base = self._where_from(e, ())
        name = self.add("rel", "relation", frm.key, f"SELECT {key_columns('c', frm.key)}, {self.columns(base)} "
                        f"{frm.render()}", CARD_DEMAND if frm.key else CARD_N, f"{base.rtype.name} where ...", fence=True)
        return RelRef(name, frm.key, base.rtype, base.order)

    def _where_from(self, e: A.Where, key: tuple[str, ...]) -> tuple[From, RelRef]:
        """The rows `t` of `base | where condition` for each binding of `key` and the parameters they read
        (the context `c`), and the base relation."""
        return self.rows_where(e.base, A.conjuncts(e.condition), key)

    def rows_where(self, e: A.Expr, conjuncts: list[A.Expr], key: tuple[str, ...] = ()) -> tuple[From, RelRef]:
        """The rows `t` of the relation `e` where every one of `conjuncts` holds, for each binding of `key`
        and the parameters they read (the context `c`), and the relation."""
        base = self.relation(e)
        key = self.keyed(key, base.key, *map(self.fp, conjuncts))
        frm = From(self.context(key), key)
        driving = next((c for c in conjuncts if self._token_driven(base, c)), None)
        if driving is not None:
            # mentions(text, $kw) as a join with the token index: only the steps using the word are read.
            column, word = driving.args[0].name, self.scalar(driving.args[1], row=None)
            tokens = self.token_index(base.rtype.name, column)
            self.with_scalar(frm, word)
            frm.add(f"JOIN {tokens} k ON k.episode_id = c.episode_id AND k.w = lower({word.sql})",
                    f"JOIN {base.source} t ON {key_match('t', base.key)} AND t.step = k.step")
            conjuncts = [c for c in conjuncts if c is not driving]
        elif (bounds := self._step_bounds(conjuncts)) is not None:
            # step in low..high as a join on the steps of each binding's range (the condition stays): a join
            # on the episode alone would test every step against every binding. Clamped to the steps there are.
            low, high = bounds
            span = self.add("span", "index", (), f"SELECT episode_id, min(step) AS qtc_first, max(step) AS qtc_last "
                            f"FROM {base.source} GROUP BY episode_id", CARD_N, "first and last step", fence=True)
            steps = (f"range(greatest(CAST({low.sql} AS BIGINT), s.qtc_first), "
                     f"least(CAST({high.sql} AS BIGINT), s.qtc_last) + 1)")
            frm = From(f"(SELECT c.*, unnest({steps}) AS qtc_step FROM {frm.context} c "
                       f"JOIN {span} s ON s.episode_id = c.episode_id)", key)
            frm.add(f"JOIN {base.source} t ON {key_match('t', base.key)} AND t.step = c.qtc_step")
        else:
            frm.add(f"JOIN {base.source} t ON {key_match('t', base.key)}")
        for conjunct in conjuncts:
            s = self.scalar(conjunct, row=base)
            self.with_scalar(frm, s)
            frm.wheres.append(s.sql)
        return frm, base

    def _step_bounds(self, conjuncts: list[A.Expr]) -> tuple[S, S] | None:
        """The bounds of a conjunct `step in low..high` whose bounds read the bindings alone (no column, no
        other node)."""
        for e in conjuncts:
            if (isinstance(e, A.In) and not e.negated and isinstance(e.container, A.Range) and is_step_column(e.item)
                    and not _reads_columns(e.container)):
                low, high = self.scalar(e.container.low, row=None), self.scalar(e.container.high, row=None)
                if not (low.deps or low.lookups or high.deps or high.lookups):
                    return low, high
        return None

    def _token_driven(self, base: RelRef, e: A.Expr) -> bool:
        return (isinstance(e, A.Call) and e.function == "mentions" and base.rtype.name in ONE_ROW_PER_STEP
                and _is_column(e.args[0]) and not _reads_columns(e.args[1]))

    def token_lookup(self, text: A.Expr, word: A.Expr, row: RelRef | None) -> tuple[str, S] | None:
        """Where `text` is a column of the row `row` of a table with one row per step: the token index
        row of (that step, the word) joined onto the row. Returns its count column and the word (which
        carries the join); else None."""
        if row is None or not _is_column(text) or row.rtype.name not in ONE_ROW_PER_STEP:
            return None
        value = self.scalar(word, row)
        tokens = self.token_index(row.rtype.name, text.name)
        join_key = ("lookup", tokens, value.sql)
        if join_key not in self._cache:
            alias = self.fresh("k")
            self._cache[join_key] = (alias, f"LEFT JOIN {tokens} {alias} ON {alias}.episode_id = t.episode_id "
                                            f"AND {alias}.step = t.step AND {alias}.w = lower({value.sql})")
        alias, join = self._cache[join_key]
        return f"{alias}.n", S(value.sql, value.deps, (*value.lookups, join))

    def step_table_of(self, e: A.Expr) -> str | None:
        """The table's name where `e` is a column of a whole table with steps (`steps.observation`)."""
        if (isinstance(e, A.Field) and isinstance(e.base, A.Name) and e.base.ref[0] == "table"
                and e.base.ref[1].has_step):
            return e.base.ref[1].name
        return None

    def token_index(self, table: str, column: str) -> str:
        """Every word of a text column, once per (episode, step, word), with how often it occurs there."""
        source = self.table(schema.tables_for(self.checked.env)[table])
        sql = (f"SELECT s.episode_id, s.step, w, count(*) AS n FROM (SELECT s.episode_id, s.step, "
               f"unnest({words_sql('s.' + ident(column))}) AS w FROM {source} s SEMI JOIN {SCOPE} USING (episode_id)) s "
               f"GROUP BY ALL")
        return self.add("tok", "index", (), sql, CARD_NW, f"words of {table}.{column}", fence=True)

    def per_argument_values(self, row: RelRef, key: tuple[str, ...], args: list[S], call, note: str) -> S:
        """`call(columns)` (SQL over one column per argument, after the episode's) computed once per
        distinct tuple of argument values over the rows of `row` for the bindings of `key`, and read by
        a lookup join on the arguments. A spatial primitive is a Python call a row: the rows of a range
        that many bindings share (a step asked for every binding whose range holds it), and a value a
        require and a let both read, are then asked once."""
        frm = self.row_from(row, key)
        for arg in args:
            self.with_scalar(frm, arg)
        names = [f"qtc_a{i}" for i in range(len(args))]
        asked = ", ".join(f"{arg.sql} AS {name}" for arg, name in zip(args, names))
        node = self.add("values", "values", (), f"SELECT *, {call(['episode_id', *names])} AS v FROM "
                        f"(SELECT DISTINCT c.episode_id, {asked} {frm.render()})", CARD_DEMAND, note, fence=True)
        match = " AND ".join(f"{{0}}.{name} = {arg.sql}" for arg, name in zip(args, names))
        join_key = ("values", node, match)
        if join_key not in self._cache:
            alias = self.fresh("v")
            self._cache[join_key] = (alias, f"LEFT JOIN {node} {alias} ON {alias}.episode_id = c.episode_id AND "
                                            f"{match.format(alias)}")
        alias, join = self._cache[join_key]
        found = combine(f"{alias}.v", *args)
        return S(found.sql, found.deps, (*found.lookups, join))

    # ---- rows ----
    def row(self, e: A.Expr) -> str:
        """A node with at most one row per binding of its key."""
        if isinstance(e, A.Name) and e.ref[0] == "let":
            return self._once(("let", e.name), lambda: self.row(self.lets[e.name].expr))
        if isinstance(e, A.Index):
            rel = self.relation(e.base)
            key = self.keyed(rel.key, self.fp(e.index))
            frm = self.row_from(rel, key)
            index = self.scalar(e.index, row=None)
            self.with_scalar(frm, index)
            frm.wheres.append(f"t.step = {index.sql}")
            return self.add("row", "row", key, f"SELECT {key_columns('c', key)}, {self.columns(rel)} {frm.render()}",
                            CARD_DEMAND, "the row at a step")
        if isinstance(e, A.Call):
            return FUNCTIONS[e.function].lower(self, e, None)
        raise Unsupported(f"row {type(e).__name__}")

    def order_sql(self, rel: RelRef, reverse: bool = False) -> str:
        """The total order of a relation's rows: its keys, then every column (nothing left to chance)."""
        named = {key for key, _ in rel.order if isinstance(key, str)}
        keys = list(rel.order) + [(name, False) for name, ty in rel.rtype.columns
                                  if name not in named and not isinstance(ty, T.ListOf)]
        parts = []
        for key, descending in keys:
            if isinstance(key, str):
                sql = f"t.{ident(key)}"
            else:
                s = self.scalar(key, row=rel)
                if s.deps or s.lookups:
                    raise Unsupported("a sort key that reads another relation")
                sql = s.sql
            parts.append(f"{sql} {'DESC' if descending != reverse else 'ASC'} NULLS LAST")
        return ", ".join(parts)

    # ---- bags ----
    def bag(self, e: A.Expr, key: tuple[str, ...] = ()) -> Bag:
        key = self.keyed(key, self.fp(e))
        if isinstance(e, A.Field) and isinstance(e.base, A.Name) and e.base.ref == ("vocab", None):
            frm = From(self.context(key), key)
            episodes, vocab = self.table(schema.EPISODES), self.table(schema.VOCAB)
            frm.add(f"JOIN {episodes} qg ON qg.episode_id = c.episode_id",
                    f"JOIN {vocab} t ON t.game = qg.game AND t.kind = {sql_string(e.name)}")
            return Bag(frm, "t.value", "NULL", key)
        if isinstance(e, A.Field):
            frm, rel = self.rows_of(e.base, key)
            return Bag(frm, f"t.{ident(e.name)}", "t.step" if rel.rtype.has_step else "NULL", key)
        if isinstance(e, A.Name) and e.ref[0] == "let":
            return self.bag(self.lets[e.name].expr, key)
        if isinstance(e, A.Binary) and e.op == "-":
            left = self.bag(e.left, key)
            right = self.domain(e.right)
            # v NOT IN (the right side's non-null values): an anti join on the key and the value.
            left.frm.add(f"ANTI JOIN {right} ON {key_match(right, self.node_key(right))} AND {right}.v = {left.v}")
            left.frm.wheres.append(f"{left.v} IS NOT NULL")
            return left
        if isinstance(e, A.Call):
            return self.bag_of_node(FUNCTIONS[e.function].lower(self, e, None), key)
        raise Unsupported(f"bag {type(e).__name__}")

    def bag_of_node(self, name: str, key: tuple[str, ...]) -> Bag:
        frm = From(self.context(key), key)
        frm.add(f"JOIN {name} t ON {key_match('t', self.node_key(name))}")
        return Bag(frm, "t.v", "t.s", key)

    # ---- domains ----
    def domain(self, e: A.Expr) -> str:
        """The distinct non-null values a parameter draws from, keyed by the parameters the domain reads:
        also the values a bag difference or a join on values reads (one node where a template draws from
        the same column it takes away, `vocab.material - view.material`)."""
        key = self.keyed(self.fp(e))
        if isinstance(e, A.ListLiteral) and (e.ty == T.ListOf(T.ORDINAL) or all(isinstance(i, A.Literal) for i in e.items)):
            ordinal = e.ty == T.ListOf(T.ORDINAL)
            values = ", ".join(f"({ORDINALS[i.name] if ordinal else sql_literal(i.value)})" for i in e.items)
            inner = f"SELECT c.episode_id, t.v FROM {SCOPE} c, (VALUES {values}) t(v)"
        elif isinstance(e, A.Range) or isinstance(e.ty, T.ListOf):
            s = self.scalar(e, row=None)
            frm = self.with_scalar(From(self.context(key), key), s)
            inner = f"SELECT {key_columns('c', key)}, unnest({s.sql}) AS v {frm.render()}"
        elif (bounded := self._step_bounded(e, key)) is not None:
            # Distinct and not null already: a binding joins each value's one row of first and last steps.
            return self.add("dom", "domain", key, bounded, CARD_N, "parameter domain", fence=True)
        else:
            bag = self.bag(e)
            inner = f"SELECT {key_columns('c', bag.key)}, {bag.v} AS v {bag.frm.render()}"
        cols = ", ".join(["episode_id", *map(pcol, key)])
        return self.add("dom", "domain", key, f"SELECT DISTINCT {cols}, v FROM ({inner}) WHERE v IS NOT NULL",
                        CARD_N, "parameter domain", fence=True)

    def _step_bounded(self, e: A.Expr, key: tuple[str, ...]) -> str | None:
        """`(rel | where step < BOUND).column` (or <=, >, >=) with BOUND reading parameters only: the
        values whose first step (last step, for > and >=) passes the bound. One pass over the table
        finds each value's first and last step, so the domain costs the bindings it has, not a scan of
        every earlier row for each binding of the bound (which grows as the square of the steps)."""
        if not (isinstance(e, A.Field) and isinstance(e.base, A.Where) and isinstance(e.base.condition, A.Binary)):
            return None
        condition = e.base.condition
        op, step, bound = condition.op, condition.left, condition.right
        if is_step_column(bound):
            op, step, bound = FLIPPED.get(op), bound, step
        if op not in FLIPPED or not is_step_column(step) or _reads_columns(bound) or not self.fp(bound):
            return None
        base = self.relation(e.base.base)
        if base.key or not base.rtype.has_step:
            return None
        column = ident(e.name)
        extremes = self.add("steps_of", "index", (), f"SELECT episode_id, {column} AS v, min(step) AS first_step, "
                                                   f"max(step) AS last_step FROM {base.source} WHERE {column} IS NOT "
                                                   f"NULL GROUP BY ALL", CARD_N,
                            f"first and last step of each {base.rtype.name}.{e.name}", fence=True)
        value = self.scalar(bound, row=None)
        frm = self.with_scalar(From(self.context(key), key), value)
        extreme = "first_step" if op in ("<", "<=") else "last_step"
        frm.add(f"JOIN {extremes} x ON x.episode_id = c.episode_id AND x.{extreme} {op} {value.sql}")
        return f"SELECT {key_columns('c', key)}, x.v AS v {frm.render()}"

    # ---- aggregates: one node per FROM clause, every aggregate over it a column ----
    def aggregate(self, frm: From, expr: str) -> S:
        body = frm.render()
        name = next((n for n, (f, _) in self._aggregates.items() if f.render() == body), None)
        if name is None:
            name = self.add("agg", "aggregate", frm.key, f"-- aggregates over {body}", CARD_DEMAND)
            self._aggregates[name] = (frm, [])
        columns = self._aggregates[name][1]
        column = next((c for c, e in columns if e == expr), None)
        if column is None:
            column = f"a{len(columns) + 1}"
            columns.append((column, expr))
        return S(f"{name}.{column}", (name,))

    def finish(self) -> None:
        """Write each aggregate node's SQL, now that every aggregate over it is known."""
        for node in self.nodes:
            if node.name in self._aggregates:
                frm, columns = self._aggregates[node.name]
                aggs = ", ".join(f"{e} AS {c}" for c, e in columns)
                node.sql = f"SELECT {key_columns('c', frm.key)}, {aggs} {frm.render()} GROUP BY ALL"

    # ---- scalars ----
    def scalar(self, e: A.Expr, row: RelRef | None) -> S:
        """`e` over the context `c`, and over the rows `t` of `row` where it is given (a where condition,
        a per-row value)."""
        method = getattr(self, f"_scalar_{type(e).__name__}", None)
        if method is None:
            raise Unsupported(f"scalar {type(e).__name__}")
        return method(e, row)

    def _scalar_Literal(self, e: A.Literal, row):
        return S(sql_literal(e.value))

    def _scalar_ListLiteral(self, e: A.ListLiteral, row):
        items = [self.scalar(item, row) for item in e.items]
        return combine("[" + ", ".join(item.sql for item in items) + "]", *items)

    def _scalar_ParamRef(self, e: A.ParamRef, row):
        return S(f"c.{pcol(e.name)}")

    def _scalar_Name(self, e: A.Name, row):
        kind = e.ref[0]
        if kind == "column" and row:
            return S(f"t.{ident(e.name)}")
        if kind == "let" and isinstance(self.checked.let_types[e.name], (T.Scalar, T.ListOf)):
            name = self.scalar_let(e.name)
            return S(f"{name}.v", (name,))
        raise Unsupported(f"name {e.name} ({kind})")

    def scalar_let(self, name: str) -> str:
        def build():
            expr = self.lets[name].expr
            key = self.keyed(self.fp(expr))
            s = self.scalar(expr, row=None)
            frm = self.with_scalar(From(self.context(key), key), s)
            return self.add("let", "let", key, f"SELECT {key_columns('c', key)}, {s.sql} AS v {frm.render()}",
                            CARD_DEMAND, f"let {name}", fence=True)
        return self._once(("let", name), build)

    def _scalar_Range(self, e: A.Range, row):
        low, high = self.scalar(e.low, row), self.scalar(e.high, row)
        return combine(f"range(CAST({low.sql} AS BIGINT), CAST({high.sql} AS BIGINT) + 1)", low, high)

    def _scalar_Field(self, e: A.Field, row):
        if isinstance(e.base.ty, T.Row):
            picked = self._picked_column(e)
            if picked is not None:
                return picked
            name = self.row(e.base)
            return S(f"{name}.{ident(e.name)}", (name,))
        if e.base.ty == T.DISPLACEMENT:
            base = self.scalar(e.base, row)
            return combine(f"({base.sql}).{e.name}", base)
        raise Unsupported("a field of a relation as a scalar")

    def _picked_column(self, e: A.Field) -> S | None:
        """`nth(rel, k).column` (and first, last): the column's values over the relation's rows in its
        order, as one list per binding of the relation's key, indexed by k (list_extract is nth's rule:
        from the end for k < 0, null past either end or for k = 0). The list is a column of the
        relation's aggregate node, with its count and every other aggregate over the same rows: no rows
        ranked, no row node. None for another row, or an order that reads another relation."""
        call = e.base
        while isinstance(call, A.Name) and call.ref[0] == "let":
            call = self.lets[call.name].expr
        if not (isinstance(call, A.Call) and isinstance(nth := FUNCTIONS[call.function], Nth)):
            return None
        frm, rel = self.rows_of(call.args[0])
        try:
            order = self.order_sql(rel)
        except Unsupported:
            return None
        values = self.aggregate(frm, f"list(t.{ident(e.name)} ORDER BY {order})")
        k = S(str(nth.k)) if nth.k is not None else self.scalar(call.args[1], None)
        return combine(f"list_extract({values.sql}, {k.sql})", values, k)

    def _scalar_Index(self, e: A.Index, row):
        base, index = self.scalar(e.base, row), self.scalar(e.index, row)
        return combine(f"list_extract({base.sql}, {index.sql})", base, index)

    def _scalar_Unary(self, e: A.Unary, row):
        operand = self.scalar(e.operand, row)
        return combine(f"(NOT {operand.sql})" if e.op == "not" else f"(-{operand.sql})", operand)

    def _scalar_Binary(self, e: A.Binary, row):
        left, right = self.scalar(e.left, row), self.scalar(e.right, row)
        op = {"==": "=", "!=": "<>", "and": "AND", "or": "OR"}.get(e.op, e.op)
        return combine(f"({left.sql} {op} {right.sql})", left, right)

    def _scalar_IsNull(self, e: A.IsNull, row):
        item = self.scalar(e.item, row)
        return combine(f"({item.sql} IS {'NOT ' if e.negated else ''}NULL)", item)

    def _scalar_In(self, e: A.In, row):
        item = self.scalar(e.item, row)
        negate = "NOT " if e.negated else ""
        container = e.container
        if isinstance(container, A.Range):
            low, high = self.scalar(container.low, row), self.scalar(container.high, row)
            return combine(f"({negate}({item.sql} BETWEEN {low.sql} AND {high.sql}))", item, low, high)
        if isinstance(container.ty, T.Bag):
            # x IN (subquery) as SQL reads it: false for no values, null for a null x or a null among them.
            bag = self.bag(container)
            members = self.aggregate(bag.frm, f"list({bag.v}) FILTER (WHERE {bag.v} IS NOT NULL)")
            nulls = self.aggregate(bag.frm, f"bool_or({bag.v} IS NULL)")
            test = (f"CASE WHEN {members.sql} IS NULL AND {nulls.sql} IS NULL THEN FALSE WHEN {item.sql} IS NULL "
                    f"THEN NULL WHEN list_contains({members.sql}, {item.sql}) THEN TRUE WHEN {nulls.sql} THEN NULL "
                    f"ELSE FALSE END")
            return combine(f"({negate}({test}))", item, members, nulls)
        values = self.scalar(container, row)
        return combine(f"({negate}list_contains({values.sql}, {item.sql}))", item, values)

    def _scalar_Call(self, e: A.Call, row):
        return FUNCTIONS[e.function].lower(self, e, row)


# A comparison read the other way round: `b > step` is `step < b`.
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def is_step_column(e: A.Expr) -> bool:
    return _is_column(e) and e.name == "step"


def _is_column(e: A.Expr) -> bool:
    return isinstance(e, A.Name) and e.ref[0] == "column"


def _reads_columns(e: A.Expr) -> bool:
    return any(_is_column(node) for node in walk(e))
