"""Jericho's trace record (environment.py): its lines, its header (the rooms, the object tree and the steps
that changed nothing: docs/trace-format.md, Jericho), and its tables, derived by the text games' shared
pieces (text_games.py), the object tree's replay (objects.py) and `changed` (changes.py).
"""

from __future__ import annotations

import pyarrow as pa

from qtc.dsl import room_names, schema
from qtc.errors import UserError
from qtc.runtime.arrow import arrow_rows

from . import text_games
from .changes import with_changed
from .environment import HEADER_COMMON, ROOM_SPEC, TraceEnvironment, arrow_table, step_spec
from .objects import LOCATIONS_SQL, OBJECTS_SQL, introduced_items, register_objects, sightings

HEADER_SPEC = {
    **HEADER_COMMON,
    "rom": "str",
    "rooms": ("list", ROOM_SPEC),
    "unvisited_rooms": ("null", ("list", ROOM_SPEC)),
    "initial": {"observation": "str", "room": "int", "inventory": ("list", "str"), "score": "int", "moves": "int"},
    # The object tree before step 1 and each step's changes to it (docs/trace-format.md).
    "objects": ("null", {"player": "int",
                         "tree": ("list", {"object": "int", "parent": "int", "name": ("null", "str")}),
                         "moves": ("list", {"step": "int", "object": "int", "parent": "int"})}),
    # The steps whose command changed nothing, by Jericho's test (docs/trace-format.md).
    "unchanged_steps": ("null", ("list", "int")),
}


def check_header(header: dict, where: str) -> None:
    if header["objects"] is not None:
        _check_objects(header["objects"], header["n_steps"], where)
    if header["unchanged_steps"] is not None:
        _check_unchanged(header["unchanged_steps"], header["n_steps"], where)


def _check_step(step: int, n_steps: int, where: str, field: str) -> None:
    """A step a header field names is one of the episode's."""
    if not 1 <= step <= n_steps:
        raise UserError(f"{where}: field '{field}': {step} is not a step of the episode (1..{n_steps})")


def _check_unchanged(steps: list[int], n_steps: int, where: str) -> None:
    """The steps that changed nothing are steps of the episode, each once, in order."""
    for i, step in enumerate(steps):
        _check_step(step, n_steps, where, f"unchanged_steps[{i}]")
        if i and step <= steps[i - 1]:
            raise UserError(f"{where}: field 'unchanged_steps[{i}]': {step} does not follow {steps[i - 1]} "
                            "(steps are listed once, in order)")


def _check_objects(objects: dict, n_steps: int, where: str) -> None:
    """The object tree names each object once, and each move a step of the episode and a known object
    (once per step), so the store can rebuild the tree at every step."""
    known: set[int] = set()
    for i, entry in enumerate(objects["tree"]):
        if entry["object"] in known:
            raise UserError(f"{where}: field 'objects.tree[{i}].object': object {entry['object']} listed twice")
        known.add(entry["object"])
    if objects["player"] not in known:
        raise UserError(f"{where}: field 'objects.player': object {objects['player']} is not in the tree")
    moved: set[tuple[int, int]] = set()
    for i, move in enumerate(objects["moves"]):
        field = f"objects.moves[{i}]"
        _check_step(move["step"], n_steps, where, f"{field}.step")
        if move["object"] not in known:
            raise UserError(f"{where}: field '{field}.object': object {move['object']} is not in the tree")
        if (move["step"], move["object"]) in moved:
            raise UserError(f"{where}: field '{field}': object {move['object']} moved twice at step {move['step']}")
        moved.add((move["step"], move["object"]))


def _rooms(header: dict) -> list[dict]:
    """The episode's rooms, then the game's rooms it never entered (none in traces recorded before
    qtc 0.4), each with `visited`."""
    return ([{**room, "visited": True} for room in header["rooms"]]
            + [{**room, "visited": False} for room in header["unvisited_rooms"] or []])


