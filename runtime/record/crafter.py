"""Recording Crafter episodes: per-step state read from the live world, events counted as Crafter counts them.

The session reads Crafter's world directly (env._world, env._player): the material map, the objects,
the player's inventory and its achievement counters. Achievements and collections are the increments
of `player.achievements` (a counter), so a collection at the inventory cap still counts and crafting
never does. Damage is attributed by watching which object's update lowered the player's health.
"""

from __future__ import annotations

import collections
import functools
from typing import Callable

import crafter
import numpy as np
from crafter import objects

from qtc.dsl import crafter_data as data
from .agents import Choice
from qtc.runtime.trace.format import episode_id
from qtc.runtime.chat import image_part
from qtc.runtime.trace.frames import png_bytes, remove_frames, write_frames

# A vision model sees the 64-pixel screen at 4x (256 pixels, each of the 9 x 9 cells 28 pixels): a model
# cutting images into 14-32 pixel patches then gives every cell a patch or more.
VISION_SCALE = 4

# The stat whose exhaustion makes the player's own update cost health, and the cause it is logged as.
_STARVING_STATS = (("food", "starvation"), ("drink", "thirst"), ("energy", "exhaustion"))


class DamageTracker:
    """Attributes each loss of the player's health to the object whose update caused it.

    Crafter lowers health in a zombie's update, an arrow's update (skeletons shoot arrows) and the
    player's own update (lava, or a life stat at 0), and reports none of them. Each object's update
    is wrapped for the step; the wrapper changes nothing the game does.
    """

    def __init__(self, world, player):
        self.world = world
        self.player = player
        self.losses: list[dict] = []

    def watch(self) -> None:
        for obj in self.world.objects:
            if "update" not in vars(obj):
                obj.update = functools.partial(self._tracked, obj, obj.update)

    def take(self) -> list[dict]:
        losses, self.losses = self.losses, []
        return losses

    def _tracked(self, obj, update) -> None:
        before = self.player.health
        update()
        lost = before - self.player.health
        if lost > 0:
            self.losses.append({"amount": int(lost), "cause": self._cause(obj),
                                "attack": obj is not self.player})

    def _cause(self, obj) -> str:
        if isinstance(obj, objects.Arrow):
            return "skeleton"
        if obj is not self.player:
            return data.creature_name(obj)
        if self.world[self.player.pos][0] == "lava":
            return "lava"
        inventory = self.player.inventory
        for stat, cause in _STARVING_STATS:
            if inventory[stat] <= 0 and not (stat == "energy" and self.player.sleeping):
                return cause
        return "unknown"


class InsertionOrderedSet(dict):
    """A set of game objects that iterates in insertion order (the keys of a dict)."""

    def add(self, item) -> None:
        self[item] = None

    def remove(self, item) -> None:
        del self[item]


def order_chunk_objects(world) -> None:
    """Make Crafter's per-chunk object sets iterate in the order the objects were added.

    Env._balance_object picks the creature to despawn by index into a list built from a chunk's set
    of objects, whose order follows memory addresses, so a seeded episode diverges from process to
    process. With insertion-ordered chunks the same seed and actions give the same episode.
    """
    added = {id(obj): index for index, obj in enumerate(world._objects) if obj}
    ordered = collections.defaultdict(InsertionOrderedSet)
    for key, objs in world._chunks.items():
        ordered[key] = InsertionOrderedSet.fromkeys(sorted(objs, key=lambda obj: added[id(obj)]))
    world._chunks = ordered


