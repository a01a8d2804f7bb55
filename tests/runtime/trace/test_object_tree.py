"""The object tree in the store: intervals and sightings on a small drawn episode worked out by hand,
traces recorded before object trees (empty tables, and `qtc load` says so), and malformed trees."""

from __future__ import annotations

import json

import duckdb
import pytest
from support.strategies import ITEM_OBJECTS, PLAYER, jericho_episode, write_episodes

from qtc.cli import main
from qtc.errors import UserError
from qtc.runtime.trace.parquet import MARKER, write_corpus
from qtc.runtime.trace.store import load_traces, open_store

# West of House (10) holds the brass key and the sword; the player starts there, looks, takes it, goes north to the
# first Forest (20), where the egg lies, drops it, looks, comes back, and drops the lamp it does not
# carry (the lamp lies in the second Forest: "You drop lamp" names it there, unseen).
STEPS = [(("idle", "look"), None, 0), (("take", "brass key"), None, 0), (("move", "north", 20), None, 0),
         (("drop", "brass key"), None, 0), (("idle", "look"), None, 0), (("move", "south", 10), None, 0),
         (("drop", "lamp"), None, 0)]
KEY = ITEM_OBJECTS["brass key"]


def _episode():
    return jericho_episode(STEPS, room=10)


def test_locations_are_intervals_of_the_tree(tmp_path):
    write_episodes([_episode()], tmp_path)
    with open_store(tmp_path) as con:
        key = con.execute("SELECT step, parent, last_step FROM jericho_object_locations WHERE object = ? "
                          "ORDER BY step", [KEY]).fetchall()
        player = con.execute("SELECT step, parent, last_step FROM jericho_object_locations WHERE object = ? "
                             "ORDER BY step", [PLAYER]).fetchall()
        names = dict(con.execute("SELECT object, name FROM jericho_objects").fetchall())
    assert key == [(0, 10, 1), (2, PLAYER, 3), (4, 20, 7)]
    assert player == [(0, 10, 2), (3, 20, 5), (6, 10, 7)]
    assert names[KEY] == "brass key" and names[PLAYER] is None


def test_sightings_are_the_things_the_text_names_in_the_room(tmp_path):
    write_episodes([_episode()], tmp_path)
    with open_store(tmp_path) as con:
        rows = con.execute("SELECT step, item, room, moved FROM jericho_sightings ORDER BY step, item").fetchall()
        present = con.execute("SELECT step, item, room FROM jericho_things_present ORDER BY item, room, step").fetchall()
        mentions = con.execute("SELECT step, item, room FROM jericho_mentions ORDER BY step, item").fetchall()
    # Step 1's look names the key and the sword in West of House; step 2's "You take key" names it
    # carried (not a sighting); step 4 drops it in the Forest, named there, step 5's look names it again,
    # and the egg.
    assert rows == [(1, "brass key", 10, False), (1, "sword", 10, False), (4, "brass key", 20, True),
                    (5, "brass key", 20, False), (5, "egg", 20, False)]
    # Present, named or not: the key and the sword in West of House at steps 0 and 1, the sword alone
    # after the key is taken; the egg in the Forest from step 3, the key there too from step 4.
    assert present == [*((s, "brass key", 10) for s in (0, 1)), *((s, "brass key", 20) for s in (4, 5)),
                       *((s, "egg", 20) for s in (3, 4, 5)), *((s, "sword", 10) for s in (0, 1, 2, 6, 7))]
    # Mentioned: every sighting, and the lamp named at step 7 where it is not.
    assert mentions == [(s, item, room) for s, item, room, _ in rows] + [(7, "lamp", 10)]


def test_a_trace_recorded_before_object_trees_loads_with_empty_tables(tmp_path, capsys):
    episode = _episode()
    del episode.header["objects"]
    (path,) = write_episodes([episode], tmp_path)
    with duckdb.connect() as con:
        assert load_traces(con, [tmp_path]).lacking == {"objects": [path]}
        counts = [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                  for t in ("jericho_objects", "jericho_object_locations", "jericho_sightings",
                            "jericho_things_present", "jericho_mentions")]
    assert counts == [0, 0, 0, 0, 0]
    assert main(["load", str(tmp_path), "--db", str(tmp_path / "t.duckdb")]) == 0
    out = capsys.readouterr().out
    assert f"recorded before the header field 'objects' existed (the first: {path}) lack the object tree" in out


@pytest.mark.parametrize("edit, message", [
    (lambda o: o["moves"].append({"step": 99, "object": PLAYER, "parent": 10}),
     "field 'objects.moves[4].step': 99 is not a step of the episode (1..7)"),
    (lambda o: o["moves"].append({"step": 1, "object": 5, "parent": 10}),
     "field 'objects.moves[4].object': object 5 is not in the tree"),
    (lambda o: o.update(player=7), "field 'objects.player': object 7 is not in the tree"),
    (lambda o: o["tree"][0].pop("name"), "missing field 'objects.tree[0].name'"),
])
def test_a_malformed_tree_is_refused_with_its_field(tmp_path, edit, message):
    episode = _episode()
    edit(episode.header["objects"])
    (path,) = write_episodes([episode], tmp_path)
    with pytest.raises(UserError, match=f"^{path}:1: {message}".replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        open_store(tmp_path).close()


def test_a_parquet_corpus_written_before_object_trees_reads_them_empty(tmp_path):
    write_episodes([_episode()], tmp_path / "traces")
    with duckdb.connect() as con:  # as qtc load --parquet writes it (a store reads no file but its own)
        load_traces(con, [tmp_path / "traces"])
        write_corpus(con, tmp_path / "corpus")
    marker = tmp_path / "corpus" / MARKER
    written = json.loads(marker.read_text())
    for name in ("jericho_objects", "jericho_object_locations", "jericho_sightings", "jericho_things_present",
                 "jericho_mentions"):
        del written["tables"][name]
    del written["rows"]  # counted since; a corpus of then had none
    marker.write_text(json.dumps(written))
    with open_store(tmp_path / "corpus") as con:
        assert con.execute("SELECT count(*) FROM jericho_sightings").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM jericho_steps").fetchone() == (7,)