def jericho_rooms(traces: dict, room_events: pa.Table) -> pa.Table:
    """jericho_rooms: each episode's rooms from its header, with each visited room's title (its display
    name unnumbered) and the step the episode first entered it (dsl/room_names.py)."""
    entered: dict[tuple[str, int], int] = {}
    for row in room_events.select(["episode_id", "step", "room", "change"]).to_pylist():
        if row["change"] == "entered":
            key = (row["episode_id"], row["room"])
            entered[key] = min(entered.get(key, row["step"]), row["step"])
    rows = []
    for trace in traces.values():
        header = trace.header
        rooms = _rooms(header)
        visited = [room["display_name"] for room in rooms if room["visited"]]
        names = dict(zip(visited, room_names.titles(visited)))
        rows += [(header["episode_id"], room["room"], room["name"], room["display_name"], room["visited"],
                  names.get(room["display_name"], room["display_name"]) if room["visited"] else room["display_name"],
                  entered.get((header["episode_id"], room["room"])))
                 for room in rooms]
    return arrow_table(schema.JERICHO_ROOMS, rows)


def derive(reader, traces: dict, tables: dict) -> None:
    """Jericho's rooms, its steps' derived columns, the things named and introduced, and the object tree's
    tables (objects.py), from the tables its SQL made and its traces."""
    tables[schema.JERICHO_ROOMS] = jericho_rooms(traces, tables[schema.JERICHO_ROOM_EVENTS])
    steps = text_games.with_commands(tables[schema.JERICHO_STEPS], schema.JERICHO_STEPS)
    tables[schema.JERICHO_NAMED_ITEMS] = text_games.named_items(steps, traces, schema.JERICHO_NAMED_ITEMS)
    tables[schema.JERICHO_INTRODUCED_ITEMS] = arrow_table(schema.JERICHO_INTRODUCED_ITEMS,
                                                          introduced_items(steps, traces))
    register_objects(reader, traces)
    tables[schema.JERICHO_OBJECTS] = arrow_rows(reader, OBJECTS_SQL)
    tables[schema.JERICHO_OBJECT_LOCATIONS] = arrow_rows(reader, LOCATIONS_SQL)
    things = {trace.header["game"]: text_games.header_vocabulary(trace.header).get("item", [])
              for trace in traces.values()}
    derived = sightings(steps, traces, things)
    for table in (schema.JERICHO_SIGHTINGS, schema.JERICHO_THINGS_PRESENT, schema.JERICHO_MENTIONS):
        tables[table] = arrow_table(table, derived[table.name])
    tables[schema.JERICHO_STEPS] = with_changed(text_games.with_rejected(steps), traces)


def room_subjects(header: dict) -> list[str]:
    """An episode's rooms by title, never numbered: "Forest (3)" as a false premise would tell that the
    episode reaches three Forests; then the game's rooms it never entered."""
    rooms = _rooms(header)
    visited = room_names.titles([room["display_name"] for room in rooms if room["visited"]])
    unvisited = [room["display_name"] for room in rooms if not room["visited"]]
    return list(dict.fromkeys([*visited, *unvisited]))


JERICHO = TraceEnvironment(
    "jericho",
    step_spec=step_spec(schema.JERICHO_STEPS, text_games.NULLABLE, {}),
    header_spec=HEADER_SPEC,
    added_header_fields={
        "unvisited_rooms": "the rooms of the game it never entered, so no question has a room it never entered "
                           "as a false premise",
        "objects": "the object tree, so its jericho_objects, jericho_object_locations, jericho_sightings, "
                   "jericho_things_present and jericho_mentions are empty",
        "unchanged_steps": "which steps changed nothing in the world, so its steps.changed is null"},
    check_header=check_header,
    check_trace=text_games.check_rooms,
    register=text_games.start_rooms("jericho"),
    table_sql=text_games.table_sql(schema.JERICHO_STEPS, schema.JERICHO_ITEM_EVENTS, schema.JERICHO_ROOM_EVENTS),
    derive=derive,
    vocabulary=text_games.header_vocabulary,
    room_subjects=room_subjects,
    event_sql=text_games.event_sql("jericho"),
    met_names=text_games.met_names(schema.JERICHO_STEPS, schema.JERICHO_ROOM_EVENTS, schema.JERICHO_NAMED_ITEMS),
)
