"""The reference evaluator: an independent, plain Python reading of a checked template over lists of
rows, which the property tests compare with the compiled SQL.

It is written from CONVENTIONS.md and the language summary (README.md), not from the compiler (dsl/ir/), so that
the property tests can run both on the same traces and compare candidates, answers and evidence
(tests/property/test_reference_differential.py). It aims to be obviously right, not fast: each candidate is
evaluated on its own, a relation is a list of dicts, a bag a list of (value, step) pairs (values.py). Only
a let's value and a parameter's domain are kept across candidates, by the episode and the values of the
parameters they read: the same values give the same value, and a product of several parameters would
otherwise compute each again for every binding.
A call is read by its function's record (dsl/functions/), whose reference part never calls the SQL side.

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
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from qtc.dsl import ast as A
from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.dsl.check import CheckedTemplate
from qtc.dsl.conventions import ORDINALS
from qtc.dsl.events import ROOM_KINDS, degenerate_kinds
from qtc.dsl.room_names import display_names
from qtc.dsl.functions import FUNCTIONS
from qtc.dsl.visit import Visitor
from .spatial import EpisodeSpace
from .values import Bag, Rel, and_, arithmetic, compare, distinct_sorted, hashable, is_true, not_, or_

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
            known = row["step"] if table.has_step else (row[table.known_from] or 0) if table.known_from else 0
            if horizon is None or known <= horizon:
                if horizon is not None and table.horizon_ends:
                    row = {**row, **{name: min(row[name], horizon) for name in table.horizon_ends}}
                by_episode[row["episode_id"]][table.sql_name].append(row)
    for physical in by_episode.values():
        rooms = physical[schema.JERICHO_ROOMS.sql_name]
        physical[schema.JERICHO_ROOMS.sql_name] = _numbered(rooms)
        renamed = {r["display_name"]: n["display_name"] for r, n in zip(rooms, physical[schema.JERICHO_ROOMS.sql_name])}
        physical[schema.EVENTS.sql_name] = [{**e, "subject": renamed.get(e["subject"], e["subject"])}
                                            if e["kind"] in ROOM_KINDS else e for e in physical[schema.EVENTS.sql_name]]
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


def _numbered(rooms: list[dict]) -> list[dict]:
    """The rooms kept, the visited ones named as an episode that entered only them would name them."""
    entered = sorted((r for r in rooms if r["visited"]), key=lambda r: (r["first_entered"] is None, r["first_entered"] or 0))
    names = display_names({r["room"]: r["title"] for r in entered})
    return [{**r, "display_name": names[r["room"]]} if r["visited"] else r for r in rooms]


def _episode_within(row: dict, horizon: int | None) -> dict:
    if horizon is None or row["n_steps"] <= horizon:
        return row
    died = row["death_step"] is not None and row["death_step"] <= horizon
    return {**row, "n_steps": horizon, "ended_by": HORIZON_ENDING,
            "death_step": row["death_step"] if died else None, "death_cause": row["death_cause"] if died else None}


# ---- candidates ------------------------------------------------------------------------------

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
    # Multiple choice: the SQL's row holds the distractors drawn; the reference, every value that may be
    # drawn (the choices domain less the correct answers, as text, sorted). None for an open question.
    distractors: list[str] | None = None


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


class Evaluator(Visitor):
    """Evaluates one checked template over the episodes of a set of tables, under a horizon.
    `value(e, scope)` computes an expression through `visit_<Node>`."""

    def __init__(self, checked: CheckedTemplate, tables: Tables, horizon: int | None = None):
        self.checked = checked
        self.template = checked.template
        self.let_exprs = {let.name: let.expr for let in self.template.lets}
        self.scalar_lets = [let.name for let in self.template.lets
                            if isinstance(checked.let_types.get(let.name), (T.Scalar, T.ListOf))]
        self.episodes = [e for e in cut_to_horizon(tables, horizon)
                         if checked.env in ("any", e.episode["env"])]
        self.spaces: dict[str, EpisodeSpace] = {}
        # A let's value, and a parameter's domain, depend on the episode and the parameters they read, not
        # on the other bindings: kept across candidates (a product of three events' parameters reads each
        # anchor, and each kind's subjects, many times).
        self.let_params = {name: self._params_read(expr) for name, expr in self.let_exprs.items()}
        # Only the template's own domains are kept, by id: one a caller makes may not outlive its id.
        self.domain_params = {id(domain): self._params_read(domain) for domain in
                              [p.domain for p in self.template.params] + [a.domain for a in self.template.adversarials]}
        self.kept: dict[tuple, Any] = {}
        self.degenerate = degenerate_kinds(self.template)

    def _params_read(self, e: A.Expr) -> tuple[str, ...]:
        """The parameters an expression reads, itself or through the lets it names, in declaration order."""
        read, pending, seen = set(), [e], set()
        while pending:
            for node in A.walk(pending.pop()):
                if isinstance(node, A.ParamRef):
                    read.add(node.name)
                elif isinstance(node, A.Name) and node.ref and node.ref[0] == "let" and node.name not in seen:
                    seen.add(node.name)
                    pending.append(self.let_exprs[node.name])
        return tuple(p.name for p in self.template.params if p.name in read)

    def _kept(self, key: tuple, compute):
        if key not in self.kept:
            self.kept[key] = compute()
        return self.kept[key]

    def let_value(self, name: str, scope: Scope):
        """A let's value for the scope's binding: one value per candidate, computed on first use; and
        computed once per episode and distinct values of the parameters it reads, whichever candidate
        first needs it."""
        if name not in scope.lets:
            key = ("let", id(scope.episode), name, *(hashable(scope.params[p]) for p in self.let_params[name]))
            scope.lets[name] = self._kept(key, lambda: self.value(self.let_exprs[name], scope))
        return scope.lets[name]

    # ---- candidates ----
    def candidates(self) -> list[Candidate]:
        """Every candidate of every episode: the answerable ones, then each adversarial parameter's."""
        found = []
        for episode in self.episodes:
            asked = []
            for params in self.bindings(episode):
                candidate = self.instance(episode, params)
                if candidate is not None:
                    asked.append(candidate)
            for adversarial in self.template.adversarials:
                for params in self.bindings(episode, {adversarial.param: adversarial.domain}):
                    asked.append(Candidate(episode.episode["episode_id"], True, params,
                                           {name: None for name in self.scalar_lets},
                                           displays=self._displays(episode, params, {}, None)))
            choices = self.template.choices
            if choices is not None:
                # A multiple-choice question needs as many wrong values as options besides 'none of these'.
                unintroduced = self._unintroduced(episode)
                element = choices.domain.ty.element if isinstance(choices.domain.ty, (T.Bag, T.ListOf)) else None
                values = [(value, text) for value, text in self.choice_values(episode)
                          if not _names_any(value, element, unintroduced)]
                for candidate in asked:
                    accepted = candidate.accepted or []
                    candidate.distractors = sorted(text for value, text in values if value not in accepted)
                asked = [c for c in asked if len(c.distractors) >= choices.needed(c.adversarial)]
            found += asked
        return found

    def choice_values(self, episode: EpisodeRows) -> list[tuple]:
        """The values of the choices domain on an episode, each with its text as an option shows it (a room
        by its display name): a question's distractors are those that are not correct answers
        (CONVENTIONS.md, Multiple choice)."""
        rooms = {r["room"]: r["display_name"] for r in episode.tables.get("rooms", [])}
        as_text = (lambda v: rooms.get(v) or str(v)) if self.checked.answer_type == "location" else str
        return [(v, as_text(v)) for v in self.domain(self.template.choices.domain, Scope(episode, {}, {}))]

    def bindings(self, episode: EpisodeRows, domains: dict[str, A.Expr] | None = None):
        """Every binding of the parameters, in declaration order; `domains` replaces some domains."""
        domains = domains or {}

        def extend(index: int, params: dict):
            if index == len(self.template.params):
                yield dict(params)
                return
            param = self.template.params[index]
            scope = Scope(episode, params, {})
            domain = domains.get(param.name, param.domain)
            if id(domain) in self.domain_params:
                key = ("domain", id(episode), id(domain), *(hashable(params[p]) for p in self.domain_params[id(domain)]))
                values = self._kept(key, lambda: self.domain(domain, scope))
            else:
                values = self.domain(domain, scope)
            # The kinds that make the answer's count 0 or 1 by construction are no values of the domain.
            for value in (v for v in values if v not in self.degenerate.get(param.name, ())):
                bound = {**params, param.name: value}
                if param.condition is None or is_true(self.value(param.condition, Scope(episode, bound, {}))):
                    yield from extend(index + 1, bound)

        yield from extend(0, {})

    def instance(self, episode: EpisodeRows, params: dict) -> Candidate | None:
        """The answerable candidate of one binding, or None when a require fails or the answer is null."""
        lets: dict[str, Any] = {}
        scope = Scope(episode, params, lets)
        for name in self.scalar_lets:  # shown with every answerable candidate (the SQL's l_<name>)
            self.let_value(name, scope)
        if not all(is_true(self.value(r, scope)) for r in self.template.requires):
            return None
        answer = self.value(self.template.answer, scope)
        if answer is None or (isinstance(answer, str) and not answer.strip()):  # a blank text is no answer
            return None
        unintroduced = self._unintroduced(episode)
        named = [(value, self.checked.param_types.get(name)) for name, value in params.items()]
        named += [(lets[name], self.checked.let_types[name]) for name in self.scalar_lets]
        if any(_names_any(value, ty, unintroduced) for value, ty in [*named, (answer, self.template.answer.ty)]):
            return None
        return Candidate(episode.episode["episode_id"], False, params, {n: lets[n] for n in self.scalar_lets},
                         answer, self.accepted(answer, scope), self.evidence(scope),
                         self._displays(episode, params, lets, answer))

    def _unintroduced(self, episode: EpisodeRows) -> set:
        """The names of the episode's things that were neither printed nor typed by the horizon, and the
        numbers of its visited rooms whose titles were not (a dark room's) (CONVENTIONS.md, Items): no
        answerable question, and no option, names one. None in an environment whose names need no introducing
        (schema.Environment.names_introduced: Crafter's things are its game's own words)."""
        if not schema.ENVIRONMENTS[episode.episode["env"]].names_introduced:
            return set()
        introduced = {row["item"] for row in episode.tables.get("introduced_items", [])}
        objects = episode.tables.get("objects", [])  # none: recorded before object trees, or made by hand
        rooms = {row["room"] for row in episode.tables.get("rooms", []) if row["visited"] and row["title"] not in introduced}
        return (rooms if objects else set()) | {row["name"] for row in objects if row["name"] not in introduced} - {None}

    def premise_holds(self, episode: EpisodeRows, params: dict, adversarial: A.Adversarial) -> bool:
        """Whether the premise an adversarial clause states as a condition holds for a binding (then its
        false-premise candidate is not asked); null is not true."""
        return is_true(self.value(adversarial.premise, Scope(episode, params, {})))

    def accepted(self, answer, scope: Scope) -> list:
        """Every correct answer: the answer, then the other values the `accept` clause lists, sorted."""
        accept = self.template.accept
        others = (self.value(accept, scope) or []) if accept is not None else []
        return [answer] + distinct_sorted(a for a in others if a is not None and a != answer)

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
        return self.visit(e, scope)

    def visit_Literal(self, e: A.Literal, scope):
        return e.value

    def visit_ListLiteral(self, e: A.ListLiteral, scope):
        return [self.value(item, scope) for item in e.items]

    def visit_ParamRef(self, e: A.ParamRef, scope):
        return scope.params[e.name]

    def visit_Name(self, e: A.Name, scope):
        kind = e.ref[0]
        if kind == "column":
            return scope.row[e.name]
        if kind == "let":
            return self.let_value(e.name, scope)
        if kind == "table":
            table: schema.Table = e.ref[1]
            return Rel(list(scope.episode.tables[table.name]), [("step", False)] if table.has_step else [], e.ty)
        raise Unsupported(f"the name '{e.name}' ({kind})")

    def visit_Range(self, e: A.Range, scope):
        low, high = self.value(e.low, scope), self.value(e.high, scope)
        return None if low is None or high is None else list(range(int(low), int(high) + 1))

    def visit_Field(self, e: A.Field, scope):
        if isinstance(e.base, A.Name) and e.base.ref == ("vocab", None):
            return Bag([(v, None) for v in scope.episode.vocab.get(e.name, [])])
        base = self.value(e.base, scope)
        if isinstance(e.base.ty, T.Relation):
            return Bag([(row[e.name], row.get("step") if base.type.has_step else None) for row in base.rows])
        return None if base is None else base[e.name]  # a row, or a displacement

    def visit_Index(self, e: A.Index, scope):
        base, index = self.value(e.base, scope), self.value(e.index, scope)
        if isinstance(e.base.ty, T.ListOf):
            # A list counts as ordinals do: 1 is the first element, -1 the last; beyond the ends, null.
            if base is None or index is None or index == 0 or abs(index) > len(base):
                return None
            return base[index - 1] if index > 0 else base[index]
        matches = [row for row in self.ordered(base, scope) if index is not None and row["step"] == index]
        return matches[0] if matches else None

    def visit_Where(self, e: A.Where, scope):
        base = self.value(e.base, scope)
        rows = base.rows
        windows, rest = _step_windows(e.condition)
        for window in windows:
            # `step in low..high` (bounds that do not depend on the row) is a cut on the step column;
            # the rows it keeps need only the other conjuncts: the condition holds when all of them do.
            low, high = self.value(window.low, scope), self.value(window.high, scope)
            rows = [] if low is None or high is None else [row for row in rows if low <= row["step"] <= high]
        kept = [row for row in rows if all(is_true(self.value(c, scope.with_row(row))) for c in rest)]
        return Rel(kept, base.keys, base.type)

    def visit_Sort(self, e: A.Sort, scope):
        base = self.value(e.base, scope)
        return Rel(base.rows, [(key.expr, key.descending) for key in e.keys], base.type)

    def visit_Unary(self, e: A.Unary, scope):
        operand = self.value(e.operand, scope)
        if e.op == "not":
            return not_(operand)
        return None if operand is None else -operand

    def visit_Binary(self, e: A.Binary, scope):
        if isinstance(e.left.ty, T.Bag):  # bag - bag: the values of the left that the right lacks
            left = self.value(e.left, scope)
            right = {hashable(v) for v in self.value(e.right, scope).values()}
            return Bag([(v, s) for v, s in left.items if hashable(v) not in right])
        left, right = self.value(e.left, scope), self.value(e.right, scope)
        if e.op == "and":
            return and_(left, right)
        if e.op == "or":
            return or_(left, right)
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            return compare(e.op, left, right)
        return arithmetic(e.op, left, right)

    def visit_IsNull(self, e: A.IsNull, scope):
        return (self.value(e.item, scope) is None) != e.negated

    def visit_In(self, e: A.In, scope):
        item = self.value(e.item, scope)
        if isinstance(e.container, A.Range):
            low, high = self.value(e.container.low, scope), self.value(e.container.high, scope)
            found = and_(compare("<=", low, item), compare("<=", item, high))
        else:
            container = self.value(e.container, scope)
            values = container.values() if isinstance(container, Bag) else container
            found = None if item is None or values is None else item in [v for v in values if v is not None]
        return not_(found) if e.negated else found

    def visit_Call(self, e: A.Call, scope):
        return FUNCTIONS[e.function].reference(self, e, scope)

    def space(self, scope: Scope) -> EpisodeSpace:
        """The spatial state of the scope's episode, for the spatial primitives."""
        episode_id = scope.episode.episode["episode_id"]
        if episode_id not in self.spaces:
            self.spaces[episode_id] = EpisodeSpace(scope.episode.tables)
        return self.spaces[episode_id]

    # ---- relations and rows ----
    def ordered(self, rel: Rel, scope: Scope) -> list[dict]:
        """The rows of a relation in its order, made total by its other columns (see the module doc)."""
        named = {key for key, _ in rel.keys if isinstance(key, str)}
        keys = rel.keys + [(name, False) for name, ty in rel.type.columns
                           if name not in named and not isinstance(ty, T.ListOf)]

        def key_values(row: dict) -> list:
            return [row[key] if isinstance(key, str) else self.value(key, scope.with_row(row)) for key, _ in keys]

        def by_keys(a: tuple[dict, list], b: tuple[dict, list]) -> int:
            for (_, descending), x, y in zip(keys, a[1], b[1]):
                if x == y:
                    continue
                if x is None or y is None:  # nulls last, whichever the direction
                    return 1 if x is None else -1
                return (1 if x > y else -1) * (-1 if descending else 1)
            return 0

        decorated = sorted(((row, key_values(row)) for row in rel.rows), key=functools.cmp_to_key(by_keys))
        return [row for row, _ in decorated]


