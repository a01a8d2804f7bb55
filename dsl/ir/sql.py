"""SQL text pieces the IR emits: the statement's variables, a FROM clause with a context and a row,
the join of a keyed node, and the lowered forms of values (a scalar, a relation, a bag).

Every relation the IR builds is read through a `From`: the context `c` (the episodes of the env, or
the distinct bindings a node is asked for: its demand), the nodes its scalars need joined onto `c` by
their key, and at most one row relation `t`. Nothing is correlated: every join is by key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.dsl.sql import ident

# The statement's variables, set on the connection before it runs (`SET VARIABLE name = value`).
HORIZON_VARIABLE = "qtc_horizon"  # the horizon N: steps 0..N are visible (unset: whole episodes)
CAP_VARIABLE = "qtc_max_candidates"  # at most this many parameter bindings per episode (unset: DEFAULT_CAP)
SEED_VARIABLE = "qtc_seed"  # which bindings the cap keeps: a seeded hash order, the same on every run
# The caps (at most the cap) whose samples the statement says were cut (unset: the cap alone): one run
# at the largest cap of a template gives its rows at each smaller one too (sample.MIN_CAP_COLUMN).
CAPS_VARIABLE = "qtc_caps"
NO_HORIZON = 9223372036854775807
# The cap of a sampled statement run without the variable (as `qtc compile --explain` prints it): small
# enough for the arithmetic and min_by's count of the sample (ir/sample.py), which INT64's maximum overflows.
# Generation always sets the variable.
DEFAULT_CAP = 16

SCOPE = "ep"  # the node holding the env's episodes: the context of a node keyed by the episode alone


def cut_name(table: schema.Table) -> str:
    """The CTE of a statement that holds `table` as seen at the horizon (emit.horizon_cut): nodes read it."""
    return f"h_{table.sql_name}"


def pcol(param: str) -> str:
    return ident("p_" + param)


def key_columns(alias: str, key: tuple[str, ...]) -> str:
    """`alias.episode_id, alias."p_x", ...`"""
    return ", ".join([f"{alias}.episode_id", *(f"{alias}.{pcol(p)}" for p in key)])


def key_match(alias: str, key: tuple[str, ...], other: str = "c") -> str:
    return " AND ".join([f"{alias}.episode_id = {other}.episode_id",
                         *(f"{alias}.{pcol(p)} = {other}.{pcol(p)}" for p in key)])


@dataclass(frozen=True)
class S:
    """A lowered scalar: SQL over the context `c` (and the row `t` in a row scope), the keyed nodes it
    reads (joined onto `c` by their key, each under its own name) and the lookups joined onto `t`."""
    sql: str
    deps: tuple[str, ...] = ()
    lookups: tuple[str, ...] = ()


def combine(sql: str, *parts: S) -> S:
    deps: dict[str, None] = {}
    lookups: dict[str, None] = {}
    for part in parts:
        deps.update(dict.fromkeys(part.deps))
        lookups.update(dict.fromkeys(part.lookups))
    return S(sql, tuple(deps), tuple(lookups))


@dataclass
class From:
    """`FROM <context> c <joins> WHERE <wheres>`."""
    context: str
    key: tuple[str, ...]
    joins: list[str] = field(default_factory=list)
    wheres: list[str] = field(default_factory=list)

    def add(self, *joins: str) -> None:
        for join in joins:
            if join not in self.joins:
                self.joins.append(join)

    def render(self) -> str:
        where = f" WHERE {' AND '.join(self.wheres)}" if self.wheres else ""
        joins = "".join(f" {j}" for j in self.joins)
        return f"FROM {self.context} c{joins}{where}"

    def copy(self) -> "From":
        return From(self.context, self.key, list(self.joins), list(self.wheres))


@dataclass(frozen=True)
class RelRef:
    """A relation: a node (or a horizon-cut table) keyed by `key`, its type and its row order."""
    source: str
    key: tuple[str, ...]
    rtype: T.Relation
    order: tuple  # ((column name | A.Expr, descending), ...)


@dataclass
class Bag:
    """Values `v` (and their steps `s`) read through a FROM clause keyed by `key`."""
    frm: From
    v: str
    s: str
    key: tuple[str, ...]
