"""Running the template library two ways on drawn episodes: the compiled SQL on a trace store, and the
reference evaluator (dsl/reference/evaluator.py) on the same store's rows; and comparing what they ask.

Both sides yield reference.Candidate values, so a candidate is compared whole: its episode, adversarial
flag and bindings (the key), its scalar lets, answer, accepted answers, evidence and display names.
"""

from __future__ import annotations

import functools
import json
import math
import tempfile
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
from support.strategies import TraceEpisode, write_episodes
from support.paths import TEMPLATES

from qtc.dsl.compile import CompiledTemplate
from qtc.dsl.compile import statement
from qtc.dsl.ir.lower import PREMISE_COLUMN
from qtc.dsl.library import load_library
from qtc.dsl.reference.evaluator import Candidate, Evaluator, Tables, called_functions, read_tables, unsupported_functions
from qtc.runtime.trace.store import open_store



@functools.cache
def library() -> tuple[CompiledTemplate, ...]:
    """Every compiled template of templates/, so that new families are covered as they are added."""
    return tuple(load_library([TEMPLATES]).compiled)


def templates_for(env: str) -> list[CompiledTemplate]:
    return [c for c in library() if c.env in (env, "any")]


def unsupported_reason(compiled: CompiledTemplate) -> str | None:
    missing = unsupported_functions(compiled.checked.template)
    return f"the reference evaluator does not interpret {', '.join(missing)} yet" if missing else None


# Functions whose compiled SQL disagrees with CONVENTIONS.md or the reference, reported to the compiler's
# owner and each shown by a strict xfail test (in tests/property/test_regressions.py). The differential test leaves
# the templates that call them out until the fix lands (then delete the entry and the xfail marker).
KNOWN_BUG_FUNCTIONS: dict[str, str] = {}


def known_bug(compiled: CompiledTemplate) -> str | None:
    bugs = [KNOWN_BUG_FUNCTIONS[f] for f in sorted(called_functions(compiled.checked.template) & set(KNOWN_BUG_FUNCTIONS))]
    return "; ".join(bugs) or None


def checked_templates(env: str) -> list[CompiledTemplate]:
    """The templates of `env` whose SQL the reference evaluator can check."""
    return [c for c in templates_for(env) if not unsupported_reason(c) and not known_bug(c)]


def load(episodes: list[TraceEpisode], names: list[str] | None = None) -> duckdb.DuckDBPyConnection:
    """A trace store (in memory, primitives registered) of `episodes`, written as trace files first.

    `names` renames the files (in the order of `episodes`), which sets the order they are loaded in."""
    with tempfile.TemporaryDirectory() as directory:
        paths = write_episodes(episodes, Path(directory))
        for path, name in zip(paths, names or []):
            path.rename(path.with_name(name))
        return open_store(directory)


@contextmanager
def stored(episodes: list[TraceEpisode], names: list[str] | None = None):
    con = load(episodes, names)
    try:
        yield con
    finally:
        con.close()


@dataclass
class Store:
    """A loaded trace store and its tables read back as rows."""
    con: duckdb.DuckDBPyConnection
    tables: Tables


_STORES: OrderedDict[str, Store] = OrderedDict()
STORES_KEPT = 8


def store_of(episodes: list[TraceEpisode]) -> Store:
    """The store of `episodes`, loaded once: derandomized runs draw the same episodes for every
    template of an env, and loading is a large part of an example's cost."""
    key = json.dumps([(e.header, e.steps) for e in episodes], sort_keys=True)
    if key not in _STORES:
        con = load(episodes)
        _STORES[key] = Store(con, read_tables(con))
        if len(_STORES) > STORES_KEPT:
            _STORES.popitem(last=False)[1].con.close()
    _STORES.move_to_end(key)
    return _STORES[key]


def sql_candidates(con: duckdb.DuckDBPyConnection, compiled: CompiledTemplate,
                   horizon: int | None, cap: int | None = None, order: str = "domain",
                   premise: bool = False) -> list[Candidate]:
    """The candidates of the compiled SQL: every binding, or at most `cap` per episode and side, drawn in
    `order` (dsl/ir/sample.py); with `premise`, only the false premises checked false, as `qtc generate`
    keeps them. Without a horizon, a sampled statement is the one `qtc generate` runs then (its tables read
    without their horizon cuts: dsl/ir/emit.py)."""
    con.execute("RESET VARIABLE qtc_horizon" if horizon is None else f"SET VARIABLE qtc_horizon = {int(horizon)}")
    con.execute("RESET VARIABLE qtc_max_candidates" if cap is None else f"SET VARIABLE qtc_max_candidates = {cap}")
    relation = con.sql(statement(compiled, cap, order=order, premise=premise, horizon=horizon is not None))
    rows = [dict(zip(relation.columns, row)) for row in relation.fetchall()]
    if premise:
        rows = [row for row in rows if not row["adversarial"] or row[PREMISE_COLUMN]]
    params = [p.name for p in compiled.checked.template.params]
    return [Candidate(
        row["episode_id"], row["adversarial"], {p: row[f"p_{p}"] for p in params},
        {name: row[f"l_{name}"] for name in compiled.lets}, row["answer"], row.get("accepted"),
        row["evidence"] or [],
        {name: row[f"display_{name}"] for name in [*compiled.room_outputs, "answer"] if f"display_{name}" in row},
        row.get("distractors"))
        for row in rows]


def reference_candidates(store: Store, compiled: CompiledTemplate, horizon: int | None) -> list[Candidate]:
    return Evaluator(compiled.checked, store.tables, horizon).candidates()


def _canonical(value):
    """A hashable value in which floats that print alike compare alike."""
    if isinstance(value, float):
        return round(value, 9) if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _canonical(v)) for k, v in value.items()))
    return value


def key(candidate: Candidate) -> tuple:
    return candidate.episode_id, candidate.adversarial, _canonical(candidate.params)


def outcome(candidate: Candidate) -> dict:
    return {"lets": _canonical(candidate.lets), "answer": _canonical(candidate.answer),
            "accepted": _canonical(candidate.accepted), "evidence": _canonical(candidate.evidence),
            "displays": _canonical(candidate.displays)}


def differences(actual: list[Candidate], expected: list[Candidate], limit: int = 6, sampled: bool = False) -> list[str]:
    """What `actual` (the compiled SQL) gets wrong against `expected` (the reference), readably; a
    `sampled` run may leave candidates out, but every one it has must be the reference's."""
    got, want = {key(c): c for c in actual}, {key(c): c for c in expected}
    problems = [] if sampled else [f"missing from the SQL: {want[k]}" for k in sorted(set(want) - set(got), key=repr)]
    problems += [f"extra in the SQL: {got[k]}" for k in sorted(set(got) - set(want), key=repr)]
    for k in sorted(set(got) & set(want), key=repr):
        wrong = {field: (value, outcome(want[k])[field]) for field, value in outcome(got[k]).items()
                 if value != outcome(want[k])[field]}
        # Against the reference (which gives every value that may be drawn): each drawn once, only from
        # the wrong values. Two SQL runs (metamorphic tests) may draw differently: the draw hashes values.
        drawn, pool = got[k].distractors, want[k].distractors
        if drawn is not None and pool is not None and (len(set(drawn)) != len(drawn) or not set(drawn) <= set(pool)):
            wrong["distractors"] = (drawn, pool)
        if wrong:
            problems.append(f"{k}: " + "; ".join(f"{field}: SQL {sql!r}, reference {ref!r}"
                                                for field, (sql, ref) in wrong.items()))
    if len(problems) > limit:
        problems = problems[:limit] + [f"... and {len(problems) - limit} more"]
    return problems
