"""TextWorld's trace record (environment.py) and its derived tables: the world's facts at every step, the
true map, the things in view, the rooms, and the steps that changed the world (CONVENTIONS.md, TextWorld).
A text game of Jericho's shape, it takes the text games' shared pieces (text_games.py).

A trace holds the facts before step 1 (header `initial.facts`) and each step's changes (`facts_added`,
`facts_removed`); `replay_facts` rebuilds the state after any step from them, and everything here is
read from that state, never from the game's text.
"""

from __future__ import annotations

import json
from typing import Iterator

import pyarrow as pa

from qtc.dsl import schema
from qtc.errors import UserError

from . import text_games
from .environment import HEADER_COMMON, ROOM_SPEC, TraceEnvironment, arrow_table, step_spec

# A fact is [predicate, argument names...] (docs/trace-format.md, TextWorld): a predicate and one to three
# arguments.
FACT_SPEC = ("list", ("list", "str"))
FACT_LENGTHS = range(2, 5)
HEADER_SPEC = {
    **HEADER_COMMON,
    "game_file": "str",
    # How the game was generated (null: a game file given to play): enough to make it again.
    "make": ("null", {"challenge": "str", "seed": "int", "settings": ("dict", "any"), "textworld": "str"}),
    "rooms": ("list", ROOM_SPEC),
    "initial": {"observation": "str", "room": "int", "inventory": ("list", "str"), "score": "int",
                "moves": "int", "facts": FACT_SPEC},
    "objective": "str", "max_score": "int", "walkthrough": ("list", "str"),
}
PLAYER, INVENTORY = "P", "I"
# TextWorld's map predicates, by the direction they name: north_of(a, b) is a north of b.
DIRECTIONS = {"north_of": "north", "south_of": "south", "east_of": "east", "west_of": "west"}


def check_facts(facts: list[list[str]], where: str, field: str) -> None:
    """Each TextWorld fact is a predicate and one to three arguments."""
    for i, fact in enumerate(facts):
        if len(fact) not in FACT_LENGTHS:
            raise UserError(f"{where}: field '{field}[{i}]': a fact is a predicate and 1 to 3 arguments, got {fact}")


def check_header(header: dict, where: str) -> None:
    check_facts(header["initial"]["facts"], where, "initial.facts")


def check_step(step: dict, where: str) -> None:
    for name in ("facts_added", "facts_removed"):
        check_facts(step[name], where, name)


def step_records(trace) -> list[dict]:
    """A trace's step lines as records (a TraceText's steps are JSON text), their facts checked."""
    steps = [json.loads(line) if isinstance(line, str) else line for line in trace.steps]
    for line, step in enumerate(steps, start=2):
        check_step(step, f"{trace.path}:{line}")
    return steps


def replay_facts(initial: list[list[str]], steps: list[dict]) -> Iterator[set[tuple[str, ...]]]:
    """The world's facts after step 0 (before the first action), 1, 2, ...: the loader of the state at any step."""
    facts = {tuple(fact) for fact in initial}
    yield set(facts)
    for step in steps:
        facts -= {tuple(fact) for fact in step["facts_removed"]}
        facts |= {tuple(fact) for fact in step["facts_added"]}
        yield set(facts)


def fact_rows(episode: str, initial: list[list[str]], steps: list[dict]) -> list[tuple]:
    """textworld_facts: each fact with the run of steps after which it held."""
    rows, since = [], {tuple(fact): 0 for fact in initial}
    for step in steps:
        for fact in map(tuple, step["facts_removed"]):
            rows.append((fact, since.pop(fact), step["step"] - 1))
        for fact in map(tuple, step["facts_added"]):
            since[fact] = step["step"]
    rows += [(fact, start, len(steps)) for fact, start in since.items()]
    return [(episode, start, *fact, *[None] * (4 - len(fact)), last)
            for fact, start, last in sorted(rows, key=lambda row: (row[1], row[0]))]


def room_of(facts: set[tuple[str, ...]]) -> str:
    """The player's room: the one of the fact at(P, room)."""
    return next(fact[2] for fact in facts if fact[:2] == ("at", PLAYER))


def doors(facts: set[tuple[str, ...]]) -> set[str]:
    """The game's doors: the middle argument of its link(room, door, other) facts (the map never changes)."""
    return {fact[2] for fact in facts if fact[0] == "link"}


def in_view(facts: set[tuple[str, ...]]) -> dict[str, str | None]:
    """The things in view, each with what it lies on or in (None: in the room itself): those at the player's
    room but the player, and the doors of the room (link(room, door, other): a door has no `at` fact, and the
    game's description of either room it links names it, open or shut), then those on a thing in view or in
    one in view that is neither closed nor locked (TextWorld's states of a container are one of open, closed
    and locked: a locked one has no closed fact)."""
    room = room_of(facts)
    seen = {fact[1]: None for fact in facts if fact[0] == "at" and fact[2] == room and fact[1] != PLAYER}
    seen.update(dict.fromkeys(sorted(fact[2] for fact in facts if fact[0] == "link" and fact[1] == room)))
    holders = list(seen)
    while holders:
        holder = holders.pop()
        if ("closed", holder) in facts or ("locked", holder) in facts:
            continue
        inside = sorted(fact[1] for fact in facts if fact[0] in ("in", "on") and fact[2] == holder and fact[1] not in seen)
        seen.update(dict.fromkeys(inside, holder))
        holders += inside
    return seen


