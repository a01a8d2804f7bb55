"""The object tree a Jericho trace records, against the live game: on walkthrough prefixes of zork1 and
two other games (advent, an Inform game whose objects jericho cannot all read, and 905, whose player
starts in a bed), the store's `object_locations` is the game's tree after every step, every sighting
holds by the rule of dsl/sightings.py in that tree, and names were asked only of objects in the rooms
the player was in; and the templates over them ask the same questions through their SQL as through
the reference evaluator."""

from __future__ import annotations

import jericho
import pytest

from support.ground_truth import Store, differences, library, reference_candidates, sql_candidates

from qtc.dsl.reference.evaluator import read_tables
from qtc.dsl.sightings import in_room, names_object
from qtc.runtime.record.agents import WalkthroughAgent
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.record.jericho import JerichoSession
from qtc.runtime.record.jericho_objects import tree
from qtc.runtime.trace.format import read_episode
from qtc.runtime.trace.store import open_store
from conftest import rom_path

# Walkthrough prefixes long enough for things to be seen, taken and dropped elsewhere.
PREFIXES = {"zork1.z5": 60, "advent.z5": 40, "905.z5": 20}


@pytest.fixture(scope="module", params=sorted(PREFIXES))
def recorded(request, tmp_path_factory):
    """A walkthrough prefix recorded, with the live game's tree after each step (step 0 first)."""
    rom = rom_path(request.param)
    directory = tmp_path_factory.mktemp(rom.stem)
    session = JerichoSession(rom, None, "walkthrough", record_valid_actions=False)
    live = [tree(session.env).parents()]
    record_episode(session, WalkthroughAgent(session.env.get_walkthrough()), directory, PREFIXES[rom.name],
                   on_step=lambda session, record: live.append(tree(session.env).parents()))
    (path,) = directory.glob("*.jsonl")
    con = open_store(directory)
    yield read_episode(path), live, con
    con.close()


def test_the_store_rebuilds_the_live_tree_after_every_step(recorded):
    episode, live, con = recorded
    rows = con.sql("SELECT step, object, parent, last_step FROM jericho_object_locations").fetchall()
    for step, parents in enumerate(live):
        assert {o: p for s, o, p, last in rows if s <= step <= last} == parents, step


def test_the_tree_changes_are_much_smaller_than_the_tree(recorded):
    episode, live, _ = recorded
    objects = episode.header["objects"]
    assert len(objects["tree"]) == len(live[0])
    assert len(objects["moves"]) < len(objects["tree"]) * len(episode.steps) / 20


def test_every_sighting_holds_in_the_live_tree(recorded):
    episode, live, con = recorded
    player = episode.header["objects"]["player"]
    texts = [episode.header["initial"]["observation"], *(s["obs_after"] for s in episode.steps)]
    rooms = [episode.header["initial"]["room"], *(s["room_after"] for s in episode.steps)]
    things = set(episode.header["vocab"]["item"])
    sightings = con.sql("SELECT step, object, item, room FROM jericho_sightings").fetchall()
    assert sightings, "nothing seen on the prefix"
    for step, num, item, room in sightings:
        assert room == rooms[step] and in_room(live[step], num, room, player), (step, item)
        assert item in things and names_object(texts[step], item), (step, item)
    # And the converse: a thing in the room, named by the text, is sighted; named or not, it is present.
    names = {entry["object"]: entry["name"] for entry in episode.header["objects"]["tree"]}
    seen = {(step, num) for step, num, _, _ in sightings}
    present = set(con.sql("SELECT step, object FROM jericho_things_present").fetchall())
    mentions = set(con.sql("SELECT step, object FROM jericho_mentions").fetchall())
    assert seen <= present and seen <= mentions
    assert mentions == {(step, num) for step, parents in enumerate(live) for num, name in names.items()
                        if name in things and names_object(texts[step], name)
                        and not in_room(parents, num, player, 0) and num != player}
    for step, parents in enumerate(live):
        for num, name in names.items():
            there = name in things and in_room(parents, num, rooms[step], player)
            assert ((step, num) in present) == there, (step, name)
            if there and names_object(texts[step], name):
                assert (step, num) in seen, (step, name)