def _names_any(value, ty, names: set) -> bool:
    """Whether a value of type `ty` (a name or a room, or a list of them) is, or holds, one of `names`
    (names and room numbers)."""
    if isinstance(ty, (T.ListOf, T.Bag)):
        return any(_names_any(v, ty.element, names) for v in value or [])
    if ty in T.NAMING:
        return isinstance(value, str) and value in names
    return ty == T.ROOM and isinstance(value, int) and value in names


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
                        for bound in (condition.container.low, condition.container.high) for node in A.walk(bound))):
        return (condition.container,), ()
    return (), (condition,)


def called_functions(template: A.Template) -> set[str]:
    """Every function a template calls, in any clause."""
    return {node.function for _, root in template.expressions() for node in A.walk(root) if isinstance(node, A.Call)}


def unsupported_functions(template: A.Template) -> list[str]:
    """The functions `template` calls that this evaluator does not interpret, sorted: those without a
    function record (and so without a reference part)."""
    return sorted(f for f in called_functions(template) if f not in FUNCTIONS)


def evaluate(checked: CheckedTemplate, tables: Tables, horizon: int | None = None) -> list[Candidate]:
    """Every candidate of a template over the episodes of `tables`, as the compiled SQL would list them."""
    return Evaluator(checked, tables, horizon).candidates()
