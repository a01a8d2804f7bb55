"""The reference evaluator (R13): a plain Python reading of a checked template over lists of rows.

It is written from CONVENTIONS.md and the language summary (README.md), not from compile.py, so that
the property tests can run both on the same traces and compare candidates, answers and evidence
(tests/property/test_reference_differential.py). It aims to be obviously right, not fast: each candidate is
evaluated on its own, a relation is a list of dicts, a bag a list of (value, step) pairs.

Where the documents leave a choice open, this evaluator takes the usual reading and says so here:
- Null: arithmetic and comparison with null give null; `and`, `or`, `not` follow three-valued logic;
  a `where`, a parameter condition and a `require` keep only what is true. Aggregates and domains skip
  null values, and so does membership: `x in bag` is whether x equals one of the bag's non-null values.
- Order: rows that tie on their sort keys are ordered by their remaining non-list columns in schema
  order, ascending, nulls last (sort keys put nulls last too), so `first`, `nth` and tie rules
  always name one row. A tie rule that leaves values tied (mode by first step, two values at one step)
  falls back to the smaller value.
- Horizon N on the `episodes` row: `n_steps` is at most N, a death after N is not known, and an episode
  cut short by the horizon has `ended_by` 'horizon'.
- Division by zero and a remainder by zero are null.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from qtc.dsl import ast as A
from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.dsl.check import CheckedTemplate, walk
from qtc.dsl.conventions import KEYWORD_MIN_LENGTH, ORDINALS, STOPWORDS
from qtc.dsl.primitives import PRIMITIVES
from .spatial import EpisodeSpace

# CONVENTIONS.md, Keywords: words are split at every character that is not an ASCII letter or digit.
_WORD = re.compile(r"[A-Za-z0-9]+")
# A sentence ends at a run of '.', '!' or '?' followed by whitespace or the end of the text.
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
HORIZON_ENDING = "horizon"


class Unsupported(Exception):
    """The template uses something this evaluator does not interpret (yet)."""


# ---- the rows -------------------------------------------------------------------------------------

Tables = dict[str, list[dict]]  # physical table name -> rows (dicts keyed by column name)


def read_tables(con) -> Tables:
    """Every table of dsl/schema.py, read out of a DuckDB store into plain rows."""
    tables = {}
    for table in schema.TABLES:
        relation = con.sql(f"SELECT * FROM {table.sql_name}")
        tables[table.sql_name] = [dict(zip(relation.columns, row)) for row in relation.fetchall()]
    return tables


@dataclass
class EpisodeRows:
    """One episode's rows of every table it can see, by the template name of the table."""
    episode: dict
    tables: dict[str, list[dict]]
    vocab: dict[str, list[str]]  # kind -> values of the episode's game


def cut_to_horizon(tables: Tables, horizon: int | None) -> list[EpisodeRows]:
    """Every episode with its rows, each table cut to steps 0..horizon (CONVENTIONS.md, Horizon)."""
    by_episode: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for table in schema.TABLES:
        if table in (schema.EPISODES, schema.VOCAB):
            continue
        for row in tables[table.sql_name]:
            if horizon is None or not table.has_step or row["step"] <= horizon:
                by_episode[row["episode_id"]][table.sql_name].append(row)
    vocab: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    vocab_rows: dict[str, list[dict]] = defaultdict(list)
    for row in tables[schema.VOCAB.sql_name]:
        vocab[row["game"]][row["kind"]].append(row["value"])
        vocab_rows[row["game"]].append(row)
    episodes = []
    for row in tables[schema.EPISODES.sql_name]:
        row = _episode_within(row, horizon)
        physical = by_episode[row["episode_id"]]
        visible = {t.name: physical[t.sql_name] for t in schema.tables_for(row["env"]).values()
                   if t not in (schema.EPISODES, schema.VOCAB)}
        visible["episodes"] = [row]
        visible["vocab"] = vocab_rows[row["game"]]
        episodes.append(EpisodeRows(row, visible, vocab[row["game"]]))
    return episodes


def _episode_within(row: dict, horizon: int | None) -> dict:
    if horizon is None or row["n_steps"] <= horizon:
        return row
    died = row["death_step"] is not None and row["death_step"] <= horizon
    return {**row, "n_steps": horizon, "ended_by": HORIZON_ENDING,
            "death_step": row["death_step"] if died else None, "death_cause": row["death_cause"] if died else None}


# ---- values -----------------------------------------------------------------------------------------

