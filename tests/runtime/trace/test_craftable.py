"""crafter_craftable against Crafter itself: at every state of a real episode, whether each recipe's make
action would succeed, read from the live game with Crafter's own nearby check and recipe data."""

from __future__ import annotations

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


def test_craftable_is_what_crafter_would_allow_after_every_step(tmp_path):
    session = CrafterSession(SEED, "scripted", STEPS)
    expected = {0: live_craftable(session)}
    path = record_episode(session, ScriptedCrafterAgent(SEED), tmp_path, STEPS,
                          on_step=lambda live, record: expected.__setitem__(record["step"], live_craftable(live)))
    con = open_store(path)
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

