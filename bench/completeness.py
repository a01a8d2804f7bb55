"""Completeness: the bindings an independent enumeration finds answerable that qtc never offers, and why.

    python bench/completeness.py --traces TRACES... [--horizon N] [--per-template K] [--seed S]
                                 [--templates PATH...] [--only ID...]

For each template and episode, each parameter ranges over a universe wider than the domain the template
declares: every value of the column that domain reads, unfiltered (`(events | where kind == $k).subject`:
every subject of every kind), or of its type in any column of the episode's tables, within the horizon;
a list the template writes keeps its values. A sample of at
most K bindings per template (seeded) is evaluated by the reference evaluator (dsl/reference/): a
binding is answerable when the template's answer is not null for it. Each answerable binding the
compiled SQL does not offer (every binding, no cap) is put down to the first reason that holds:

- `domain`: a value lies outside the parameter's declared domain (a template's choice, in its text);
- `condition`: a parameter's `where` condition or a `require` fails (likewise);
- `too few options`: a multiple-choice question short of distractors (CONVENTIONS.md, Multiple choice);
- `counted once`: a kind whose count is 0 or 1 by construction (CONVENTIONS.md, Events; dsl/events.py);
- `not introduced`: it names a thing whose name was not printed or typed by the horizon (Items);
- `unexplained`: none of these: a binding qtc should offer and does not (a bug).

Bindings the reference cannot evaluate at all (a value no domain would give, that an expression of the
template cannot take) are counted apart (`not evaluable`), not as answerable.

Prints one line per template: the answerable bindings sampled and those not offered, by reason, or why
it was not measured (no episode of its env among the traces; a function the reference does not
interpret); then the totals. Exits 1 if any binding is unexplained. Slow on long episodes: the product of universes is sampled, not enumerated.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

from qtc.dsl import ast as A
from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.dsl.compile import statement
from qtc.dsl.events import degenerate_kinds
from qtc.dsl.library import load_library
from qtc.dsl.reference.evaluator import Evaluator, Scope, read_tables, unsupported_functions
from qtc.dsl.reference.values import hashable, is_true
from qtc.runtime.trace.store import open_store

ROOT = Path(__file__).resolve().parents[1]
REASONS = ("domain", "condition", "too few options", "counted once", "not introduced", "unexplained",
           "not evaluable")


def column_of(domain: A.Expr) -> tuple[str, str] | None:
    """The table and column a domain reads (`(events | where kind == $k).subject`: events, subject)."""
    if not isinstance(domain, A.Field):
        return None
    base = domain.base
    while isinstance(base, (A.Where, A.Sort)):
        base = base.base
    if isinstance(base, A.Name) and base.ref and base.ref[0] == "table":
        return base.ref[1].name, domain.name
    return None


def reads_params(e: A.Expr) -> bool:
    return any(isinstance(node, A.ParamRef) for node in A.walk(e))


def universe(evaluator: Evaluator, episode, param, ty) -> list:
    """The values a parameter ranges over: every value of the column its domain reads, unfiltered, or,
    for a domain that reads no one column, every value of its type in any column of the episode's tables
    (steps: 1..n) and, if the domain reads no other parameter, its own values (`words(steps.reason)`:
    the keywords, which no column holds)."""
    read = column_of(param.domain)
    if read is not None and read[0] in episode.tables:
        return sorted({row[read[1]] for row in episode.tables[read[0]] if row.get(read[1]) is not None}, key=str)
    if ty == T.STEP:
        return list(range(1, episode.episode["n_steps"] + 1))
    values = set()
    if not reads_params(param.domain):
        values.update(hashable(v) for v in evaluator.domain(param.domain, Scope(episode, {}, {})))
    for name, rows in episode.tables.items():
        table = schema.tables_for(episode.episode["env"]).get(name)
        columns = [] if table is None else [c.name for c in table.columns if c.type == ty]
        values.update(row[c] for row in rows for c in columns if row.get(c) is not None)
    if ty == T.EVENT:
        values.update(episode.vocab.get("event", []))
    return sorted(values, key=str)


def offered(con, compiled, horizon: int | None) -> set[tuple]:
    """The answerable bindings the compiled SQL offers, every one (no cap)."""
    con.execute("RESET VARIABLE qtc_horizon" if horizon is None else f"SET VARIABLE qtc_horizon = {int(horizon)}")
    con.execute("RESET VARIABLE qtc_max_candidates")
    relation = con.sql(statement(compiled, None))
    params = [f"p_{p.name}" for p in compiled.checked.template.params]
    index = {name: i for i, name in enumerate(relation.columns)}
    return {(row[index["episode_id"]], *(str(row[index[p]]) for p in params))
            for row in relation.fetchall() if not row[index["adversarial"]]}


def too_few_options(evaluator: Evaluator, episode, params: dict, unintroduced: set) -> bool:
    """Whether a multiple-choice binding has fewer wrong values than its options need (the reference's
    count: the choices domain less the accepted answers and the names not introduced)."""
    candidate = evaluator.instance(episode, params)
    right = [candidate.answer, *(candidate.accepted or [])]
    wrong = [text for value, text in evaluator.choice_values(episode)
             if value not in right and not (isinstance(value, str) and value in unintroduced)]
    return len(wrong) < evaluator.template.choices.needed(False)


def reason(evaluator: Evaluator, episode, params: dict, degenerate: dict, unintroduced: set) -> str | None:
    """Why qtc does not ask this binding, or None if the binding is not answerable at all."""
    template = evaluator.template
    scope = Scope(episode, params, {})
    answer = evaluator.value(template.answer, scope)
    if answer is None:
        return None
    bound: dict = {}
    for param in template.params:
        if params[param.name] not in evaluator.domain(param.domain, Scope(episode, bound, {})):
            return "domain"
        bound[param.name] = params[param.name]
        if param.condition is not None and not is_true(evaluator.value(param.condition, Scope(episode, bound, {}))):
            return "condition"
    if not all(is_true(evaluator.value(r, scope)) for r in template.requires):
        return "condition"
    if template.choices is not None and too_few_options(evaluator, episode, params, unintroduced):
        return "too few options"
    if any(params.get(p) in kinds for p, kinds in degenerate.items()):
        return "counted once"
    named = [*params.values(), answer, *(v for v in scope.lets.values())]
    if any(v in unintroduced for value in named for v in (value if isinstance(value, (list, set)) else [value])
           if isinstance(v, str)):
        return "not introduced"
    return "unexplained"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", nargs="+", required=True)
    parser.add_argument("--templates", nargs="*", default=[str(ROOT / "templates")])
    parser.add_argument("--only", nargs="*", default=[], help="template ids to measure (default: all)")
    parser.add_argument("--horizon", type=int)
    parser.add_argument("--per-template", type=int, default=400, help="bindings sampled per template and episode")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    library = load_library(args.templates)
    con = open_store(*args.traces)
    tables = read_tables(con)
    totals: Counter = Counter()
    measured = silent = considered = 0
    for compiled in library.compiled:
        if args.only and compiled.id not in args.only:
            continue
        considered += 1
        missing = unsupported_functions(compiled.checked.template)
        evaluator = None if missing else Evaluator(compiled.checked, tables, args.horizon)
        if missing or not evaluator.episodes:
            why = (f"the reference does not interpret {', '.join(missing)}" if missing
                   else f"no {compiled.env} episode among the traces")
            print(f"{compiled.id:<40} not measured: {why}", flush=True)
            continue
        measured += 1
        asked = offered(con, compiled, args.horizon)
        degenerate = degenerate_kinds(compiled.checked.template)
        found: Counter = Counter()
        answerable = 0
        chance = random.Random(f"{args.seed}|{compiled.id}")
        for episode in evaluator.episodes:
            unintroduced = evaluator._unintroduced(episode)
            spaces = []
            for param in compiled.checked.template.params:
                if isinstance(param.domain, A.ListLiteral):
                    spaces.append(evaluator.domain(param.domain, Scope(episode, {}, {})))
                else:
                    spaces.append(universe(evaluator, episode, param, compiled.checked.param_types[param.name]))
            size = 1
            for space in spaces:
                size *= len(space)
            if size == 0:
                continue
            picks = (range(size) if size <= args.per_template else chance.sample(range(size), args.per_template))
            names = [p.name for p in compiled.checked.template.params]
            for pick in picks:
                values, rest = [], pick
                for space in reversed(spaces):
                    rest, i = divmod(rest, len(space))
                    values.append(space[i])
                params = dict(zip(names, reversed(values)))
                key = (episode.episode["episode_id"], *(str(params[n]) for n in names))
                try:
                    why = reason(evaluator, episode, params, degenerate, unintroduced)
                except (TypeError, ValueError, KeyError, IndexError):  # a value no domain would give
                    found["not evaluable"] += 1
                    continue
                if why is None:
                    continue
                answerable += 1
                if key not in asked:
                    found[why] += 1
        unmeasured = [p.name for p in compiled.checked.template.params
                      if reads_params(p.domain) and column_of(p.domain) is None
                      and not any(universe(evaluator, e, p, compiled.checked.param_types[p.name])
                                  for e in evaluator.episodes)]
        print(f"{compiled.id:<40} answerable {answerable:>6}  not offered or not evaluable: "
              + (", ".join(f"{r} {found[r]}" for r in REASONS if found[r]) or "none")
              + (f"  (no universe wider than the domain of {', '.join(unmeasured)}: it reads another"
                 " parameter, and no column holds its type)" if unmeasured else ""), flush=True)
        totals.update(found)
        silent += answerable == 0
    print(f"{measured} of {considered} templates measured ({silent} with no answerable binding "
          "in the sample); not offered: "
          + (", ".join(f"{r} {totals[r]}" for r in REASONS if totals[r]) or "none"))
    return 1 if totals["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