class CrafterSession:
    """One live Crafter episode, stepped by the recorder; `state` is what the agent sees, its `frame` the
    screen (64 x 64 RGB, the HUD's inventory in its bottom rows). With `keep_frames`, every screen is kept
    and written beside the trace when the episode ends (runtime/trace/frames.py).

    The screen is the observation Crafter returns from reset and step: rendering it again would draw the
    night's noise from the world's random state and so change the episode.
    """

    env_name = "crafter"
    actions = data.ACTIONS  # the game's actions, by name

    def __init__(self, seed: int, agent_name: str, max_steps: int, ordered_objects: bool = True,
                 keep_frames: bool = False):
        self.seed = seed
        self.agent_name = agent_name
        self.game = "crafter"
        self.episode_id = episode_id(self.game, agent_name, seed)
        self.env = crafter.Env(seed=seed, length=max_steps)
        frame = self.env.reset()
        self.frames: list[np.ndarray] | None = [frame] if keep_frames else None
        self.world, self.player = self.env._world, self.env._player
        self.ordered_objects = ordered_objects
        if ordered_objects:
            order_chunk_objects(self.world)
        grid = self.env._local_view._grid
        self._view_size = (int(grid[0]), int(grid[1]))
        self._damage = DamageTracker(self.world, self.player)
        self._mat_map = self.world._mat_map.copy()
        self._achievements = dict(self.player.achievements)
        self.initial = self._state()
        self.state = {**self.initial, "step": 0, "daylight": float(self.world.daylight),
                      "sleeping": bool(self.player.sleeping), "frame": frame}
        self.map_init = {"materials": [self.world._mat_names[i] for i in range(len(self.world._mat_names))],
                         "rows": self._mat_map.T.tolist()}
        self.death_step: int | None = None
        self.death_cause: str | None = None

    def _view(self, x: int, y: int) -> dict:
        width, height = self._view_size
        x0, y0 = x - width // 2, y - height // 2
        area_w, area_h = self.world.area
        rows = [[self.world._mat_names[int(self.world._mat_map[i, j])]
                 if 0 <= i < area_w and 0 <= j < area_h else None
                 for i in range(x0, x0 + width)] for j in range(y0, y0 + height)]
        return {"x": x0, "y": y0, "rows": rows}

    def _creatures(self, view: dict) -> list[dict]:
        width, height = self._view_size
        seen = []
        for obj in self.world.objects:
            ox, oy = int(obj.pos[0]), int(obj.pos[1])
            if obj is not self.player and 0 <= ox - view["x"] < width and 0 <= oy - view["y"] < height:
                seen.append({"creature": data.creature_name(obj), "x": ox, "y": oy,
                             "health": int(obj.health)})
        return sorted(seen, key=lambda c: (c["y"], c["x"], c["creature"]))

    def _state(self) -> dict:
        x, y = int(self.player.pos[0]), int(self.player.pos[1])
        view = self._view(x, y)
        return {"x": x, "y": y, "facing": data.FACINGS[tuple(int(v) for v in self.player.facing)],
                "terrain": self.world[self.player.pos][0],
                "inventory": {k: int(self.player.inventory[k]) for k in data.INVENTORY_KEYS},
                "view": view, "creatures": self._creatures(view)}

    def _map_changes(self) -> list[dict]:
        current = self.world._mat_map
        names = self.world._mat_names
        changes = [{"x": int(x), "y": int(y), "before": names[int(self._mat_map[x, y])],
                    "after": names[int(current[x, y])]}
                   for x, y in np.argwhere(current != self._mat_map)]
        self._mat_map = current.copy()
        return changes

    def _achievement_increments(self) -> list[str]:
        counts = self.player.achievements
        gained = [name for name in data.ACHIEVEMENTS
                  for _ in range(counts[name] - self._achievements[name])]
        self._achievements = dict(counts)
        return gained

    @staticmethod
    def action_problem(action) -> str | None:
        """Why `action` is not one of Crafter's actions (by name), or None if it is."""
        if isinstance(action, str) and action in data.ACTIONS:
            return None
        return f"{action!r} is not a Crafter action (one of {', '.join(data.ACTIONS)})"

    def step(self, step: int, choice: Choice) -> dict:
        before = self.state
        self._damage.watch()
        frame, reward, done, _ = self.env.step(data.ACTIONS.index(choice.action))
        if self.frames is not None:
            self.frames.append(frame)
        after = self._state()
        damage = self._damage.take()
        if self.player.health <= 0 and self.death_step is None:
            self.death_step = step
            self.death_cause = damage[-1]["cause"] if damage else "unknown"
        self.state = {**after, "step": step, "daylight": float(self.world.daylight),
                      "sleeping": bool(self.player.sleeping), "frame": frame}
        return {
            "step": step, "action": choice.action, "reason": choice.reason, "reward": float(reward),
            "x_before": before["x"], "y_before": before["y"], "x_after": after["x"], "y_after": after["y"],
            "facing_before": before["facing"], "facing_after": after["facing"],
            "terrain_before": before["terrain"], "terrain_after": after["terrain"],
            "daylight": self.state["daylight"], "sleeping": self.state["sleeping"], "done": bool(done),
            "inventory": after["inventory"], "view": after["view"], "creatures": after["creatures"],
            "achievements": self._achievement_increments(), "map_changes": self._map_changes(),
            "damage": damage,
        }

    def ending(self) -> str:
        """How an episode that reported done ended: the player died, or it only hit its step limit."""
        return "death" if self.death_step is not None else "step_limit"

    def write_beside(self, trace_path) -> None:
        """Write the kept frames beside the trace about to be written there; without frames, remove any
        an earlier recording of the episode left, which would not match this one."""
        if self.frames is None:
            remove_frames(trace_path)
        else:
            write_frames(trace_path, self.frames)

    def header(self) -> dict:
        return {"ordered_objects": self.ordered_objects, "death_step": self.death_step, "death_cause": self.death_cause,
                "vocab": data.vocabulary(), "map_init": self.map_init, "initial": self.initial}


def hud_line(state: dict) -> str:
    """The HUD as one line of text: the life stats, then the items held."""
    held = state["inventory"]
    stats = ", ".join(f"{stat} {held[stat]}" for stat in data.STATS)
    items = ", ".join(f"{item} {held[item]}" for item in data.ITEMS if held[item]) or "nothing"
    return f"{stats} | inventory: {items}"


def vision_prompt(actions: tuple[str, ...]) -> Callable[[dict], list[dict]]:
    """What a vision model playing Crafter is shown of a state: the screen as an image and the HUD line."""
    def show(state: dict) -> list[dict]:
        screen = state["frame"].repeat(VISION_SCALE, axis=0).repeat(VISION_SCALE, axis=1)
        text = (f"Your screen after step {state['step']} (you are the player at its centre; your inventory is "
                f"drawn in its bottom rows). {hud_line(state)}\nActions: {', '.join(actions)}")
        return [{"type": "text", "text": text}, image_part(png_bytes(screen))]
    return show
