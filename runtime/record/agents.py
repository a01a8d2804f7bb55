"""Agents that play recorded episodes: walkthrough, random, scripted (Crafter) and llm.

An agent is given the state the recorder shows it (a dict, see the sessions) and returns a Choice,
or None when it has nothing left to do (a walkthrough that ran out). Every agent but `llm` is a
pure function of its seed and the states it is shown, so recordings are reproducible.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Callable

from qtc.runtime.chat import ChatClient, json_values

REPLY_TOKENS = 256  # an action and a sentence or two of reason


@dataclass(frozen=True)
class Choice:
    action: str
    reason: str | None = None


class WalkthroughAgent:
    """Plays a Jericho game's built-in walkthrough (env.get_walkthrough()), then stops."""

    name = "walkthrough"

    def __init__(self, actions: list[str]):
        self._actions = iter(actions)

    def choose(self, state: dict) -> Choice | None:
        action = next(self._actions, None)
        return None if action is None else Choice(action)


class RandomAgent:
    """Picks uniformly from the valid actions (Jericho) or the action set (Crafter), seeded."""

    name = "random"

    def __init__(self, seed: int, actions: tuple[str, ...] = ()):
        self._rng = random.Random(seed)
        self._actions = actions

    def choose(self, state: dict) -> Choice:
        # Jericho states carry the valid actions; without them, fall back to compass moves.
        options = state.get("valid_actions") or self._actions or ("north", "south", "east", "west")
        return Choice(self._rng.choice(sorted(options)))


class ScriptedCrafterAgent:
    """A simple seeded Crafter policy that produces real events within a couple of hundred steps.

    In order: drink when thirsty and water is in view, eat a cow when hungry, sleep when tired, place
    a table once it has the wood, make a wood pickaxe next to it, collect wood, mine stone with the
    pickaxe, else explore. Costs and requirements come from Crafter's data.
    """

    name = "scripted"

    def __init__(self, seed: int):
        from qtc.dsl import crafter_data
        self._data = crafter_data
        self._rng = random.Random(seed)
        self._heading = "move_left"
        self._placed_table = False

    def choose(self, state: dict) -> Choice:
        inv = state["inventory"]
        data = self._data
        table_wood = data.PLACE["table"]["uses"]["wood"]
        pickaxe_wood = data.MAKE["wood_pickaxe"]["uses"]["wood"]
        if state["sleeping"]:
            return Choice("noop", "asleep, waiting to wake up")
        if inv["drink"] < 7 and self._nearest(state, "water"):
            return self._go_and_do(state, self._nearest(state, "water"), "thirsty: drink water")
        cow = self._nearest_creature(state, "cow")
        if inv["food"] < 7 and cow:
            return self._go_and_do(state, cow, "hungry: hit the cow to eat it")
        if inv["energy"] < 3:
            return Choice("sleep", "tired: sleep to restore energy")
        if not self._placed_table and inv["wood"] >= table_wood + pickaxe_wood:
            if self._facing_cell(state) in data.PLACE["table"]["where"]:
                self._placed_table = True
                return Choice("place_table", "enough wood: place a crafting table")
            return Choice(self._turn(state), "turn to free ground to place the table")
        if inv["wood_pickaxe"] == 0 and inv["wood"] >= pickaxe_wood and self._near(state, "table"):
            return Choice("make_wood_pickaxe", "next to the table: make a wood pickaxe")
        if inv["wood"] < 6 and self._nearest(state, "tree"):
            return self._go_and_do(state, self._nearest(state, "tree"), "collect wood from the tree")
        if inv["wood_pickaxe"] and self._nearest(state, "stone"):
            return self._go_and_do(state, self._nearest(state, "stone"), "mine stone with the pickaxe")
        return self._explore(state)

    def _cells(self, state: dict):
        view = state["view"]
        for j, row in enumerate(view["rows"]):
            for i, material in enumerate(row):
                yield view["x"] + i, view["y"] + j, material

    def _nearest(self, state: dict, material: str) -> tuple[int, int] | None:
        cells = [(abs(x - state["x"]) + abs(y - state["y"]), x, y)
                 for x, y, m in self._cells(state) if m == material]
        return min(cells)[1:] if cells else None

    def _nearest_creature(self, state: dict, creature: str) -> tuple[int, int] | None:
        found = [(abs(c["x"] - state["x"]) + abs(c["y"] - state["y"]), c["x"], c["y"])
                 for c in state["creatures"] if c["creature"] == creature]
        return min(found)[1:] if found else None

    def _near(self, state: dict, material: str) -> bool:
        # Crafter's `make` looks for the table within one cell, diagonals included.
        return any(m == material and abs(x - state["x"]) <= 1 and abs(y - state["y"]) <= 1
                   for x, y, m in self._cells(state))

    def _material_at(self, state: dict, x: int, y: int) -> str | None:
        view = state["view"]
        i, j = x - view["x"], y - view["y"]
        rows = view["rows"]
        return rows[j][i] if 0 <= j < len(rows) and 0 <= i < len(rows[j]) else None

    def _facing_cell(self, state: dict) -> str | None:
        dx, dy = next(o for o, name in self._data.FACINGS.items() if name == state["facing"])
        return self._material_at(state, state["x"] + dx, state["y"] + dy)

    def _go_and_do(self, state: dict, target: tuple[int, int], reason: str) -> Choice:
        dx, dy = target[0] - state["x"], target[1] - state["y"]
        if abs(dx) + abs(dy) == 1:
            facing = self._data.FACINGS[(dx, dy)]
            if state["facing"] == facing:
                return Choice("do", reason)
            return Choice(f"move_{facing}", f"face the target: {reason}")
        steps = []
        if dx:
            steps.append(("move_right" if dx > 0 else "move_left", (1 if dx > 0 else -1, 0)))
        if dy:
            steps.append(("move_down" if dy > 0 else "move_up", (0, 1 if dy > 0 else -1)))
        steps.sort(key=lambda s: -abs(dx if s[1][0] else dy))
        for action, (ox, oy) in steps:
            if self._material_at(state, state["x"] + ox, state["y"] + oy) in self._data.WALKABLE:
                return Choice(action, f"walk towards the target: {reason}")
        return self._explore(state)

    def _turn(self, state: dict) -> str:
        for action, (ox, oy) in self._data.MOVES.items():
            if self._material_at(state, state["x"] + ox, state["y"] + oy) in self._data.WALKABLE:
                return action
        return self._rng.choice(sorted(self._data.MOVES))

    def _explore(self, state: dict) -> Choice:
        ox, oy = self._data.MOVES[self._heading]
        blocked = self._material_at(state, state["x"] + ox, state["y"] + oy) not in self._data.WALKABLE
        if blocked or self._rng.random() < 0.1:
            self._heading = self._rng.choice(sorted(self._data.MOVES))
        return Choice(self._heading, "explore")


