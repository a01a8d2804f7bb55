"""Jericho's object tree in the store: the objects, where each was at every step, and what the player
saw of them (docs/trace-format.md, Jericho; CONVENTIONS.md, Sightings).

A trace holds the tree before step 1 and each step's changes to it (its header's `objects`); the store
keeps them as intervals (`object_locations`: after steps `step`..`last_step` the object's parent is
`parent`), built in SQL, and replays them once per episode to derive the sightings and the things
present by the one rule of dsl/sightings.py, and the step each thing's name was introduced
(`introduced_items`). A trace recorded before object trees has none (its
`objects` reads as null: format.ADDED_HEADER_FIELDS): its episode has no rows in these tables, and
`qtc load` says so.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from qtc.dsl import room_names
from qtc.dsl.sightings import introduced_steps, mentioned, name_index, named, present, sighted, thing_objects

if TYPE_CHECKING:
    from .format import TraceText


def register_objects(reader: duckdb.DuckDBPyConnection, traces: dict[int, TraceText]) -> None:
    """The header's trees and moves of Jericho's `traces` (by file number, as `files` numbers them) as
    tables `jericho_tree` (file, object, parent, name, n_steps) and `jericho_object_moves` (file, step,
    object, parent)."""
    tree = [(number, entry, trace.header["n_steps"]) for number, trace in traces.items()
            for entry in (trace.header["objects"] or {}).get("tree", [])]
    moves = [(number, move) for number, trace in traces.items()
             for move in (trace.header["objects"] or {}).get("moves", [])]
    reader.register("jericho_tree", pa.table({
        "file": pa.array([number for number, _, _ in tree], pa.int64()),
        **{field: pa.array([entry[field] for _, entry, _ in tree], type)
           for field, type in (("object", pa.int64()), ("parent", pa.int64()), ("name", pa.string()))},
        "n_steps": pa.array([n_steps for _, _, n_steps in tree], pa.int64())}))
    reader.register("jericho_object_moves", pa.table({
        "file": pa.array([number for number, _ in moves], pa.int64()),
        **{field: pa.array([move[field] for _, move in moves], pa.int64()) for field in ("step", "object", "parent")}}))


OBJECTS_SQL = "SELECT f.episode_id, object, name FROM jericho_tree JOIN files f USING (file) ORDER BY file, object"

# Each parent an object had, from the step it got it (0: the tree before step 1) to the step before
# its next move, else the episode's last step.
LOCATIONS_SQL = """
SELECT f.episode_id, step, object, parent,
       coalesce(lead(step) OVER (PARTITION BY file, object ORDER BY step) - 1, n_steps) AS last_step
FROM (SELECT file, 0 AS step, object, parent, n_steps FROM jericho_tree UNION ALL
      SELECT m.file, m.step, m.object, m.parent, t.n_steps FROM jericho_object_moves m
      JOIN jericho_tree t ON t.file = m.file AND t.object = m.object) JOIN files f USING (file)
ORDER BY file, step, object
"""


def sightings(steps: pa.Table, traces: dict[int, TraceText], things: dict[str, list[str]]) -> dict[str, list[tuple]]:
    """The rows of `sightings` (episode, step, object, item, room, moved), `things_present` and
    `mentions` (episode, step, object, item, room) for every episode with an object tree: its tree
    replayed step by step, each state read by dsl/sightings with the text that step printed (step 0:
    the opening text) and the things of its game (`things`, by game)."""
    by_episode: dict[str, list[dict]] = defaultdict(list)
    for row in steps.select(["episode_id", "step", "obs_after", "room_after"]).to_pylist():
        by_episode[row["episode_id"]].append(row)
    rows: dict[str, list[tuple]] = {"sightings": [], "things_present": [], "mentions": []}
    for trace in traces.values():
        header = trace.header
        objects = header["objects"]
        if objects is None:
            continue
        parents = {entry["object"]: entry["parent"] for entry in objects["tree"]}
        names = {entry["object"]: entry["name"] for entry in objects["tree"]}
        moves = defaultdict(list)
        for move in objects["moves"]:
            moves[move["step"]].append(move)
        states = [(0, header["initial"]["observation"], header["initial"]["room"]),
                  *((row["step"], row["obs_after"], row["room_after"])
                    for row in sorted(by_episode[header["episode_id"]], key=lambda row: row["step"]))]
        player = objects["player"]
        thing_nums = thing_objects(names, things.get(header["game"], []))
        index = name_index(names[num] for num in thing_nums)
        last_room: dict[int, int] = {}
        here, here_room = None, None
        for step, text, room in states:
            # The things present change only with the tree or the room: a step that moved no object and
            # ended in the room of the state before has that state's things present.
            if moves[step] or room != here_room:
                parents.update({move["object"]: move["parent"] for move in moves[step]})
                here, here_room = present(parents, player, room, thing_nums), room
            named_names = named(text, index)
            rows["things_present"] += [(header["episode_id"], step, num, names[num], room) for num in here]
            rows["mentions"] += [(header["episode_id"], step, num, names[num], room)
                                 for num in mentioned(parents, player, named_names, thing_nums, names)]
            for num in sighted(here, named_names, names):
                rows["sightings"].append((header["episode_id"], step, num, names[num], room,
                                          num in last_room and last_room[num] != room))
                last_room[num] = room
    return rows


def introduced_items(steps: pa.Table, traces: dict[int, TraceText]) -> list[tuple]:
    """The rows of `introduced_items` (episode, step, item): each thing of an episode's object tree, and
    each visited room's title, at the first step its name was printed or typed
    (dsl/sightings.introduced_steps; step 0: the opening text). A dark room's title may never be printed."""
    by_episode: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for row in steps.select(["episode_id", "step", "action", "obs_after"]).to_pylist():
        by_episode[row["episode_id"]].append((row["step"], row["action"], row["obs_after"]))
    rows = []
    for trace in traces.values():
        header = trace.header
        objects = header["objects"]
        if objects is not None:
            titles = room_names.titles([room["display_name"] for room in header["rooms"]])
            names = sorted({entry["name"] for entry in objects["tree"] if entry["name"]} | set(titles))
            texts = [(0, None, header["initial"]["observation"]), *sorted(by_episode[header["episode_id"]])]
            rows += sorted((header["episode_id"], step, name) for name, step in introduced_steps(names, texts).items())
    return rows
