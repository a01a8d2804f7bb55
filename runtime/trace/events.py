"""The events table of every game, the plausible subjects of each kind, and the rejected-command flag:
derived at load from the tables the store has already built (CONVENTIONS.md, Events; Rejected commands).

One SQL derivation per kind of dsl/events.py, each over one derived table or the steps; an event is at
most one row per (step, kind, subject). Everything here is computed from what every trace holds, so a
trace recorded before these tables existed loads with them.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import duckdb
import pyarrow as pa

from qtc.dsl import crafter_data, schema
from qtc.dsl.events import DAMAGE_CAUSES, KINDS, STAT_LOW_LEVEL, SUBJECT_VOCABULARY
from qtc.dsl.rejected import parser_refused

# Each kind's rows (episode_id, step, subject) over the store's tables, registered under their sql_name.
def _text_game_kinds(env: str) -> dict[str, str]:
    """The kinds of a text game (Jericho, TextWorld), over its tables of Jericho's shape."""
    return {
        "item_gained": f"SELECT DISTINCT episode_id, step, item FROM {env}_item_events WHERE change = 'gained'",
        "item_lost": f"SELECT DISTINCT episode_id, step, item FROM {env}_item_events WHERE change = 'lost'",
        "room_entered": f"SELECT e.episode_id, e.step, r.display_name FROM {env}_room_events e JOIN {env}_rooms r "
                        "USING (episode_id, room) WHERE e.change = 'entered' AND e.step >= 1",
        "room_left": f"SELECT e.episode_id, e.step, r.display_name FROM {env}_room_events e JOIN {env}_rooms r "
                     "USING (episode_id, room) WHERE e.change = 'left'",
        "score_changed": f"SELECT episode_id, step, NULL FROM {env}_steps WHERE reward != 0",
        "death": f"SELECT episode_id, death_step, NULL FROM episodes WHERE env = '{env}' AND death_step IS NOT NULL",
        "first_seen": f"SELECT episode_id, min(step), item FROM {env}_sightings GROUP BY episode_id, item "
                      "HAVING min(step) >= 1",
        "score_changed_by": f"SELECT episode_id, step, CAST(reward AS VARCHAR) FROM {env}_steps WHERE reward != 0",
        "action": f"SELECT episode_id, step, command FROM {env}_steps",
    }


_JERICHO_KINDS = _text_game_kinds("jericho")
# Crafter's steps with whether the player was asleep before each (it starts awake).
_CRAFTER_SLEEP = ("SELECT *, coalesce(lag(sleeping) OVER (PARTITION BY episode_id ORDER BY step), false) AS was_sleeping "
                  "FROM crafter_steps")
_CRAFTER_KINDS = {
    "achievement": "SELECT DISTINCT episode_id, step, achievement FROM crafter_achievements",
    "item_gained": "SELECT episode_id, step, item FROM crafter_item_events WHERE change = 'gained' "
                   "AND NOT list_contains($stats, item)",
    "item_lost": "SELECT episode_id, step, item FROM crafter_item_events WHERE change = 'lost' "
                 "AND NOT list_contains($stats, item)",
    "damage": "SELECT DISTINCT episode_id, step, cause FROM crafter_damage",
    "sleep": f"SELECT episode_id, step, NULL FROM ({_CRAFTER_SLEEP}) WHERE sleeping AND NOT was_sleeping",
    "wake": f"SELECT episode_id, step, NULL FROM ({_CRAFTER_SLEEP}) WHERE was_sleeping AND NOT sleeping",
    "stat_low": "SELECT now.episode_id, now.step, now.item FROM crafter_inventory now JOIN crafter_inventory before "
                "ON before.episode_id = now.episode_id AND before.step = now.step - 1 AND before.item = now.item "
                "WHERE list_contains($stats, now.item) AND now.count < $level AND before.count >= $level",
    "terrain_first": "SELECT episode_id, min(step), terrain_after FROM crafter_steps s WHERE terrain_after != "
                     "(SELECT terrain_before FROM crafter_steps f WHERE f.episode_id = s.episode_id AND f.step = 1) "
                     "GROUP BY episode_id, terrain_after",
    "death": "SELECT episode_id, death_step, NULL FROM episodes WHERE env = 'crafter' AND death_step IS NOT NULL",
    "first_seen": "SELECT episode_id, min(step), seen FROM (SELECT episode_id, step, material AS seen "
                  "FROM crafter_view UNION ALL SELECT episode_id, step, creature FROM crafter_creatures) "
                  "WHERE seen IS NOT NULL GROUP BY episode_id, seen HAVING min(step) >= 1",
    "action": "SELECT episode_id, step, action FROM crafter_steps",
}
_KIND_SQL = {"jericho": _JERICHO_KINDS, "crafter": _CRAFTER_KINDS, "textworld": _text_game_kinds("textworld")}
assert all(tuple(_KIND_SQL[env]) == KINDS[env] for env in schema.ENVS), "one derivation per kind of dsl/events.py"


