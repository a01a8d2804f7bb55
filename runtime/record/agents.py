"""Agents that play recorded episodes: walkthrough, random, scripted (Crafter: crafter_agent.py) and llm.

An agent is given the state the recorder shows it (a dict, see the sessions) and returns a Choice,
or None when it has nothing left to do (a walkthrough that ran out). Every agent but `llm` is a
pure function of its seed and the states it is shown, so recordings are reproducible.
"""

from __future__ import annotations

import random
from typing import Callable

from qtc.runtime.chat import ChatClient, json_values

from .choice import Choice
from .crafter_agent import ScriptedCrafterAgent
from .games import GAMES

__all__ = ["Choice", "WalkthroughAgent", "RandomAgent", "ScriptedCrafterAgent", "LLMAgent"]

REPLY_TOKENS = 256  # an action and a sentence or two of reason


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
        return GAMES[self._env].llm_prompt(state, self._actions)

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
