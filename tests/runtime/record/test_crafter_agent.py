"""The scripted Crafter agent: its reason is its goal and plan at every step, it shelters at night, and
the same seed records the same bytes."""

from __future__ import annotations

from qtc.runtime.record.agents import ScriptedCrafterAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.trace.format import read_episode

GOALS = {"fight", "sleep", "asleep", "wait for daylight in my shelter", "heal in my shelter", "wait in my shelter",
         "rest in my shelter", "leave the shelter", "drink", "eat", "look for a cow", "look for water", "shelter",
         "sleep in the open", "explore", "collect wood", "collect stone", "collect coal", "collect iron",
         "collect diamond", "find free ground to place a table on", "find free ground to place a furnace on",
         "plant a sapling on the grass ahead", "collect a sapling from the grass ahead"}


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