def _events_sql(env: str) -> str:
    parts = [f"SELECT episode_id, step, '{kind}' AS kind, subject, {k} AS k FROM ({sql}) AS e(episode_id, step, subject)"
             for k, (kind, sql) in enumerate(_KIND_SQL[env].items())]
    return (f"SELECT episode_id, step, kind, subject FROM ({' UNION ALL '.join(parts)}) "
            "ORDER BY episode_id, step, k, subject")


def events(reader: duckdb.DuckDBPyConnection, tables: dict[schema.Table, pa.Table], envs: set[str]) -> pa.Table:
    """The events table of every episode of `envs` (at least one), from the store's other tables."""
    with _registered(reader, tables):
        parts = [reader.sql(_events_sql(env), params=_parameters(env)).to_arrow_table() for env in sorted(envs)]
    return pa.concat_tables(parts)


def _parameters(env: str) -> dict:
    return {"stats": list(crafter_data.STATS), "level": STAT_LOW_LEVEL} if env == "crafter" else {}


@contextmanager
def _registered(reader: duckdb.DuckDBPyConnection, tables: dict[schema.Table, pa.Table]):
    """The store's tables as views of `reader`, by their DuckDB names, while the derivations run."""
    for table, rows in tables.items():
        # Named by the schema (the store's SQL leaves some unnamed); a steps table is read before its
        # last column, `rejected`, is added.
        names = [c.name for c in table.all_columns][:rows.num_columns]
        reader.register(table.sql_name, rows.rename_columns(names))
    try:
        yield
    finally:
        for table in tables:
            reader.unregister(table.sql_name)


# A numbered display name ("Forest (2)") is one of the rooms named "Forest".
_NUMBERED = re.compile(r" \(\d+\)$")


def event_subjects(headers: list[dict], vocabulary, tables: dict[schema.Table, pa.Table]) -> list[tuple]:
    """The rows of event_subjects (episode_id, step, kind, subject, met): per episode, each kind's
    plausible subjects, from the game's vocabulary (`vocabulary(header)`), at step 0 and not `met`; then,
    `met`, each of them the episode met, at the first step it did: a room's names once it entered the
    room, the things it carried or met by name (CONVENTIONS.md, Items), the terrain it started on, and
    for first sightings what its first view showed. Cut at a horizon, the plausible subjects less those
    met are what the player had not met by then."""
    met = _met_steps(headers, tables)
    shown_first = _first_view(tables)
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
        if h["env"] == "crafter":
            rows += [(episode, 0, "damage", cause, False) for cause in DAMAGE_CAUSES]
    return rows


def _met_steps(headers: list[dict], tables: dict[schema.Table, pa.Table]) -> dict[str, dict[str, int]]:
    """Per episode, each name it met with the first step it met it: Jericho's things carried (before step
    1: step 0) or met by name, and its rooms' names (as listed, displayed, or displayed without their
    number: "Forest" once in "Forest (2)") from the step it entered them (0: where it started);
    Crafter's terrain it started on."""
    met: dict[str, dict[str, int]] = {}

    def add(episode: str, name: str, step: int) -> None:
        names = met.setdefault(episode, {})
        names[name] = min(step, names.get(name, step))
    for steps in (schema.JERICHO_STEPS, schema.TEXTWORLD_STEPS):
        if steps not in tables:
            continue
        for row in tables[steps].select(["episode_id", "step", "inventory_before", "inventory_after"]).to_pylist():
            for item in row["inventory_before"]:
                add(row["episode_id"], item, row["step"] - 1)
            for item in row["inventory_after"]:
                add(row["episode_id"], item, row["step"])
    if schema.JERICHO_NAMED_ITEMS in tables:
        for row in tables[schema.JERICHO_NAMED_ITEMS].select(["episode_id", "step", "item"]).to_pylist():
            add(row["episode_id"], row["item"], row["step"])
    rooms = {(h["episode_id"], room["room"]): room for h in headers for room in h.get("rooms", ())}
    for room_events in (schema.JERICHO_ROOM_EVENTS, schema.TEXTWORLD_ROOM_EVENTS):
        if room_events not in tables:
            continue
        for row in tables[room_events].select(["episode_id", "step", "room", "change"]).to_pylist():
            room = rooms.get((row["episode_id"], row["room"]))
            if row["change"] == "entered" and room is not None:
                for name in (room["name"], room["display_name"], _NUMBERED.sub("", room["display_name"])):
                    add(row["episode_id"], name, row["step"])
    for h in headers:
        if h["env"] == "crafter":
            add(h["episode_id"], h["initial"]["terrain"], 0)
    return met


