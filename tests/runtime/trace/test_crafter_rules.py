"""Crafter's rules as tables against Crafter itself: at every state of a real episode, whether each
recipe's make action, a do at the faced cell and each place action would succeed, read from the live
game with Crafter's own nearby check, its world and its rule data (runtime/trace/crafter_rules.py)."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pytest
from crafter import constants

from qtc.runtime.record.agents import Choice, ScriptedCrafterAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.trace.store import open_store

SEED, STEPS = 3, 180
SLEEP_AT = 135  # energy has fallen below its maximum by then, and the scripted agent has mined stone


def live_awake(session: CrafterSession) -> bool:
    """Player.update's test of sleep: asleep with less than full energy, the command becomes sleep."""
    player = session.player
    return not player.sleeping or player.inventory["energy"] >= constants.items["energy"]["max"]


def live_craftable(session: CrafterSession) -> dict[str, tuple[bool, bool, bool]]:
    """Crafter's own test (Player._make), per recipe: (the inventory holds what it uses, its stations are
    near, the player would act)."""
    player = session.player
    nearby, _ = session.world.nearby(player.pos, 1)
    return {item: (all(player.inventory[k] >= v for k, v in info["uses"].items()),
                   all(station in nearby for station in info["nearby"]), live_awake(session))
            for item, info in constants.make.items()}


def live_facing(session: CrafterSession) -> tuple[str, bool]:
    """The material of the cell the player faces, and whether a creature or object is on it."""
    player = session.player
    material, obj = session.world[(player.pos[0] + player.facing[0], player.pos[1] + player.facing[1])]
    return material, obj is not None


def live_collectable(session: CrafterSession) -> dict[str, tuple[str, bool, bool]]:
    """Player._do_material's test, where a do would reach the material: item -> (material, tools held,
    the player would act)."""
    material, occupied = live_facing(session)
    info = constants.collect.get(material)
    if occupied or info is None:
        return {}
    tools = all(session.player.inventory[k] >= v for k, v in info["require"].items())
    return {item: (material, tools, live_awake(session)) for item in info["receive"]}


def live_placeable(session: CrafterSession) -> dict[str, tuple[bool, bool, bool]]:
    """Player._place's test, per place rule: (the inventory holds what it uses, the faced cell takes it, the
    player would act)."""
    material, occupied = live_facing(session)
    return {item: (all(session.player.inventory[k] >= v for k, v in info["uses"].items()),
                   not occupied and material in info["where"], live_awake(session))
            for item, info in constants.place.items()}


class Sleeper:
    """The scripted agent, but it goes to sleep at step SLEEP_AT and presses do, make and place while asleep
    (which the game turns into sleep until the player is rested)."""

    name = "scripted"

    def __init__(self, seed: int):
        self._scripted = ScriptedCrafterAgent(seed)
        self._actions = ("do", "make_wood_pickaxe", "place_table", "place_stone")

    def choose(self, state: dict) -> Choice:
        choice = self._scripted.choose(state)
        if state["step"] == SLEEP_AT:
            return Choice("sleep")
        return Choice(self._actions[state["step"] % len(self._actions)]) if state["sleeping"] else choice


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
    path = record_episode(session, Sleeper(SEED), tmp_path_factory.mktemp("rules"), STEPS,
                          on_step=lambda session, record: read(session, record["step"]))
    con = open_store(path)
    yield Recorded(con, *({step: reads[i] for step, reads in live.items()} for i in range(3)))
    con.close()


def test_collectable_and_placeable_are_what_crafter_would_allow_after_every_step(recorded):
    con = recorded.con
    expected = {step: (recorded.collectable[step], recorded.placeable[step]) for step in recorded.collectable}
    actual: dict[int, tuple[dict, dict]] = {step: ({}, {}) for step in expected}
    for step, material, item, tools, awake in con.execute(
            "SELECT step, material, item, tools, awake FROM crafter_collectable").fetchall():
        actual[step][0][item] = (material, tools, awake)
    for step, item, ingredients, target, awake in con.execute(
            "SELECT step, item, ingredients, target, awake FROM crafter_placeable").fetchall():
        actual[step][1][item] = (ingredients, target, awake)
    assert actual == expected
    assert any(v == (True, True, True) for _, placing in expected.values() for v in placing.values())
    assert {m for collecting, _ in expected.values() for m, *_ in collecting.values()} >= {"tree", "stone", "grass"}
    # Asleep and not rested at some states where the tools were held: a do would not have collected.
    assert any(v[1] and not v[2] for collecting, _ in expected.values() for v in collecting.values())
    assert set(con.execute("SELECT material, item, amount, probability, leaves FROM crafter_collect_rules").fetchall()) == {
        (material, item, amount, float(info.get("probability", 1)), info["leaves"])
        for material, info in constants.collect.items() for item, amount in info["receive"].items()}
    assert set(con.execute("SELECT item, material FROM crafter_place_targets").fetchall()) == {
        (item, material) for item, info in constants.place.items() for material in info["where"]}


def test_craftable_is_what_crafter_would_allow_after_every_step(recorded):
    con, expected = recorded.con, recorded.craftable
    rows = con.execute("SELECT step, item, ingredients, stations, awake FROM crafter_craftable").fetchall()
    actual: dict[int, dict[str, tuple[bool, bool, bool]]] = {}
    for step, item, ingredients, stations, awake in rows:
        actual.setdefault(step, {})[item] = (ingredients, stations, awake)
    assert actual == expected
    # The episode exercises every side: some states can make something, some lack only a station, in
    # some the player sleeps.
    assert any(all(v) for state in expected.values() for v in state.values())
    assert any(v == (True, False, True) for state in expected.values() for v in state.values())
    assert any(not v[2] for state in expected.values() for v in state.values())
    # The recipes are Crafter's data, the same rows for every episode.
    assert set(con.execute("SELECT item, ingredient, amount FROM crafter_recipe_uses").fetchall()) == {
        (item, ingredient, amount) for item, info in constants.make.items() for ingredient, amount in info["uses"].items()}
    assert set(con.execute("SELECT item, station FROM crafter_recipe_stations").fetchall()) == {
        (item, station) for item, info in constants.make.items() for station in info["nearby"]}




def test_the_rules_questions_answer_by_the_game_s_test_sleep_included(recorded):
    """Each rules question's answer is the live game's test, and some are asked where the player slept on
    with all else allowing it: "no", since the game would have turned the action into sleep."""
    from support.ground_truth import library, sql_candidates

    compiled = {c.id: c for c in library()}
    slept_on = 0
    for template_id, table in (("crafter.can_craft_at", recorded.craftable), ("crafter.can_place_at", recorded.placeable),
                               ("crafter.can_collect_at", recorded.collectable)):
        for c in sql_candidates(recorded.con, compiled[template_id], None):
            state = table[c.params["t"]]
            live = state[c.params["item"]] if "item" in c.params else next(iter(state.values()))[1:]
            assert c.answer == all(live), (template_id, c.params, live)
            slept_on += not live[-1] and all(live[:-1])
    assert slept_on
