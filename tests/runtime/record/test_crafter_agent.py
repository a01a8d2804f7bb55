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
         "drink in my shelter"}


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