def _first_view(tables: dict[schema.Table, pa.Table]) -> dict[str, set[str]]:
    """Per Crafter episode, the materials and creatures of its first view (step 0): seen, yet never first
    seen at a step."""
    shown: dict[str, set[str]] = {}
    for table, column in ((schema.CRAFTER_VIEW, "material"), (schema.CRAFTER_CREATURES, "creature")):
        if table in tables:
            # numpy's comparison rather than pyarrow.compute's: importing that costs a fifth of a second
            rows = tables[table].filter(pa.array(tables[table].column("step").to_numpy() == 0))
            for row in rows.select(["episode_id", column]).to_pylist():
                shown.setdefault(row["episode_id"], set()).add(row[column])
    return shown


# ---- rejected commands ----

# A sleeping player's command is replaced by sleep unless it wakes at the step's start, which Crafter
# counts as the achievement wake_up; `acted` is whether the command itself ran.
_CRAFTER_REJECTED = f"""
WITH s AS (
  SELECT *, NOT was_sleeping OR EXISTS (
    SELECT 1 FROM crafter_achievements a WHERE a.episode_id = t.episode_id AND a.step = t.step
    AND a.achievement = 'wake_up') AS acted
  FROM ({_CRAFTER_SLEEP}) t)
SELECT s.episode_id, s.step,
  s.action != 'noop'
  AND s.x_after = s.x_before AND s.y_after = s.y_before AND s.facing_after = s.facing_before
  AND NOT (s.action = 'sleep' AND s.sleeping)
  AND NOT EXISTS (SELECT 1 FROM crafter_item_events i WHERE i.episode_id = s.episode_id AND i.step = s.step
                  AND NOT list_contains($stats, i.item))
  AND NOT EXISTS (SELECT 1 FROM crafter_map_changes m WHERE m.episode_id = s.episode_id AND m.step = s.step)
  AND NOT EXISTS (SELECT 1 FROM crafter_achievements a WHERE a.episode_id = s.episode_id AND a.step = s.step
                  AND a.achievement != 'wake_up')
  AND NOT (s.action = 'do' AND s.acted AND EXISTS (
    SELECT 1 FROM crafter_creatures c WHERE c.episode_id = s.episode_id AND c.step = s.step - 1
    AND list_contains($struck, c.creature)
    AND c.x = s.x_before + CASE s.facing_before WHEN 'left' THEN -1 WHEN 'right' THEN 1 ELSE 0 END
    AND c.y = s.y_before + CASE s.facing_before WHEN 'up' THEN -1 WHEN 'down' THEN 1 ELSE 0 END))
  AS rejected
FROM s ORDER BY s.episode_id, s.step
"""
# The creatures a `do` always harms (Player._do_object): striking one is never without effect.
_STRUCK = ("zombie", "skeleton", "cow")


def crafter_rejected(reader: duckdb.DuckDBPyConnection, tables: dict[schema.Table, pa.Table]) -> pa.Array:
    """Per Crafter step, in the steps table's order, whether its command changed nothing."""
    with _registered(reader, tables):
        rows = reader.execute(_CRAFTER_REJECTED, {"stats": list(crafter_data.STATS), "struck": list(_STRUCK)})
        by_step = {(e, s): r for e, s, r in rows.fetchall()}
    steps = tables[schema.CRAFTER_STEPS]
    return pa.array([by_step[key] for key in zip(steps.column("episode_id").to_pylist(),
                                                 steps.column("step").to_pylist())], pa.bool_())


def jericho_rejected(steps: pa.Table) -> pa.Array:
    """Per step of a text game (Jericho, TextWorld), whether the game's parser refused its command (dsl/rejected.py)."""
    return pa.array([parser_refused(obs) for obs in steps.column("obs_after").to_pylist()], pa.bool_())


def with_rejected(reader: duckdb.DuckDBPyConnection, tables: dict[schema.Table, pa.Table]) -> None:
    """The `rejected` column added to each game's steps table, in its declared place (the last)."""
    for table in (schema.JERICHO_STEPS, schema.TEXTWORLD_STEPS):
        if table in tables:
            tables[table] = tables[table].append_column("rejected", jericho_rejected(tables[table]))
    if schema.CRAFTER_STEPS in tables:
        flags = crafter_rejected(reader, tables)
        tables[schema.CRAFTER_STEPS] = tables[schema.CRAFTER_STEPS].append_column("rejected", flags)
