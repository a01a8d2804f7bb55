"""The scripted Crafter agent: its reason is its goal and plan at every step, it shelters at night, its
home keeps its plants walled in, and the same seed records the same bytes."""

from __future__ import annotations

from qtc.runtime.record.agents import ScriptedCrafterAgent
from qtc.runtime.record.crafter_farm import Farm
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.trace.format import read_episode

GOALS = {"fight", "sleep", "asleep", "wait for daylight in my shelter", "heal in my shelter", "wait in my shelter",
         "rest in my shelter", "leave the shelter", "drink", "eat", "look for a cow", "look for water", "shelter",
         "sleep in the open", "explore", "collect wood", "collect stone", "collect coal", "collect iron",
         "collect diamond", "find free ground to place a table on", "find free ground to place a furnace on",
         "collect saplings for my home", "build my home", "close my home behind me", "go home to eat a ripe plant",
         "eat a ripe plant in my shelter", "wait in my shelter for a plant to ripen",
         "drink in my shelter", "sleep at home", "wait for daylight at home", "wait at home for a plant to ripen",
         "rest at home", "wait at home", "leave my home", "look for a home site by water"}


def test_every_step_gives_its_goal_and_plan(crafter_recording):
    steps = read_episode(crafter_recording.path).steps
    goals = [step["reason"].split(":")[0] for step in steps]
    assert all(goal in GOALS or goal.startswith(("make a ", "make an ", "place a ")) for goal in goals), set(goals) - GOALS
    # Seed 0's first night: it seals itself in and sleeps, and nothing hurts it while it sleeps.
    assert "sleep" in goals and any(step["sleeping"] for step in steps)
    assert not any(step["damage"] for step in steps if step["sleeping"])
    assert read_episode(crafter_recording.path).header["ended_by"] == "step_limit"


def test_the_same_seed_records_the_same_bytes(tmp_path):
    paths = [record_episode(CrafterSession(4, "scripted", 60), ScriptedCrafterAgent(4), tmp_path / name, 60)
             for name in ("a", "b")]
    assert paths[0].read_bytes() == paths[1].read_bytes()


def test_a_homes_plants_touch_only_its_pocket():
    """Every side of each plant is the pocket's inner cell, another plant or a wall; the pocket's own sides
    are walls, but for the door."""
    farm = Farm(door=(10, 10), inward=(0, -1))
    assert (farm.first, farm.second, farm.end) == ((10, 9), (10, 8), (10, 7))
    walls = {*farm.fences, *farm.pocket_walls}
    assert len(walls) == 7 and not walls & farm.inner
    for plant in farm.plants:
        sides = {(plant[0] + dx, plant[1] + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))}
        assert sides - walls - set(farm.plants) == {farm.second}
    first_sides = {(farm.first[0] + dx, farm.first[1]) for dx in (1, -1)}
    assert first_sides == set(farm.pocket_walls)
    assert farm.near((10, 20), 12) and not farm.near((10, 21), 12)


def _seen(rows: list[list[str]]) -> dict:
    """A state the recorder would show: the agent in the middle of `rows` in daylight, with what a home needs."""
    inventory = {"health": 9, "food": 9, "drink": 9, "energy": 9, "sapling": 3, "wood": 5, "stone": 9,
                 "coal": 0, "iron": 0, "diamond": 0, "wood_pickaxe": 1, "stone_pickaxe": 0, "iron_pickaxe": 0,
                 "wood_sword": 0, "stone_sword": 0, "iron_sword": 0}
    return {"x": len(rows[0]) // 2, "y": len(rows) // 2, "facing": "down", "view": {"x": 0, "y": 0, "rows": rows},
            "creatures": [], "step": 60, "daylight": 1.0, "sleeping": False, "inventory": inventory}


def test_a_home_is_built_only_with_water_in_the_pockets_wall():
    """The agent drinks from inside its home: a site's pocket must have water beside it; with none seen, no site."""
    dry = [["grass"] * 13 for _ in range(13)]
    agent = ScriptedCrafterAgent(0)
    agent._remember(_seen(dry))
    assert agent._find_farm(_seen(dry)["inventory"]) is None
    # A shore with a corner: water beside the pocket's first cell, grass beside the second for a plant.
    lake = [["water" if x >= 10 and y <= 6 else "grass" for x in range(13)] for y in range(13)]
    agent = ScriptedCrafterAgent(0)
    agent._remember(_seen(lake))
    farm = agent._find_farm(_seen(lake)["inventory"])
    assert farm is not None and "water" in {lake[y][x] for x, y in farm.pocket_walls}


def test_a_shelter_with_no_stone_in_hand_is_dug_before_it_is_walled():
    """Stone to mine in the pocket pays for its walls: with none in hand the agent digs first, rather than
    try to place stone it does not have (it once stood all night placing nothing)."""
    rows = [["grass"] * 13 for _ in range(13)]
    for x, y in ((8, 6), (9, 6), (10, 6), (8, 7), (9, 7), (9, 5)):  # a pocket short of one side wall
        rows[y][x] = "stone"
    state = _seen(rows)
    state["inventory"]["stone"] = 0
    agent = ScriptedCrafterAgent(0)
    agent._remember(state)
    choice = agent._go_shelter("dark", state["inventory"])
    assert choice is not None and "wall the pocket" not in choice.reason


def test_a_night_shelter_is_never_dug_into_its_homes_walls():
    """Mining a fence of its home for a shelter would open a plant to the creatures outside."""
    rows = [["stone" if x >= 8 else "grass" for x in range(13)] for y in range(13)]
    state = _seen(rows)
    agent = ScriptedCrafterAgent(0)
    agent._remember(state)
    assert agent._site_cost((7, 7), (1, 0), state["inventory"]) is not None
    agent._home = Farm(door=(10, 9), inward=(0, -1))  # (8, 7) fences its plant at (9, 7)
    assert (8, 7) in agent._home.fences
    assert agent._site_cost((7, 7), (1, 0), state["inventory"]) is None


def test_out_of_food_at_home_it_goes_out_past_a_zombie():
    """With no plant left to wait for and no food, waiting for a zombie to leave only starves it."""
    farm = Farm(door=(6, 8), inward=(0, -1))  # the agent stands in its pocket's inner cell, (6, 6)
    rows = [["grass"] * 13 for _ in range(13)]
    for x, y in (farm.door, *farm.fences, farm.pocket_walls[0]):
        rows[y][x] = "stone"
    x, y = farm.pocket_walls[1]
    rows[y][x] = "water"
    state = _seen(rows)
    state["creatures"] = [{"creature": "zombie", "x": 9, "y": 6, "health": 5}]
    state["inventory"]["food"] = 0
    agent = ScriptedCrafterAgent(0)
    agent._home = farm  # its plants all lost
    assert agent.choose(state).reason.startswith("leave my home: food 0/9, no plant")
