"""Crafter's rules as tables against Crafter itself: at every state of a real episode, whether each
recipe's make action, a do at the faced cell and each place action would succeed, read from the live
game with Crafter's own nearby check, its world and its rule data (runtime/trace/crafter_rules.py)."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pytest
from crafter import constants

from qtc.runtime.record.agents import ScriptedCrafterAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.trace.store import open_store

SEED, STEPS = 3, 150


def live_craftable(session: CrafterSession) -> dict[str, tuple[bool, bool]]:
    """Crafter's own test (Player._make), per recipe: (the inventory holds what it uses, its stations are near)."""
    player = session.player
    nearby, _ = session.world.nearby(player.pos, 1)
    return {item: (all(player.inventory[k] >= v for k, v in info["uses"].items()),
                   all(station in nearby for station in info["nearby"]))
            for item, info in constants.make.items()}


def live_facing(session: CrafterSession) -> tuple[str, bool]:
    """The material of the cell the player faces, and whether a creature or object is on it."""
    player = session.player
    material, obj = session.world[(player.pos[0] + player.facing[0], player.pos[1] + player.facing[1])]
    return material, obj is not None


def live_collectable(session: CrafterSession) -> dict[str, tuple[str, bool]]:
    """Player._do_material's test, where a do would reach the material: item -> (material, tools held)."""
    material, occupied = live_facing(session)
    info = constants.collect.get(material)
    if occupied or info is None:
        return {}
    tools = all(session.player.inventory[k] >= v for k, v in info["require"].items())
    return {item: (material, tools) for item in info["receive"]}


def live_placeable(session: CrafterSession) -> dict[str, tuple[bool, bool]]:
    """Player._place's test, per place rule: (the inventory holds what it uses, the faced cell takes it)."""
    material, occupied = live_facing(session)
    return {item: (all(session.player.inventory[k] >= v for k, v in info["uses"].items()),
                   not occupied and material in info["where"])
            for item, info in constants.place.items()}


@dataclass
class Recorded:
    """The episode's store, and what Crafter itself allowed at each step (0: before the first)."""
    con: duckdb.DuckDBPyConnection
    collectable: dict[int, dict]
    placeable: dict[int, dict]
    craftable: dict[int, dict]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Recorded:
    """One scripted episode, with what the live game allowed after every step, for both tests."""
    session = CrafterSession(SEED, "scripted", STEPS)
    live: dict[int, tuple[dict, dict, dict]] = {}

    def read(session: CrafterSession, step: int) -> None:
        live[step] = (live_collectable(session), live_placeable(session), live_craftable(session))
    read(session, 0)
    path = record_episode(session, ScriptedCrafterAgent(SEED), tmp_path_factory.mktemp("rules"), STEPS,
                          on_step=lambda session, record: read(session, record["step"]))
    con = open_store(path)
    yield Recorded(con, *({step: reads[i] for step, reads in live.items()} for i in range(3)))
    con.close()


def test_collectable_and_placeable_are_what_crafter_would_allow_after_every_step(recorded):
    con = recorded.con
    expected = {step: (recorded.collectable[step], recorded.placeable[step]) for step in recorded.collectable}
    actual: dict[int, tuple[dict, dict]] = {step: ({}, {}) for step in expected}
    for step, material, item, tools in con.execute("SELECT step, material, item, tools FROM crafter_collectable").fetchall():
        actual[step][0][item] = (material, tools)
    for step, item, ingredients, target in con.execute(
            "SELECT step, item, ingredients, target FROM crafter_placeable").fetchall():
        actual[step][1][item] = (ingredients, target)
    assert actual == expected
    assert any(v == (True, True) for _, placing in expected.values() for v in placing.values())
    assert {m for collecting, _ in expected.values() for m, _ in collecting.values()} >= {"tree", "stone", "grass"}
    assert set(con.execute("SELECT material, item, amount, probability, leaves FROM crafter_collect_rules").fetchall()) == {
        (material, item, amount, float(info.get("probability", 1)), info["leaves"])
        for material, info in constants.collect.items() for item, amount in info["receive"].items()}
    assert set(con.execute("SELECT item, material FROM crafter_place_targets").fetchall()) == {
        (item, material) for item, info in constants.place.items() for material in info["where"]}


def test_craftable_is_what_crafter_would_allow_after_every_step(recorded):
    con, expected = recorded.con, recorded.craftable
    rows = con.execute("SELECT step, item, ingredients, stations FROM crafter_craftable").fetchall()
    actual: dict[int, dict[str, tuple[bool, bool]]] = {}
    for step, item, ingredients, stations in rows:
        actual.setdefault(step, {})[item] = (ingredients, stations)
    assert actual == expected
    # The episode exercises both sides: some states can make something, some lack only a station.
    assert any(all(v) for state in expected.values() for v in state.values())
    assert any(v == (True, False) for state in expected.values() for v in state.values())
    # The recipes are Crafter's data, the same rows for every episode.
    assert set(con.execute("SELECT item, ingredient, amount FROM crafter_recipe_uses").fetchall()) == {
        (item, ingredient, amount) for item, info in constants.make.items() for ingredient, amount in info["uses"].items()}
    assert set(con.execute("SELECT item, station FROM crafter_recipe_stations").fetchall()) == {
        (item, station) for item, info in constants.make.items() for station in info["nearby"]}

