"""Crafter episodes staged by editing the live game before recording (a zombie beside the player, lava
ahead), for tests of what only such moments show: death, its cause, damage."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from crafter import objects

from qtc.runtime.record.agents import Choice
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.trace.format import Episode, read_episode

SEED = 3


class Repeat:
    """An agent that takes one action at every step."""
    name = "test"

    def __init__(self, action: str):
        self.action = action

    def choose(self, state):
        return Choice(self.action)


def staged_episode(directory: Path, setup: Callable[[CrafterSession], None], action: str, max_steps: int) -> Episode:
    """An episode of `action` repeated, recorded after `setup` edited the game."""
    session = CrafterSession(SEED, "test", max_steps)
    setup(session)
    return read_episode(record_episode(session, Repeat(action), directory, max_steps))


def zombie_next_to_player(session: CrafterSession) -> None:
    world, player = session.env._world, session.env._player
    target = player.pos + (1, 0)
    world[target] = "grass"
    if world[target][1]:
        world.remove(world[target][1])
    world.add(objects.Zombie(world, target, player))
