"""What the text games (Jericho, TextWorld) share in the trace stage: the pieces both their records
(`jericho.py`, `textworld.py`) are given, over tables of the same shape: numbered rooms listed in the
header, a start room, inventories before and after each step, a command per step that the parser may
refuse (CONVENTIONS.md, Commands; Rejected commands; Events).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Callable

import pyarrow as pa

from qtc.dsl import schema
from qtc.dsl.conventions import command, command_direction, named_item_steps
from qtc.dsl.rejected import parser_refused
from qtc.errors import UserError

from .environment import arrow_table, events_sql, steps_sql

# The fields a text game's step line may hold as null: a reason no agent gave, a move in no direction,
# valid actions not asked for.
NULLABLE = frozenset({"reason", "direction", "valid_actions"})


def check_rooms(trace) -> None:
    """A room listed twice in the header would be two rows where a question reads one."""
    seen: dict[int, int] = {}
    for i, room in enumerate(trace.header["rooms"]):
        if room["room"] in seen:
            raise UserError(f"{trace.path}:1: field 'rooms[{i}].room': room {room['room']} is listed again "
                            f"(first as rooms[{seen[room['room']]}])")
        seen[room["room"]] = i


def start_rooms(env: str) -> Callable:
    """The register function of a text game: each file's start room, as `<env>_start` (file, room)."""
    def register(reader, traces: dict) -> None:
        rooms = [trace.header["initial"]["room"] for trace in traces.values()]
        reader.register(f"{env}_start", pa.table({"file": pa.array(list(traces), pa.int64()),
                                                  "room": pa.array(rooms, pa.int64())}))
    return register


_CHANGED = "rec.room_before != rec.room_after"


def _item_events_sql(env: str) -> str:
    """A text game's items gained and lost, from each step's inventories before and after."""
    return events_sql(
        "step, item, CASE WHEN amount > 0 THEN 'gained' ELSE 'lost' END, room",
        "SELECT *, unnest(range(abs(amount))) FROM (SELECT file, step, room, item, sum(amount)::BIGINT AS amount FROM ("
        "SELECT file, rec.step AS step, rec.room_before AS room, unnest(rec.inventory_after) AS item, 1 AS amount "
        f"FROM {env}_lines UNION ALL "
        f"SELECT file, rec.step, rec.room_before, unnest(rec.inventory_before), -1 FROM {env}_lines) "
        "GROUP BY ALL HAVING sum(amount) != 0)",
        "step, amount < 0, item")


def _room_events_sql(env: str) -> str:
    """A text game's rooms entered and left: the start room at step 0, then each step that changed the room."""
    return events_sql(
        "step, room, change",
        f"SELECT file, 0 AS step, room, 'entered' AS change, 0 AS k FROM {env}_start UNION ALL "
        f"SELECT file, rec.step, rec.room_before, 'left', 1 FROM {env}_lines WHERE {_CHANGED} UNION ALL "
        f"SELECT file, rec.step, rec.room_after, 'entered', 2 FROM {env}_lines WHERE {_CHANGED}",
        "step, k")


def table_sql(steps: schema.Table, item_events: schema.Table, room_events: schema.Table) -> dict[schema.Table, str]:
    """The table_sql of a text game: its steps, items gained and lost, rooms entered and left."""
    env = steps.env
    return {steps: steps_sql(steps), item_events: _item_events_sql(env), room_events: _room_events_sql(env)}


# A text game's derived step columns, each a rule of dsl/conventions.py applied to the action (CONVENTIONS.md,
# Commands): `command`, by the rule the action scorer uses, so templates that count or compare actions
# count one command written two ways once; `tried_direction`, so a room graph knows an exit tried in vain.
DERIVED_FROM_ACTION = {"command": command, "tried_direction": command_direction}


def with_commands(steps: pa.Table, table: schema.Table) -> pa.Table:
    """A text game's steps with the derived columns in their places."""
    actions = steps.column("action").to_pylist()
    names = [c.name for c in table.all_columns]
    for name in sorted(DERIVED_FROM_ACTION, key=names.index):
        values = pa.array([DERIVED_FROM_ACTION[name](action) for action in actions], pa.string())
        steps = steps.add_column(names.index(name), name, values)
    return steps


def with_rejected(steps: pa.Table) -> pa.Table:
    """A text game's steps with `rejected` appended, in its declared place: whether the game's parser refused
    the command (dsl/rejected.py)."""
    refused = [parser_refused(obs) for obs in steps.column("obs_after").to_pylist()]
    return steps.append_column("rejected", pa.array(refused, pa.bool_()))


def header_vocabulary(header: dict) -> dict[str, list[str]]:
    """The vocabulary the header recorded, but for the room names of older Jericho headers, which joined no
    room (an episode's rooms are its rooms table)."""
    return {kind: values for kind, values in header["vocab"].items() if kind != "room"}


def named_items(steps: pa.Table, traces: dict, table: schema.Table) -> pa.Table:
    """A text game's named_items: per episode, the things of its game (the header's item vocabulary) first
    met by name at each step (dsl/conventions.named_item_steps), from its commands and what it carried."""
    by_episode: dict[str, list[tuple[int, str, list[str]]]] = defaultdict(list)
    for row in steps.select(["episode_id", "step", "action", "inventory_after"]).to_pylist():
        by_episode[row["episode_id"]].append((row["step"], row["action"], row["inventory_after"]))
    rows = []
    for trace in traces.values():
        header = trace.header
        named = named_item_steps(header_vocabulary(header).get("item", []), sorted(by_episode[header["episode_id"]]))
        rows += sorted((header["episode_id"], step, item) for item, step in named.items())
    return arrow_table(table, rows)


def event_sql(env: str) -> dict[str, str]:
    """The event kinds of a text game (schema.TEXT_GAME_EVENTS), over its tables of this shape."""
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


# A numbered display name ("Forest (2)") is one of the rooms named "Forest".
_NUMBERED = re.compile(r" \(\d+\)$")


def met_names(steps: schema.Table, room_events: schema.Table, named: schema.Table) -> Callable:
    """The met_names of a text game: the things it carried (before step 1: step 0) or met by name (`named`),
    and its rooms' names (as listed, displayed, or displayed without their number: "Forest" once in
    "Forest (2)") from the step it entered them (0: where it started)."""
    def met(headers: list[dict], tables: dict[schema.Table, pa.Table], add) -> None:
        # A thing is carried at most steps, and twice each (after one step, before the next): each thing
        # carried is given to `add` once, at the first step it was carried.
        carried: dict[tuple[str, str], int] = {}
        for row in tables[steps].select(["episode_id", "step", "inventory_before", "inventory_after"]).to_pylist():
            for step, items in ((row["step"] - 1, row["inventory_before"]), (row["step"], row["inventory_after"])):
                for item in items:
                    key = (row["episode_id"], item)
                    if step < carried.get(key, step + 1):
                        carried[key] = step
        for (episode, item), step in carried.items():
            add(episode, item, step)
        for row in tables[named].select(["episode_id", "step", "item"]).to_pylist():
            add(row["episode_id"], row["item"], row["step"])
        rooms = {(h["episode_id"], room["room"]): room for h in headers for room in h["rooms"]}
        for row in tables[room_events].select(["episode_id", "step", "room", "change"]).to_pylist():
            room = rooms.get((row["episode_id"], row["room"]))
            if row["change"] == "entered" and room is not None:
                for name in (room["name"], room["display_name"], _NUMBERED.sub("", room["display_name"])):
                    add(row["episode_id"], name, row["step"])
    return met