def sighting_rows(episode: str, states: list[set[tuple[str, ...]]], rooms: dict[str, int]) -> list[tuple]:
    """textworld_sightings: after each step, the things in view, whether each was last seen elsewhere (never
    a door: seen from the other room it links, it has not moved)."""
    rows, last_room, fixed = [], {}, doors(states[0])
    for step, facts in enumerate(states):
        room = rooms[room_of(facts)]
        for item, holder in sorted(in_view(facts).items()):
            rows.append((episode, step, item, holder, room, item not in fixed and last_room.get(item, room) != room))
            last_room[item] = room
    return rows


def exit_rows(episode: str, initial: list[list[str]], rooms: dict[str, int]) -> list[tuple]:
    """textworld_exits: the true map, from the facts at reset."""
    doors = {(fact[1], fact[3]): fact[2] for fact in initial if fact[0] == "link"}
    return sorted((episode, rooms[fact[2]], DIRECTIONS[fact[0]], rooms[fact[1]], doors.get((fact[2], fact[1])))
                  for fact in initial if fact[0] in DIRECTIONS)


def room_rows(header: dict, first_entered: dict[int, int]) -> list[tuple]:
    """textworld_rooms: every room of the game, whether the episode entered it and first when."""
    return [(header["episode_id"], room["room"], room["name"], room["display_name"], room["room"] in first_entered,
             room["display_name"], first_entered.get(room["room"])) for room in header["rooms"]]


def derive(reader, traces: dict, tables: dict[schema.Table, pa.Table]) -> None:
    """TextWorld's steps' derived columns and its derived tables, from the tables its SQL made and its traces."""
    entered: dict[str, dict[int, int]] = {}
    for row in tables[schema.TEXTWORLD_ROOM_EVENTS].to_pylist():
        if row["change"] == "entered":
            rooms = entered.setdefault(row["episode_id"], {})
            rooms[row["room"]] = min(rooms.get(row["room"], row["step"]), row["step"])
    derived = {table: [] for table in (schema.TEXTWORLD_FACTS, schema.TEXTWORLD_EXITS, schema.TEXTWORLD_SIGHTINGS,
                                       schema.TEXTWORLD_ROOMS)}
    changed = []
    for trace in traces.values():
        header = trace.header
        episode, initial, steps = header["episode_id"], header["initial"]["facts"], step_records(trace)
        rooms = {room["name"]: room["room"] for room in header["rooms"]}
        derived[schema.TEXTWORLD_FACTS] += fact_rows(episode, initial, steps)
        derived[schema.TEXTWORLD_EXITS] += exit_rows(episode, initial, rooms)
        derived[schema.TEXTWORLD_SIGHTINGS] += sighting_rows(episode, list(replay_facts(initial, steps)), rooms)
        derived[schema.TEXTWORLD_ROOMS] += room_rows(header, entered.get(episode, {}))
        # whether each step changed the world: a fact or the score
        changed += [bool(step["facts_added"] or step["facts_removed"] or step["reward"]) for step in steps]
    tables.update({table: arrow_table(table, rows) for table, rows in derived.items()})
    steps = text_games.with_commands(tables[schema.TEXTWORLD_STEPS], schema.TEXTWORLD_STEPS)
    tables[schema.TEXTWORLD_NAMED_ITEMS] = text_games.named_items(steps, traces, schema.TEXTWORLD_NAMED_ITEMS)
    tables[schema.TEXTWORLD_STEPS] = text_games.with_rejected(steps).append_column(
        "changed", pa.array(changed, pa.bool_()))


TEXTWORLD = TraceEnvironment(
    "textworld",
    step_spec=step_spec(schema.TEXTWORLD_STEPS, text_games.NULLABLE,
                        {"facts_added": FACT_SPEC, "facts_removed": FACT_SPEC}),
    header_spec=HEADER_SPEC,
    check_header=check_header,
    check_step=check_step,
    check_trace=text_games.check_rooms,
    register=text_games.start_rooms("textworld"),
    table_sql=text_games.table_sql(schema.TEXTWORLD_STEPS, schema.TEXTWORLD_ITEM_EVENTS,
                                   schema.TEXTWORLD_ROOM_EVENTS),
    derive=derive,
    vocabulary=text_games.header_vocabulary,
    # its rooms' names are its own, one room each
    room_subjects=lambda header: [room["name"] for room in header["rooms"]],
    event_sql=text_games.event_sql("textworld"),
    met_names=text_games.met_names(schema.TEXTWORLD_STEPS, schema.TEXTWORLD_ROOM_EVENTS,
                                     schema.TEXTWORLD_NAMED_ITEMS),
)
