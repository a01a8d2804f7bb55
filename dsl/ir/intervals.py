"""Requires that hold for an interval of a range's second step: the pairs that pass them numbered for
domain draws, so that a cap counts only pairs that may pass.

A range's pairs (`param L: D`, `param R: D where $R - $L in a..b`) are numbered by prefix sums of each L's
partners (sample.py, pair_starts_sql). A require conjunct that counts X, the rows of a table with steps
`where step in $L..$R` and conditions that read no parameter, counts more rows as R grows. So, the rows
of X taken in step order:

    exists(X), count(X) >= k, count(X) > k - 1      hold from the step of X's k-th row at or after L on
    not exists(X), count(X) <= k - 1, count(X) < k  hold up to the step before X's k-th row at or after L
    count(X) == k                                   both (from the k-th, up to the step before the k+1-th)

and the R that pass every such conjunct are an interval of each L's partners. Their counts number the
pairs that pass (interval_pair_starts_sql), never made, at the cost of the domain and X's rows. The
conjuncts are still tested on the sampled bindings, as every require is: these bounds only choose which
pairs the draws number.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtc.dsl import ast as A
from qtc.dsl.sql import ident

from .exprs import FLIPPED, ExprLowerer, is_step_column
from .nodes import CARD_N

ORDERS = (*FLIPPED, "==")


@dataclass(frozen=True)
class Bound:
    """What a require conjunct says of R for each L: it holds where R is at least the step of X's
    `lower`-th row at or after L (None: no such bound), and below the step of its `upper`-th (None: none);
    X is the rows of `table` where `conditions` (reading no parameter) hold, between L and R."""
    table: A.Expr
    conditions: tuple[A.Expr, ...]
    lower: int | None
    upper: int | None


def bounds_of(lo: ExprLowerer, requires: list[A.Expr], first: str, second: str) -> list[Bound]:
    """The conjuncts of `requires` that bound the second step of the range (first, second) for each first."""
    found = []
    for require in requires:
        for conjunct in A.conjuncts(require):
            bound = _bound(lo, conjunct, first, second) if lo.fp(conjunct) == {first, second} else None
            if bound is not None:
                found.append(bound)
    return found


def _bound(lo: ExprLowerer, conjunct: A.Expr, first: str, second: str) -> Bound | None:
    e, negated = conjunct, False
    if isinstance(e, A.Unary) and e.op == "not":
        e, negated = e.operand, True
    if _counts(e, "exists"):
        rows, (lower, upper) = e.args[0], (None, 1) if negated else (1, None)
    elif not negated and isinstance(e, A.Binary) and e.op in ORDERS:
        op, count, k = e.op, e.left, e.right
        if _counts(k, "count"):
            op, count, k = FLIPPED.get(op, op), k, count
        if not (_counts(count, "count") and isinstance(k, A.Literal) and type(k.value) is int):
            return None
        n = k.value
        rows, (lower, upper) = count.args[0], {">=": (n, None), ">": (n + 1, None), "<=": (None, n + 1),
                                               "<": (None, n), "==": (n, n + 1)}[op]
    else:
        return None
    if any(k is not None and k < 1 for k in (lower, upper)):
        return None  # holds for every R, or for none: nothing to number by
    table, conjuncts = _flattened(lo, rows)
    if table is None:
        return None
    ranges = [c for c in conjuncts if _between(c, first, second)]
    rest = tuple(c for c in conjuncts if not _between(c, first, second))
    if len(ranges) != 1 or any(lo.fp(c) for c in rest):
        return None
    return Bound(table, rest, lower, upper)


def _counts(e: A.Expr, function: str) -> bool:
    return isinstance(e, A.Call) and e.function == function and len(e.args) == 1 and not e.kwargs


def _flattened(lo: ExprLowerer, e: A.Expr) -> tuple[A.Expr | None, list[A.Expr]]:
    """A relation as a table with steps and the conditions on its rows (through lets and nested wheres);
    (None, []) for anything else."""
    if isinstance(e, A.Name) and e.ref[0] == "let":
        return _flattened(lo, lo.lets[e.name].expr)
    if isinstance(e, A.Where):
        table, conjuncts = _flattened(lo, e.base)
        return table, conjuncts + A.conjuncts(e.condition)
    if isinstance(e, A.Name) and e.ref[0] == "table" and e.ref[1].has_step:
        return e, []
    return None, []


def _between(e: A.Expr, first: str, second: str) -> bool:
    """Whether `e` is `step in $first..$second`."""
    return (isinstance(e, A.In) and not e.negated and is_step_column(e.item) and isinstance(e.container, A.Range)
            and all(isinstance(end, A.ParamRef) and end.name == name
                    for end, name in ((e.container.low, first), (e.container.high, second))))


def limits_sql(lo: ExprLowerer, domain: str, bounds: list[Bound], frame: tuple[int, int]) -> str:
    """Each value v of the domain (a first step) with the partners' interval [qtc_from, qtc_to] the
    bounds and the frame leave it: from the largest of v + a and each lower bound's step, to the smallest
    of v + b and the step before each upper bound's; a value short of some lower bound's rows is left out.
    A bound's k-th row at or after v is the first step whose running count of X's rows reaches the count
    before v plus k (ASOF joins on each X's running counts, one node per X)."""
    low, high = frame
    targets, befores, lowers, uppers = [], {}, [], []  # befores: X's running counts -> their alias
    for number, bound in enumerate(bounds):
        counts = _running_counts(lo, bound)
        before = befores.setdefault(counts, f"b{len(befores)}")
        for side, k in (("lower", bound.lower), ("upper", bound.upper)):
            if k is None:
                continue
            alias = f"{side[0]}{number}"
            targets.append(f"coalesce({before}.qtc_cum, 0) + {k} AS {alias}_t")
            (lowers if side == "lower" else uppers).append((alias, counts))
    counted = " ".join(f"ASOF LEFT JOIN {counts} {alias} ON {alias}.episode_id = d.episode_id AND d.v > {alias}.step"
                       for counts, alias in befores.items())
    reached = " ".join(f"ASOF LEFT JOIN {counts} {alias} ON {alias}.episode_id = d.episode_id "
                       f"AND d.{alias}_t <= {alias}.qtc_cum" for alias, counts in lowers + uppers)
    start = ", ".join([f"d.v + {low}", *(f"{alias}.step" for alias, _ in lowers)])
    end = ", ".join([f"d.v + {high}", *(f"coalesce({alias}.step - 1, d.v + {high})" for alias, _ in uppers)])
    found = " AND ".join(f"{alias}.step IS NOT NULL" for alias, _ in lowers) or "TRUE"
    return (f"SELECT d.episode_id, d.v, greatest({start}) AS qtc_from, least({end}) AS qtc_to FROM ("
            f"SELECT d.episode_id, d.v, {', '.join(targets)} FROM {domain} d {counted}) d {reached} WHERE {found}")


def _running_counts(lo: ExprLowerer, bound: Bound) -> str:
    """X's steps (the rows of the bound's table where its conditions hold, on every step of the episode),
    each with how many of X's rows lie at or before it (qtc_cum)."""
    frm, _ = lo.rows_where(bound.table, list(bound.conditions))
    step = f"t.{ident('step')}"
    frm.wheres.append(f"{step} IS NOT NULL")
    sql = (f"SELECT c.episode_id, {step} AS step, sum(count(*)) OVER (PARTITION BY c.episode_id ORDER BY {step}) "
           f"AS qtc_cum {frm.render()} GROUP BY c.episode_id, {step}")
    return lo.add("runs", "index", (), sql, CARD_N, "running counts of the rows a range's require counts", fence=True)
