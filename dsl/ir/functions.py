"""The IR lowering of each built-in function, keyed by its name.

Aggregates over a relation or a bag become columns of the aggregate node of their FROM clause (so
`count(rel)` in a require and in the answer, and `rel.step` in the evidence, are computed together);
row functions become nodes with at most one row per key; text functions over a steps column read the
token index instead of splitting the text again for every candidate.
"""

from __future__ import annotations

from qtc.dsl import ast as A
from qtc.dsl.conventions import words_sql
from qtc.dsl.functions.text import FIRST_SENTENCE_REGEX
from qtc.dsl.sql import ident, sql_string
from qtc.dsl.primitives import PRIMITIVES

from .exprs import ONE_ROW_PER_STEP, ExprLowerer, RelRef, _is_column
from .nodes import CARD_DEMAND
from .sql import S, combine, key_columns, pcol


# ---- aggregates over a relation ----
def _count(lo: ExprLowerer, e: A.Call, row) -> S:
    rel = lo.relation(e.args[0])
    n = lo.aggregate(lo.row_from(rel, rel.key), "count(*)")
    return combine(f"coalesce({n.sql}, 0)" if e.function == "count" else f"(coalesce({n.sql}, 0) > 0)", n)


def _per_row(lo: ExprLowerer, e: A.Call):
    """The FROM clause of a relation and its per-row values (`sum(rel, value)`, `count_distinct(rel, k...)`)."""
    rel = lo.relation(e.args[0])
    key = lo.keyed(rel.key, *(lo.fp(a) for a in e.args[1:]))
    frm = lo.row_from(rel, key)
    values = [lo.scalar(a, rel) for a in e.args[1:]]
    for value in values:
        lo.with_scalar(frm, value)
    return frm, values


def _sum(lo: ExprLowerer, e: A.Call, row) -> S:
    if len(e.args) == 1:
        return _bag_aggregate(lo, e, "coalesce({}, 0)", "sum({v})")
    frm, values = _per_row(lo, e)
    total = lo.aggregate(frm, f"sum({values[0].sql})")
    return combine(f"coalesce({total.sql}, 0)", total)


def _count_distinct(lo: ExprLowerer, e: A.Call, row) -> S:
    if len(e.args) == 1:
        return _bag_aggregate(lo, e, "coalesce({}, 0)", "count(DISTINCT {v})")
    frm, values = _per_row(lo, e)
    present = " AND ".join(f"{v.sql} IS NOT NULL" for v in values)
    n = lo.aggregate(frm, f"count(DISTINCT CASE WHEN {present} THEN row({', '.join(v.sql for v in values)}) END)")
    return combine(f"coalesce({n.sql}, 0)", n)


# ---- aggregates over a bag ----
def _bag_aggregate(lo: ExprLowerer, e: A.Call, outer: str, inner: str) -> S:
    bag = lo.bag(e.args[0])
    value = lo.aggregate(bag.frm, inner.format(v=bag.v))
    return combine(outer.format(value.sql), value)


def _min_max(lo, e, row):
    return _bag_aggregate(lo, e, "{}", e.function + "({v})")


def _list(lo, e, row):
    return _bag_aggregate(lo, e, "coalesce({}, [])", "list(DISTINCT {v} ORDER BY {v}) FILTER (WHERE {v} IS NOT NULL)")


def _mode(lo: ExprLowerer, e: A.Call, row) -> S:
    """The most frequent value per key, ties settled as the legacy emitter settles them."""
    bag = lo.bag(e.args[0])
    ties = e.kwargs["ties"].name
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


# ---- text ----
def _token_lookup(lo: ExprLowerer, e: A.Call, row: RelRef | None):
    """The token index row of (this row's step, the word), joined onto the row, where the text is a
    column of a table with one row per step; else None."""
    if row is None or not _is_column(e.args[0]) or row.rtype.name not in ONE_ROW_PER_STEP:
        return None
    word = lo.scalar(e.args[1], row)
    tokens = lo.token_index(row.rtype.name, e.args[0].name)
    join_key = ("lookup", tokens, word.sql)
    if join_key not in lo._cache:
        alias = lo.fresh("k")
        lo._cache[join_key] = (alias, f"LEFT JOIN {tokens} {alias} ON {alias}.episode_id = t.episode_id "
                                      f"AND {alias}.step = t.step AND {alias}.w = lower({word.sql})")
    alias, join = lo._cache[join_key]
    return alias, word, S("", word.deps, (*word.lookups, join))


def _text(indexed: str, plain: str):
    """mentions/occurrences: `indexed` over the token index row `{n}` where there is one, else `plain`
    over the words of the text (both give what the legacy expression gives, nulls included)."""
    def lower(lo: ExprLowerer, e: A.Call, row) -> S:
        lookup = _token_lookup(lo, e, row)
        if lookup:
            alias, word, joins = lookup
            return combine(indexed.format(text=f"t.{ident(e.args[0].name)}", word=word.sql, n=f"{alias}.n"), joins)
        text, word = lo.scalar(e.args[0], row), lo.scalar(e.args[1], row)
        return combine(plain.format(words=words_sql(text.sql), word=word.sql), text, word)
    return lower