@dataclass
class Rel:
    """A relation: its rows, and its sort keys as (expression or column name, descending)."""
    rows: list[dict]
    keys: list[tuple[A.Expr | str, bool]]
    type: T.Relation


@dataclass
class Bag:
    """A multiset of values, each with the step of the row it came from (None if it has none)."""
    items: list[tuple[Any, int | None]]

    def values(self) -> list:
        return [v for v, _ in self.items if v is not None]


@dataclass
class Candidate:
    """One question the template asks of an episode (the compiled SQL's output row, in Python)."""
    episode_id: str
    adversarial: bool
    params: dict[str, Any]
    lets: dict[str, Any] = field(default_factory=dict)
    answer: Any = None
    accepted: list | None = None
    evidence: list[int] = field(default_factory=list)
    displays: dict[str, Any] = field(default_factory=dict)


def _is_true(value) -> bool:
    return value is True


def _not(value):
    return None if value is None else not value


def _and(left, right):
    if left is False or right is False:
        return False
    return None if left is None or right is None else True


def _or(left, right):
    if left is True or right is True:
        return True
    return None if left is None or right is None else False


_COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                ">=": operator.ge}


def _compare(op: str, left, right):
    if left is None or right is None:
        return None
    return _COMPARISONS[op](left, right)


def _arithmetic(op: str, left, right):
    if left is None or right is None:
        return None
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right == 0:
        return None
    if op == "/":
        return left / right
    # '%': the remainder has the sign of the dividend (division that truncates toward zero).
    if isinstance(left, float) or isinstance(right, float):
        return math.fmod(left, right)
    remainder = abs(left) % abs(right)
    return remainder if left >= 0 else -remainder


def _ordered(value) -> tuple:
    """A sort key for one value: nulls after everything, structs by their fields."""
    if value is None:
        return (1, 0)
    return (0, tuple(value.values()) if isinstance(value, dict) else value)


@functools.lru_cache(maxsize=65536)
def words(text: str | None) -> tuple[str, ...]:
    """The words of a text in order, lowercased (CONVENTIONS.md, Keywords)."""
    return tuple(w.lower() for w in _WORD.findall(text)) if text else ()


def is_keyword(word: str) -> bool:
    return len(word) >= KEYWORD_MIN_LENGTH and word not in STOPWORDS and not word.isdigit()


def first_sentence(text: str | None) -> str | None:
    """The text up to its first sentence end, trimmed; the whole text if no sentence ends in it."""
    if text is None:
        return None
    end = _SENTENCE_END.search(text.lstrip())
    return (text.lstrip()[:end.end()] if end else text).strip()


# ---- the evaluator ---------------------------------------------------------------------------------

@dataclass(slots=True)
class Scope:
    """What an expression sees: the episode, the bindings, the scalar lets computed so far, a row."""
    episode: EpisodeRows
    params: dict[str, Any]
    lets: dict[str, Any]
    row: dict | None = None

    def with_row(self, row: dict) -> "Scope":
        return Scope(self.episode, self.params, self.lets, row)


