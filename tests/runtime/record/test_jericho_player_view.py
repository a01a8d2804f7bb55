"""The Jericho recorder records what the player saw (issue 14), on the real games' walkthroughs: what the
player carries at any depth, named as the game lists it; rooms named as printed; no crash where jericho
cannot read the player's location."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from support.paths import ROMS
from support.ground_truth import library, sql_candidates, stored
from support.strategies import TraceEpisode

from qtc.runtime.record.agents import WalkthroughAgent
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.record.jericho import JerichoSession, unambiguous_names
from qtc.runtime.record.jericho_objects import clean_listed_name
from qtc.runtime.trace.format import read_episode


def rom(name: str) -> Path:
    path = ROMS / name
    if not path.is_file():
        pytest.skip(f"Jericho story file {path} not found (the tests read ROMs from ../shared/roms)")
    return path


@functools.cache
def walkthrough(name: str, steps: int, directory: Path):
    """The first `steps` steps of a game's walkthrough, recorded without the valid-action finder."""
    session = JerichoSession(rom(name), None, "walkthrough", record_valid_actions=False)
    return read_episode(record_episode(session, WalkthroughAgent(session.env.get_walkthrough()), directory, steps))


@pytest.fixture(scope="module")
def directory(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("player_view")


def test_advent_goes_on_where_jericho_cannot_read_the_location(directory):
    # At step 271 the cave closes and the player is moved into object 269, which jericho's get_object
    # cannot read: the recorder used to stop there with an AttributeError.
    episode = walkthrough("advent.z5", 275, directory)
    assert len(episode.steps) == 275
    closing = episode.steps[270]
    assert (closing["room_before"], closing["room_after"], closing["moved"]) == (98, 269, True)
    names = {room["room"]: room["display_name"] for room in episode.header["rooms"]}
    assert names[269] == "NE End of Repository"
    # Mazes whose objects are called `(Alike_Maze_1)` are named as printed, numbered.
    assert names[115] == "Maze (1)" and not any("_" in name for name in names.values())


def test_what_is_inside_a_carried_container_is_carried(directory):
    # karn: `get pouch` (16) takes the closed pouch; `open pouch` (17) shows the gold card inside, which the
    # game's inventory then lists, so it is carried from there (CONVENTIONS.md: carried where the game's
    # own inventory lists it); `put pouch in toolkit` (18) keeps both.
    episode = walkthrough("karn.z5", 20, directory)
    steps = {step["step"]: step for step in episode.steps}
    assert steps[16]["action"] == "get pouch" and "small cloth pouch" in steps[16]["inventory_after"]
    assert "gold card" not in steps[16]["inventory_after"]
    assert steps[17]["action"] == "open pouch" and "gold card" in steps[17]["inventory_after"]
    assert steps[18]["action"] == "put pouch in toolkit"
    assert {"small cloth pouch", "gold card", "toolkit"} <= set(steps[20]["inventory_after"])
    compiled = next(c for c in library() if c.id == "jericho.has_item_at")
    with stored([TraceEpisode(episode.header, episode.steps)]) as con:
        answers = {(c.params["t"], c.params["item"]): c.answer for c in sql_candidates(con, compiled, None)}
        gains = con.execute("SELECT step FROM jericho_item_events WHERE item = 'gold card' AND change = 'gained'").fetchall()
    assert answers[(20, "small cloth pouch")] is True and answers[(20, "gold card")] is True
    assert gains == [(17,)]


@pytest.mark.parametrize("game, steps, printed, internal", [
    ("balances.z5", 1, {"silver coin", "spell book"}, "(players_coin)"),
    ("zork1.z5", 100, {"pair of candles", "brass lantern"}, "pair candles"),  # the episode of the rooms test
    ("sorcerer.z3", 2, {"spell book"}, "vezza"),  # the spells in the book are not things one carries
])
def test_items_are_named_as_the_game_lists_them(directory, game, steps, printed, internal):
    episode = walkthrough(game, steps, directory)
    carried = set().union(episode.header["initial"]["inventory"], *(s["inventory_after"] for s in episode.steps))
    assert printed <= carried
    assert not any(internal in name for name in carried)
    assert not any(internal in name for name in episode.header["vocab"]["item"])


def test_zork1_rooms_are_named_as_printed(directory):
    # The Loud Room's look prints no title once the water roars; the room is named as the game lists it.
    episode = walkthrough("zork1.z5", 100, directory)
    names = {room["name"]: room["display_name"] for room in episode.header["rooms"]}
    assert names["Loud "] == "Loud Room"
    assert "room" not in episode.header["vocab"]  # the store's vocab.room is the rooms, by number


@pytest.mark.parametrize("line, name", [
    ("A torch (providing light)", "torch"), ("your toolkit (which is open)", "toolkit"),
    ('a "distressed" Laura Ashley dress (being worn)', '"distressed" Laura Ashley dress'),
    ("a Sheet of Paper (Printed)", "Sheet of Paper (Printed)"), ("The Book of the Dragons", "Book of the Dragons"),
    ("Ariana's crossbow", "Ariana's crossbow"), ("many rare coins", "rare coins"),
])
def test_listed_names_lose_article_and_state_remarks(line, name):
    assert clean_listed_name(line) == name


def test_false_premises_draw_on_plausible_unambiguous_items(directory):
    # The pool is what the walkthrough carries: never the dam, the roof or the thief of zork1.
    vocab = set(walkthrough("zork1.z5", 100, directory).header["vocab"]["item"])
    assert {"brass lantern", "tan label", "leather bag of coins"} <= vocab
    assert not {"thief", "dam", "roof", "bag", "pair candles", "tlabel"} & vocab


def test_a_name_inside_another_is_ambiguous():
    assert unambiguous_names({"key", "rusty iron key", "lamp", "brass lamp holder", "sword"}) == \
        ["brass lamp holder", "rusty iron key", "sword"]