_mentions = _text("CASE WHEN {text} IS NULL OR {word} IS NULL THEN NULL ELSE {n} IS NOT NULL END",
                  "list_contains({words}, lower({word}))")
_occurrences = _text("CASE WHEN {text} IS NULL THEN NULL ELSE coalesce({n}, 0) END",
                     "len(list_filter({words}, lambda w: w = lower({word})))")


def _plain(template: str):
    """A function that is one SQL expression of its arguments."""
    def lower(lo: ExprLowerer, e: A.Call, row) -> S:
        args = [lo.scalar(a, row) for a in e.args]
        return combine(template.format(*(a.sql for a in args)), *args)
    return lower


def _primitive(lo: ExprLowerer, e: A.Call, row) -> S:
    # Calls the Python implementation registered in DuckDB (runtime/spatial/udf.py).
    primitive = PRIMITIVES[e.function]
    args = [lo.scalar(a, row) for a in e.args]
    options = [sql_string(e.kwargs[name].name) for name in primitive.kwargs]
    return combine(f"{primitive.sql_name}({', '.join(['c.episode_id', *(a.sql for a in args), *options])})", *args)


SCALAR_FUNCTIONS = {
    "count": _count,
    "exists": _count,
    "sum": _sum,
    "count_distinct": _count_distinct,
    "min": _min_max,
    "max": _min_max,
    "list": _list,
    "mode": _mode,
    "mentions": _mentions,
    "occurrences": _occurrences,
    "first_sentence": _plain("coalesce(nullif(trim(regexp_extract({0}, " + sql_string(FIRST_SENTENCE_REGEX).replace("{", "{{").replace("}", "}}")
                             + ", 1)), ''), trim({0}))"),
    "len": _plain("len({0})"),
    "abs": _plain("abs({0})"),
    "displacement": _plain("{{'dx': CAST({0} AS BIGINT), 'dy': CAST({1} AS BIGINT)}}"),
    **{name: _primitive for name in PRIMITIVES},
}


# ---- rows ----
def _nth(lo: ExprLowerer, e: A.Call) -> str:
    rel = lo.relation(e.args[0])
    k = {"first": S("1"), "last": S("-1")}.get(e.function) or lo.scalar(e.args[1], None)
    key = lo.keyed(rel.key, lo.fp(e.args[1]) if len(e.args) > 1 else ())
    frm = lo.with_scalar(lo.row_from(rel, key), k)
    keys = key_columns("c", key)
    ranked = (f"SELECT {keys}, {lo.columns(rel)}, row_number() OVER (PARTITION BY {keys} ORDER BY "
              f"{lo.order_sql(rel)}) AS qtc_rn, count(*) OVER (PARTITION BY {keys}) AS qtc_n, {k.sql} AS qtc_k "
              f"{frm.render()}")
    sql = (f"SELECT * EXCLUDE (qtc_rn, qtc_n, qtc_k) FROM ({ranked}) "
           f"WHERE qtc_rn = CASE WHEN qtc_k > 0 THEN qtc_k ELSE qtc_n + 1 + qtc_k END")
    return lo.add("row", "row", key, sql, CARD_DEMAND, f"{e.function} row", fence=True)


def _arg_extreme(lo: ExprLowerer, e: A.Call) -> str:
    rel = lo.relation(e.args[0])
    key = lo.keyed(rel.key, lo.fp(e.args[1]))
    frm = lo.row_from(rel, key)
    value = lo.scalar(e.args[1], rel)
    lo.with_scalar(frm, value)
    frm.wheres.append(f"{value.sql} IS NOT NULL")
    ties = e.kwargs["ties"].name
    keys = key_columns("c", key)
    direction = "DESC" if e.function == "argmax" else "ASC"
    ranked = (f"SELECT {keys}, {lo.columns(rel)}, row_number() OVER (PARTITION BY {keys} ORDER BY {value.sql} "
              f"{direction}, {lo.order_sql(rel, reverse=ties == 'last')}) AS qtc_rn, count(*) OVER "
              f"(PARTITION BY {keys}, {value.sql}) AS qtc_ties {frm.render()}")
    unique = " AND qtc_ties = 1" if ties == "unique" else ""
    sql = f"SELECT * EXCLUDE (qtc_rn, qtc_ties) FROM ({ranked}) WHERE qtc_rn = 1{unique}"
    return lo.add("row", "row", key, sql, CARD_DEMAND, f"{e.function} (ties={ties})", fence=True)


ROW_FUNCTIONS = {"first": _nth, "last": _nth, "nth": _nth, "argmax": _arg_extreme, "argmin": _arg_extreme}