class Evaluator:
    """Evaluates one checked template over the episodes of a set of tables, under a horizon."""

    def __init__(self, checked: CheckedTemplate, tables: Tables, horizon: int | None = None):
        self.checked = checked
        self.template = checked.template
        self.let_exprs = {let.name: let.expr for let in self.template.lets}
        self.scalar_lets = [let.name for let in self.template.lets
                            if isinstance(checked.let_types.get(let.name), (T.Scalar, T.ListOf))]
        self.episodes = [e for e in cut_to_horizon(tables, horizon)
                         if checked.env in ("any", e.episode["env"])]
        self.spaces: dict[str, EpisodeSpace] = {}

    # ---- candidates ----
    def candidates(self) -> list[Candidate]:
        """Every candidate of every episode: the answerable ones, then each adversarial parameter's."""
        found = []
        for episode in self.episodes:
            for params in self.bindings(episode):
                candidate = self.instance(episode, params)
                if candidate is not None:
                    found.append(candidate)
            for adversarial in self.template.adversarials:
                for params in self.bindings(episode, {adversarial.param: adversarial.domain}):
                    found.append(Candidate(episode.episode["episode_id"], True, params,
                                           {name: None for name in self.scalar_lets},
                                           displays=self._displays(episode, params, {}, None)))
        return found

    def bindings(self, episode: EpisodeRows, domains: dict[str, A.Expr] | None = None):
        """Every binding of the parameters, in declaration order; `domains` replaces some domains."""
        domains = domains or {}

        def extend(index: int, params: dict):
            if index == len(self.template.params):
                yield dict(params)
                return
            param = self.template.params[index]
            scope = Scope(episode, params, {})
            for value in self.domain(domains.get(param.name, param.domain), scope):
                bound = {**params, param.name: value}
                if param.condition is None or _is_true(self.value(param.condition, Scope(episode, bound, {}))):
                    yield from extend(index + 1, bound)

        yield from extend(0, {})

    def instance(self, episode: EpisodeRows, params: dict) -> Candidate | None:
        """The answerable candidate of one binding, or None when a require fails or the answer is null."""
        lets: dict[str, Any] = {}
        scope = Scope(episode, params, lets)
        for name in self.scalar_lets:  # shown with every answerable candidate (the SQL's l_<name>)
            if name not in lets:
                lets[name] = self.value(self.let_exprs[name], scope)
        if not all(_is_true(self.value(r, scope)) for r in self.template.requires):
            return None
        answer = self.value(self.template.answer, scope)
        if answer is None:
            return None
        return Candidate(episode.episode["episode_id"], False, params, {n: lets[n] for n in self.scalar_lets},
                         answer, self.accepted(answer, scope), self.evidence(scope),
                         self._displays(episode, params, lets, answer))

    def accepted(self, answer, scope: Scope) -> list:
        """Every correct answer: the answer, then the other values the `accept` clause lists, sorted."""
        accept = self.template.accept
        others = (self.value(accept, scope) or []) if accept is not None else []
        return [answer] + _distinct_sorted(a for a in others if a is not None and a != answer)

    def evidence(self, scope: Scope) -> list[int]:
        """The sorted distinct steps of every evidence expression: a step, a bag of steps, or a range."""
        steps: set[int] = set()
        for e in self.template.evidence:
            if isinstance(e, A.Range):
                low, high = self.value(e.low, scope), self.value(e.high, scope)
                if low is not None and high is not None:
                    steps.update(range(low, high + 1))
            elif isinstance(e.ty, T.Bag):
                steps.update(v for v in self.value(e, scope).values())
            else:
                steps.add(self.value(e, scope))
        return sorted(int(s) for s in steps if s is not None)

    def _displays(self, episode: EpisodeRows, params: dict, lets: dict, answer) -> dict:
        """The display name of every room-valued parameter, scalar let and (location) answer."""
        rooms = {r["room"]: r["display_name"] for r in episode.tables.get("rooms", [])}
        shown = {name: rooms.get(value) for name, value in params.items()
                 if self.checked.param_types.get(name) == T.ROOM}
        shown |= {name: rooms.get(lets.get(name)) for name in self.scalar_lets
                  if self.checked.let_types[name] == T.ROOM}
        if self.checked.answer_type == "location":
            shown["answer"] = rooms.get(answer)
        return shown

    # ---- domains ----
    def domain(self, e: A.Expr, scope: Scope) -> list:
        """The distinct non-null values a parameter draws from `e`."""
        if isinstance(e, A.ListLiteral) and e.ty == T.ListOf(T.ORDINAL):
            values = [ORDINALS[item.name] for item in e.items]
        elif isinstance(e.ty, T.Bag):
            values = self.value(e, scope).values()
        else:
            values = self.value(e, scope) or []
        distinct = []
        for value in values:
            if value is not None and value not in distinct:
                distinct.append(value)
        return distinct

    # ---- expressions ----
    def value(self, e: A.Expr, scope: Scope):
        return _EXPRESSIONS[type(e)](self, e, scope)

    def _Literal(self, e: A.Literal, scope):
        return e.value

    def _ListLiteral(self, e: A.ListLiteral, scope):
        return [self.value(item, scope) for item in e.items]

    def _ParamRef(self, e: A.ParamRef, scope):
        return scope.params[e.name]

    def _Name(self, e: A.Name, scope):
        kind = e.ref[0]
        if kind == "column":
            return scope.row[e.name]
        if kind == "let":  # a let is one value per candidate: computed on first use, then kept
            if e.name not in scope.lets:
                scope.lets[e.name] = self.value(self.let_exprs[e.name], scope)
            return scope.lets[e.name]
        if kind == "table":
            table: schema.Table = e.ref[1]
            return Rel(list(scope.episode.tables[table.name]), [("step", False)] if table.has_step else [], e.ty)
        raise Unsupported(f"the name '{e.name}' ({kind})")

    def _Range(self, e: A.Range, scope):
        low, high = self.value(e.low, scope), self.value(e.high, scope)
        return None if low is None or high is None else list(range(int(low), int(high) + 1))

    def _Field(self, e: A.Field, scope):
        if isinstance(e.base, A.Name) and e.base.ref == ("vocab", None):
            return Bag([(v, None) for v in scope.episode.vocab.get(e.name, [])])
        base = self.value(e.base, scope)
        if isinstance(e.base.ty, T.Relation):
            return Bag([(row[e.name], row.get("step") if base.type.has_step else None) for row in base.rows])
        return None if base is None else base[e.name]  # a row, or a displacement

    def _Index(self, e: A.Index, scope):
        base, index = self.value(e.base, scope), self.value(e.index, scope)
        if isinstance(e.base.ty, T.ListOf):
            # A list counts as ordinals do: 1 is the first element, -1 the last; beyond the ends, null.
            if base is None or index is None or index == 0 or abs(index) > len(base):
                return None
            return base[index - 1] if index > 0 else base[index]
        matches = [row for row in self.ordered(base, scope) if index is not None and row["step"] == index]
        return matches[0] if matches else None

    def _Where(self, e: A.Where, scope):
        base = self.value(e.base, scope)
        rows = base.rows
        windows, rest = _step_windows(e.condition)
        for window in windows:
            # `step in low..high` (bounds that do not depend on the row) is a cut on the step column;
            # the rows it keeps need only the other conjuncts: the condition holds when all of them do.
            low, high = self.value(window.low, scope), self.value(window.high, scope)
            rows = [] if low is None or high is None else [row for row in rows if low <= row["step"] <= high]
        kept = [row for row in rows if all(_is_true(self.value(c, scope.with_row(row))) for c in rest)]
        return Rel(kept, base.keys, base.type)

    def _Sort(self, e: A.Sort, scope):
        base = self.value(e.base, scope)
        return Rel(base.rows, [(key.expr, key.descending) for key in e.keys], base.type)

    def _Unary(self, e: A.Unary, scope):
        operand = self.value(e.operand, scope)
        if e.op == "not":
            return _not(operand)
        return None if operand is None else -operand

    def _Binary(self, e: A.Binary, scope):
        if isinstance(e.left.ty, T.Bag):  # bag - bag: the values of the left that the right lacks
            left = self.value(e.left, scope)
            right = {_hashable(v) for v in self.value(e.right, scope).values()}
            return Bag([(v, s) for v, s in left.items if _hashable(v) not in right])
        left, right = self.value(e.left, scope), self.value(e.right, scope)
        if e.op == "and":
            return _and(left, right)
        if e.op == "or":
            return _or(left, right)
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            return _compare(e.op, left, right)
        return _arithmetic(e.op, left, right)

    def _In(self, e: A.In, scope):
        item = self.value(e.item, scope)
        if isinstance(e.container, A.Range):
            low, high = self.value(e.container.low, scope), self.value(e.container.high, scope)
            found = _and(_compare("<=", low, item), _compare("<=", item, high))
        else:
            container = self.value(e.container, scope)
            values = container.values() if isinstance(container, Bag) else container
            found = None if item is None or values is None else item in [v for v in values if v is not None]
        return _not(found) if e.negated else found

    def _Call(self, e: A.Call, scope):
        if e.function in PRIMITIVES:
            return self._primitive(e, scope)
        function = getattr(self, f"_call_{e.function}", None)
        if function is None:
            raise Unsupported(f"the function '{e.function}'")
        return function(e, scope)

    def _primitive(self, e: A.Call, scope):
        """A spatial primitive: null if an argument is null, else the runtime's algorithm on this episode."""
        args = [self.value(a, scope) for a in e.args]
        if None in args:
            return None
        options = [e.kwargs[name].name for name in PRIMITIVES[e.function].kwargs]
        episode_id = scope.episode.episode["episode_id"]
        if episode_id not in self.spaces:
            self.spaces[episode_id] = EpisodeSpace(scope.episode.tables)
        return self.spaces[episode_id].call(e.function, *args, *options)

    # ---- relations and rows ----
    def ordered(self, rel: Rel, scope: Scope) -> list[dict]:
        """The rows of a relation in its order, made total by its other columns (see the module doc)."""
        named = {key for key, _ in rel.keys if isinstance(key, str)}
        keys = rel.keys + [(name, False) for name, ty in rel.type.columns
                           if name not in named and not isinstance(ty, T.ListOf)]

        def key_values(row: dict) -> list:
            return [row[key] if isinstance(key, str) else self.value(key, scope.with_row(row)) for key, _ in keys]

        def compare(a: tuple[dict, list], b: tuple[dict, list]) -> int:
            for (_, descending), x, y in zip(keys, a[1], b[1]):
                if x == y:
                    continue
                if x is None or y is None:  # nulls last, whichever the direction
                    return 1 if x is None else -1
                return (1 if x > y else -1) * (-1 if descending else 1)
            return 0

        decorated = sorted(((row, key_values(row)) for row in rel.rows), key=functools.cmp_to_key(compare))
        return [row for row, _ in decorated]

    def _call_count(self, e, scope):
        return len(self.value(e.args[0], scope).rows)

    def _call_exists(self, e, scope):
        return bool(self.value(e.args[0], scope).rows)

    def _call_first(self, e, scope):
        rows = self.ordered(self.value(e.args[0], scope), scope)
        return rows[0] if rows else None

    def _call_last(self, e, scope):
        rows = self.ordered(self.value(e.args[0], scope), scope)
        return rows[-1] if rows else None

    def _call_nth(self, e, scope):
        rows = self.ordered(self.value(e.args[0], scope), scope)
        k = self.value(e.args[1], scope)
        if k is None or k == 0 or abs(k) > len(rows):
            return None
        return rows[k - 1] if k > 0 else rows[k]

    def _call_argmax(self, e, scope):
        return self._extreme(e, scope, max)

    def _call_argmin(self, e, scope):
        return self._extreme(e, scope, min)

    def _extreme(self, e, scope, best):
        rows = self.ordered(self.value(e.args[0], scope), scope)
        valued = [(row, self.value(e.args[1], scope.with_row(row))) for row in rows]
        valued = [(row, v) for row, v in valued if v is not None]
        if not valued:
            return None
        top = best(v for _, v in valued)
        tied = [row for row, v in valued if v == top]
        ties = e.kwargs["ties"].name
        if ties == "unique":
            return tied[0] if len(tied) == 1 else None
        return tied[0] if ties == "first" else tied[-1]

    def _call_runs(self, e, scope):
        base = self.value(e.args[0], scope)
        steps_by_value: dict[Any, set[int]] = defaultdict(set)
        for row in base.rows:
            value = self.value(e.args[1], scope.with_row(row))
            if value is not None:
                steps_by_value[_hashable(value)].add(row["step"])
        runs = []
        for value, steps in steps_by_value.items():
            ordered = sorted(steps)
            # Consecutive steps share step - position; each such group is one maximal run.
            for _, group in itertools.groupby(enumerate(ordered), key=lambda pair: pair[1] - pair[0]):
                run = [step for _, step in group]
                runs.append({"value": _plain(value), "start": run[0], "end": run[-1], "length": len(run)})
        return Rel(runs, [("start", False)], e.ty)

    # ---- aggregates ----
    def _per_row(self, e, scope) -> list[tuple]:
        """`f(relation, expr, ...)`: the tuple of the expressions' values on each row of the relation."""
        rel = self.value(e.args[0], scope)
        return [tuple(self.value(arg, scope.with_row(row)) for arg in e.args[1:]) for row in rel.rows]

    def _call_count_distinct(self, e, scope):
        if len(e.args) > 1:
            return len({_hashable(key) for key in self._per_row(e, scope) if None not in key})
        return len({_hashable(v) for v in self.value(e.args[0], scope).values()})

    def _call_sum(self, e, scope):
        if len(e.args) > 1:
            return sum(v for (v,) in self._per_row(e, scope) if v is not None)
        return sum(self.value(e.args[0], scope).values())

    def _call_min(self, e, scope):
        return min(self.value(e.args[0], scope).values(), default=None)

    def _call_max(self, e, scope):
        return max(self.value(e.args[0], scope).values(), default=None)

    def _call_list(self, e, scope):
        return _distinct_sorted(self.value(e.args[0], scope).values())

    def _call_mode(self, e, scope):
        bag = self.value(e.args[0], scope)
        counts = Counter(v for v, _ in bag.items if v is not None)
        if not counts:
            return None
        top = max(counts.values())
        tied = sorted((v for v, n in counts.items() if n == top), key=_ordered)
        ties = e.kwargs["ties"].name
        if ties == "unique":
            return tied[0] if len(tied) == 1 else None
        if ties == "alpha":
            return tied[0]
        steps = defaultdict(list)
        for v, s in bag.items:
            if s is not None:
                steps[v].append(s)
        if ties == "first":
            return min(tied, key=lambda v: _ordered(min(steps[v], default=None)))
        return min(tied, key=lambda v: _ordered(-max(steps[v]) if steps[v] else None))

    # ---- text and numbers ----
    def _call_words(self, e, scope):
        found = []
        for text in self.value(e.args[0], scope).values():
            found += [w for w in words(text) if is_keyword(w) and w not in found]
        return Bag([(w, None) for w in found])

    def _call_flatten(self, e, scope):
        bag = self.value(e.args[0], scope)
        return Bag([(item, step) for values, step in bag.items if values is not None for item in values])

    def _call_mentions(self, e, scope):
        text, keyword = (self.value(a, scope) for a in e.args)
        return None if text is None or keyword is None else keyword.lower() in words(text)

    def _call_occurrences(self, e, scope):
        text, keyword = (self.value(a, scope) for a in e.args)
        return None if text is None or keyword is None else words(text).count(keyword.lower())

    def _call_first_sentence(self, e, scope):
        return first_sentence(self.value(e.args[0], scope))

    def _call_len(self, e, scope):
        value = self.value(e.args[0], scope)
        return None if value is None else len(value)

    def _call_abs(self, e, scope):
        value = self.value(e.args[0], scope)
        return None if value is None else abs(value)

    def _call_displacement(self, e, scope):
        dx, dy = (self.value(a, scope) for a in e.args)
        return None if dx is None or dy is None else {"dx": int(dx), "dy": int(dy)}