class LLMAgent:
    """Asks an OpenAI-compatible chat model for {"action": ..., "reason": ...} at every step, through the
    one model client (runtime/chat.py: retries, one-line errors, JSON read out of a chatty reply)."""

    name = "llm"

    def __init__(self, base_url: str, model: str, env: str, actions: tuple[str, ...] = (),
                 prompt: Callable[[dict], str | list[dict]] | None = None):
        self._client = ChatClient(model, base_url)
        self._env = env
        self._actions = actions
        self._history: list[dict] = []
        # What the model is shown of a state: the text prompt below, or a caller's (a frame and the HUD line).
        self._show = prompt or self._prompt

    def _prompt(self, state: dict) -> str:
        if self._env == "jericho":
            return (f"{state['observation']}\n\nInventory: {', '.join(state['inventory']) or 'nothing'}\n"
                    f"Valid actions include: {', '.join(state.get('valid_actions') or [])}")
        rows = "\n".join(" ".join((m or "-")[:5].ljust(5) for m in row) for row in state["view"]["rows"])
        creatures = ", ".join(f"{c['creature']} at ({c['x']},{c['y']})" for c in state["creatures"])
        return (f"Step {state['step']}. You are at ({state['x']},{state['y']}) facing {state['facing']} "
                f"on {state['terrain']}.\nView (rows from top):\n{rows}\nCreatures: {creatures or 'none'}\n"
                f"Inventory: {json.dumps(state['inventory'])}\nActions: {', '.join(self._actions)}")

    def choose(self, state: dict) -> Choice:
        system = ("You play a game. Reply with a JSON object {\"action\": ..., \"reason\": ...} where "
                  "reason is one or two sentences explaining the action.")
        self._history.append({"role": "user", "content": self._show(state)})
        text = self._client.complete([{"role": "system", "content": system}, *self._history[-10:]],
                                     REPLY_TOKENS).text
        self._history.append({"role": "assistant", "content": text})
        answer = next((v for v in json_values(text).values if isinstance(v, dict) and "action" in v), None)
        action = "" if answer is None else str(answer["action"]).strip()
        reason = None if answer is None else answer.get("reason")
        if self._actions and action not in self._actions:
            # A Crafter action must be one of the game's; an unusable reply becomes a logged no-op.
            return Choice("noop", f"unusable reply: {text[:200]}")
        return Choice(action or "look", None if reason is None else str(reason))