def test_names_are_asked_only_of_what_the_player_could_see_or_carry(recorded):
    episode, live, _ = recorded
    player = episode.header["objects"]["player"]
    rooms = [episode.header["initial"]["room"], *(s["room_after"] for s in episode.steps)]
    named = {entry["object"] for entry in episode.header["objects"]["tree"] if entry["name"] is not None}
    env = jericho.FrotzEnv(str(rom_path(episode.header["rom"])))
    walkthrough_held = set()  # the vocabulary's things are named in advance, from the walkthrough
    env.reset()
    for action in env.get_walkthrough():
        env.step(action)
        walkthrough_held |= set(tree(env).descendants(env.player_obj_num))
        if env.game_over():
            break
    visible = {num for step, parents in enumerate(live) for num in parents
               if in_room(parents, num, rooms[step], player) or in_room(parents, num, player, 0)}
    assert named <= visible | walkthrough_held


OBJECT_TEMPLATES = ("jericho.last_seen_room", "jericho.room_things_when_left", "jericho.times_seen_moved")
ASKED: dict[str, set[str]] = {}  # template -> the games it asked something answerable on


@pytest.mark.parametrize("horizon", [None, 15])
def test_the_templates_agree_with_the_reference_on_recorded_episodes(recorded, horizon):
    episode, _, con = recorded
    store = Store(con, read_tables(con))
    for compiled in (c for c in library() if c.id in OBJECT_TEMPLATES):
        sql = sql_candidates(con, compiled, horizon)
        assert not differences(sql, reference_candidates(store, compiled, horizon)), compiled.id
        if any(not c.adversarial for c in sql):
            ASKED.setdefault(compiled.id, set()).add(episode.header["game"])


def test_every_object_template_asks_on_the_recorded_games():
    """Runs after the test above, over the three games."""
    if len({game for games in ASKED.values() for game in games}) < len(PREFIXES):
        pytest.skip("runs after the differential test on every game")
    assert set(ASKED) == set(OBJECT_TEMPLATES), ASKED


def test_a_reader_settles_each_answer_from_the_trace_text(recorded):
    """Every answer of the three templates, read back from the trace as a reader would: the evidence
    steps' texts name the thing, in the room the answer gives, while the player was there; no text
    between names it elsewhere, unless carried."""
    episode, _, con = recorded
    texts = [episode.header["initial"]["observation"], *(s["obs_after"] for s in episode.steps)]
    rooms = [episode.header["initial"]["room"], *(s["room_after"] for s in episode.steps)]
    carried = [episode.header["initial"]["inventory"], *(s["inventory_after"] for s in episode.steps)]
    asked = {c.id: sql_candidates(con, c, None) for c in library() if c.id in OBJECT_TEMPLATES}
    for candidate in (c for c in asked["jericho.last_seen_room"] if not c.adversarial):
        (seen,) = candidate.evidence
        item, t = candidate.params["item"], candidate.params["t"]
        assert seen < t and names_object(texts[seen], item) and rooms[seen] == candidate.answer
        assert not any(names_object(texts[s], item) and rooms[s] != rooms[seen] and item not in carried[s]
                       for s in range(seen + 1, t))
    for candidate in (c for c in asked["jericho.room_things_when_left"] if not c.adversarial):
        *seen, left = candidate.evidence
        assert episode.steps[left - 1]["room_before"] == candidate.params["room"] != rooms[left]
        for item in candidate.answer:
            assert any(names_object(texts[s], item) and rooms[s] == candidate.params["room"] for s in seen)
    for candidate in (c for c in asked["jericho.times_seen_moved"] if not c.adversarial):
        places = [rooms[s] for s in candidate.evidence]
        assert all(names_object(texts[s], candidate.params["item"]) for s in candidate.evidence)
        assert candidate.answer == sum(a != b for a, b in zip(places, places[1:]))