@functools.cache
def _step_windows(condition: A.Expr) -> tuple[tuple[A.Range, ...], tuple[A.Expr, ...]]:
    """A condition's conjuncts: the ranges of those that read `step in low..high` with bounds that do
    not depend on the row, and the others."""
    if isinstance(condition, A.Binary) and condition.op == "and":
        (left_windows, left_rest), (right_windows, right_rest) = map(_step_windows, (condition.left, condition.right))
        return left_windows + right_windows, left_rest + right_rest
    if (isinstance(condition, A.In) and not condition.negated and isinstance(condition.container, A.Range)
            and isinstance(condition.item, A.Name) and condition.item.ref == ("column", "step")
            and not any(isinstance(node, A.Name) and node.ref and node.ref[0] == "column"
                        for bound in (condition.container.low, condition.container.high) for node in walk(bound))):
        return (condition.container,), ()
    return (), (condition,)


# The method that evaluates each kind of expression node, looked up once per node type.
_EXPRESSIONS = {node: getattr(Evaluator, f"_{node.__name__}") for node in (
    A.Literal, A.ListLiteral, A.ParamRef, A.Name, A.Range, A.Field, A.Index, A.Where, A.Sort, A.Unary,
    A.Binary, A.In, A.Call)}


def _hashable(value):
    """A value usable as a set member or dict key (lists and structs become tuples)."""
    if isinstance(value, list):
        return ("list", tuple(_hashable(v) for v in value))
    if isinstance(value, dict):
        return ("struct", tuple((k, _hashable(v)) for k, v in value.items()))
    return value


