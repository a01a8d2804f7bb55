"""The events table of every game and the plausible subjects of each kind: derived at load from the
tables the store has already built (CONVENTIONS.md, Events).

One SQL derivation per kind of dsl/events.py, each over one derived table or the steps, in each
environment's trace record (environment.py); an event is at most one row per (step, kind, subject).
Everything here is computed from what every trace holds, so a trace recorded before these tables existed
loads with them. (Each game's `rejected` column is its record's `derive`.)
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from qtc.dsl import schema
from qtc.dsl.events import KINDS, SUBJECT_VOCABULARY
from qtc.runtime.arrow import arrow_rows

from .environment import registered
from .registry import TRACE_ENVIRONMENTS

# Each kind's rows (episode_id, step, subject) over the store's tables, registered under their sql_name:
# each environment's record's event_sql.
assert all(tuple(env.event_sql) == KINDS[name] for name, env in TRACE_ENVIRONMENTS.items()), \
    "one derivation per kind of dsl/events.py"


def _events_sql(env: str) -> str:
    parts = [f"SELECT episode_id, step, '{kind}' AS kind, subject, {k} AS k FROM ({sql}) AS e(episode_id, step, subject)"
             for k, (kind, sql) in enumerate(TRACE_ENVIRONMENTS[env].event_sql.items())]
    return (f"SELECT episode_id, step, kind, subject FROM ({' UNION ALL '.join(parts)}) "
            "ORDER BY episode_id, step, k, subject")


def events(reader: duckdb.DuckDBPyConnection, tables: dict[schema.Table, pa.Table], envs: set[str]) -> pa.Table:
    """The events table of every episode of `envs` (at least one), from the store's other tables."""
    statements = {env: _events_sql(env) for env in sorted(envs)}
    with registered(reader, tables, " ".join(statements.values())):
        parts = [arrow_rows(reader, sql, TRACE_ENVIRONMENTS[env].event_parameters) for env, sql in statements.items()]
    return pa.concat_tables(parts)


def event_subjects(headers: list[dict], vocabulary, tables: dict[schema.Table, pa.Table]) -> list[tuple]:
    """The rows of event_subjects (episode_id, step, kind, subject, met): per episode, each kind's
    plausible subjects, from the game's vocabulary (`vocabulary(header)`), at step 0 and not `met`; then,
    `met`, each of them the episode met, at the first step it did (its record's `met_names`: a room's names
    once it entered the room, the things it carried or met by name (CONVENTIONS.md, Items), the terrain it
    started on), and for first sightings what its first view showed (`shown_first`); then the plausible
    subjects of kinds without a vocabulary (`fixed_subjects`). Cut at a horizon, the plausible subjects less
    those met are what the player had not met by then."""
    met = _met_steps(headers, tables)
    shown_first = {episode: seen for env in {h["env"] for h in headers}
                   for episode, seen in TRACE_ENVIRONMENTS[env].shown_first(tables).items()}
    rows = []
    for h in headers:
        episode, vocab = h["episode_id"], vocabulary(h)
        for kind, vocab_kinds in SUBJECT_VOCABULARY[h["env"]].items():
            met_at = met.get(episode, {})
            if kind == "first_seen":
                met_at = {**met_at, **dict.fromkeys(shown_first.get(episode, ()), 0)}
            subjects = dict.fromkeys(subject for vocab_kind in vocab_kinds for subject in vocab.get(vocab_kind, ()))
            rows += [(episode, 0, kind, subject, False) for subject in subjects]
            rows += [(episode, met_at[subject], kind, subject, True) for subject in subjects if subject in met_at]
        for kind, subjects in TRACE_ENVIRONMENTS[h["env"]].fixed_subjects.items():
            rows += [(episode, 0, kind, subject, False) for subject in subjects]
    return rows


def _met_steps(headers: list[dict], tables: dict[schema.Table, pa.Table]) -> dict[str, dict[str, int]]:
    """Per episode, each name it met with the first step it met it, by its environment's `met_names`."""
    met: dict[str, dict[str, int]] = {}

    def add(episode: str, name: str, step: int) -> None:
        names = met.setdefault(episode, {})
        names[name] = min(step, names.get(name, step))
    for env, record in TRACE_ENVIRONMENTS.items():
        own = [h for h in headers if h["env"] == env]
        if own:
            record.met_names(own, tables, add)
    return met
