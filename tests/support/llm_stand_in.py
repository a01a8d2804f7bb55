"""An LLM-like player for the llm agent of `qtc play`, served by the stub server (openai_stub_server.py) on
127.0.0.1: deterministic, its choice a hash of the prompt, always with a reason of a few words that come
back (the keywords the reasoning templates ask about). Used by bench/truth_audit.py and by the session
fixture of a TextWorld episode with reasons (tests/conftest.py).
"""

from __future__ import annotations

import json
import re
import zlib

from .openai_stub_server import Reply, message_text

# What the stand-in types now and then besides a valid action: a menu, a made-up verb, a refused command.
TYPED = ("help", "hint", "xyzzyq the lamp", "inventory", "talk to the shadows", "about")
REASONS = ("I {verb} because the {noun} may hide a way forward.",
           "Exploring: {verb} seems the safest move while I look for the {noun}.",
           "The {noun} was mentioned earlier, so I {verb} to learn more about it.")
MOVES = ("north", "south", "east", "west", "up", "down", "northeast", "southwest", "in", "out")
VERBS = ("take", "examine", "open", "read", "push")
NOUNS = ("treasure", "door", "key", "light", "exit", "stranger")


def stand_in(body: dict) -> Reply:
    """An LLM-like player: a Crafter action from the listed ones; in a text game that lists its valid
    actions (TextWorld's admissible commands), one of them (a move, an opening or a taking where it can),
    one step in seven a command a model types on its own; in one that lists none, a move or a verb on a
    word the game just printed ("take mailbox", "open leaflet"), every fifth step a typed command."""
    prompt = message_text(body["messages"][-1])
    turn = len(body["messages"])
    chance = zlib.crc32(prompt.encode())
    listed = re.search(r"^Actions: (.*)$", prompt, re.M)
    valid = re.search(r"^Valid actions include: (.+)$", prompt, re.M)
    nouns = sorted(set(re.findall(r"\b[a-z]{4,}\b", prompt.split("Inventory:")[0]))) or ["around"]
    if listed:
        actions = [a.strip() for a in listed.group(1).split(",") if a.strip()]
        action = actions[chance % len(actions)]
    elif valid:
        # drawn from the whole conversation: a refused command, whose reply repeats, is not typed again forever
        chance = zlib.crc32(json.dumps(body["messages"]).encode())
        actions = [a.strip() for a in valid.group(1).split(",") if a.strip()]
        drawn_to = [a for a in actions if a.split()[0] in ("go", "open", "take")] or actions
        action = TYPED[chance // 7 % len(TYPED)] if chance % 7 == 0 else drawn_to[chance // 7 % len(drawn_to)]
    elif chance % 5 == 0:
        action = TYPED[chance // 5 % len(TYPED)]
    elif chance % 5 < 3:
        action = MOVES[chance // 5 % len(MOVES)]
    else:
        action = f"{VERBS[chance // 5 % len(VERBS)]} {nouns[chance // 7 % len(nouns)]}"
    reason = REASONS[turn % len(REASONS)].format(verb=action, noun=NOUNS[chance % len(NOUNS)])
    return Reply(json.dumps({"action": action, "reason": reason}))