def _plain(value):
    """The inverse of _hashable."""
    if isinstance(value, tuple) and value and value[0] == "list":
        return [_plain(v) for v in value[1]]
    if isinstance(value, tuple) and value and value[0] == "struct":
        return {k: _plain(v) for k, v in value[1]}
    return value


def called_functions(template: A.Template) -> set[str]:
    """Every function a template calls, in any clause."""
    roots = [p.domain for p in template.params] + [p.condition for p in template.params if p.condition]
    roots += [let.expr for let in template.lets] + template.requires + template.evidence
    roots += [e for e in (template.answer, template.accept) if e is not None]
    roots += [a.domain for a in template.adversarials]
    return {node.function for root in roots for node in walk(root) if isinstance(node, A.Call)}


def unsupported_functions(template: A.Template) -> list[str]:
    """The functions `template` calls that this evaluator does not interpret, sorted."""
    return sorted(f for f in called_functions(template) if f not in PRIMITIVES and not hasattr(Evaluator, f"_call_{f}"))


def _distinct_sorted(values) -> list:
    return [_plain(v) for v in sorted({_hashable(v) for v in values}, key=lambda v: _ordered(_plain(v)))]


def evaluate(checked: CheckedTemplate, tables: Tables, horizon: int | None = None) -> list[Candidate]:
    """Every candidate of a template over the episodes of `tables`, as the compiled SQL would list them."""
    return Evaluator(checked, tables, horizon).candidates()
