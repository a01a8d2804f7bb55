"""Recording Jericho episodes: rooms by object number, moves from room changes, offline valid actions.

Rooms. The room is the outermost named ancestor of the player in the object tree: the player's parent
may be a bed or a boat, and ZIL games (zork1) keep every room under one nameless container object.
A room is keyed by its object number ("Forest" is three rooms in zork1). The object's short name is
often an abbreviation of the title the game prints ("Living " for "Living Room", "AragaFalls" for
"Aragain Falls", "" for zork1's Cyclops Room), so the display name is the title that `look` prints on
the first visit (looked at in a saved copy of the state, which is then restored) when that title
matches the short name (same first letter, the name's letters in order within the title's; a vehicle
suffix such as ", in the magic boat" dropped), else the short name with whitespace collapsed (a dark
room's look prints no title). Display names that several rooms seen in the episode share are numbered
in the order the rooms were first seen: "Forest (1)", "Forest (2)".

Moves. `moved` is whether the action changed the room; `direction` is the direction the command names
("n", "north", "go north", "climb up", "enter" -> "in", ...) and is recorded only for an action that
moved the player (a blocked "north" is not a move; "climb tree" is a move without a direction).
"""

from __future__ import annotations

import re
from pathlib import Path

import jericho

from .agents import Choice
from .jericho_actions import valid_actions
from qtc.runtime.trace.format import episode_id

DIRECTIONS = {
    "n": "north", "s": "south", "e": "east", "w": "west",
    "ne": "northeast", "nw": "northwest", "se": "southeast", "sw": "southwest",
    "u": "up", "d": "down", "in": "in", "inside": "in", "out": "out", "outside": "out",
    **{d: d for d in ("north", "south", "east", "west", "northeast", "northwest", "southeast",
                      "southwest", "up", "down", "upstairs", "downstairs")},
}
_STAIRS = {"upstairs": "up", "downstairs": "down"}
MOVE_VERBS = frozenset({"go", "walk", "run", "climb", "head", "move", "crawl", "swim", "jump", "step",
                        "travel", "proceed", "wade", "slide", "descend", "ascend"})
_VERB_DIRECTIONS = {"enter": "in", "exit": "out", "leave": "out", "ascend": "up", "descend": "down"}
_FILLER = frozenset({"to", "the", "towards", "toward"})


def command_direction(command: str) -> str | None:
    """The direction a command names, if any: "n", "go north", "climb up", "enter house" -> in."""
    words = [w for w in re.findall(r"[a-z]+", command.lower()) if w not in _FILLER]
    if not words:
        return None
    first, rest = words[0], words[1:]
    if first in DIRECTIONS and not rest:
        direction = DIRECTIONS[first]
    elif first in MOVE_VERBS and rest and rest[0] in DIRECTIONS:
        direction = DIRECTIONS[rest[0]]
    else:
        direction = _VERB_DIRECTIONS.get(first)
    return _STAIRS.get(direction, direction)


def direction_vocabulary() -> list[str]:
    return sorted({_STAIRS.get(d, d) for d in DIRECTIONS.values()})


def clean_room_name(name: str) -> str:
    return " ".join(name.split())


_VEHICLE_SUFFIX = re.compile(r",\s+(in|on)\s+the\s+.*$")


def room_title(name: str, look: str) -> str:
    """The room title printed by `look` if it matches the object's short name, else the short name."""
    short = clean_room_name(name)
    lines = [line.strip() for line in look.strip().splitlines() if line.strip()]
    title = _VEHICLE_SUFFIX.sub("", lines[0]) if lines else ""
    if not title or len(title) > 50 or re.search(r"[.!?]", title) or not title[0].isupper():
        return short
    letters = iter(title.lower())
    name_letters = [c for c in short.lower() if c.isalnum()]
    if not name_letters or (name_letters[0] == title[0].lower() and all(c in letters for c in name_letters)):
        return title
    return short


def looks_abbreviated(name: str) -> bool:
    """Whether a short name is likely a clipped form of the printed title ("Living ", "CanyView").

    Unvisited rooms cannot be looked at, so the vocabulary holds their short names; clipped ones are
    left out, lest a false premise name a room the episode visited under its full title.
    """
    return not name.strip() or name != name.strip() or bool(re.search(r"[a-z][A-Z]|^[A-Z]{2}[a-z]", name))


def display_names(titles: dict[int, str]) -> dict[int, str]:
    """Display names for rooms (object number -> title, in order of first visit), disambiguated."""
    cleaned = {num: title or f"room {num}" for num, title in titles.items()}
    totals: dict[str, int] = {}
    for name in cleaned.values():
        totals[name] = totals.get(name, 0) + 1
    seen: dict[str, int] = {}
    names = {}
    for num, name in cleaned.items():
        if totals[name] > 1:
            seen[name] = seen.get(name, 0) + 1
            names[num] = f"{name} ({seen[name]})"
        else:
            names[num] = name
    return names


def _is_named(obj) -> bool:
    return obj is not None and bool(obj.name.strip())


def current_room(env):
    """The player's room: the outermost named ancestor of the player object."""
    room = env.get_player_location()
    while room is not None and room.parent:
        parent = env.get_object(room.parent)
        if not _is_named(parent):
            break
        room = parent
    return room


def item_vocabulary(env, room_numbers: set[int]) -> list[str]:
    """Names of the objects that sit in a room (at any depth), the player and the rooms excluded."""
    objects = {obj.num: obj for obj in env.get_world_objects() if obj.num > 0}
    player = env.player_obj_num

    def in_a_room(obj) -> bool:
        hops = 0
        while obj.parent and hops < len(objects):
            if obj.parent in room_numbers:
                return True
            obj = objects.get(obj.parent)
            hops += 1
            if obj is None:
                return False
        return False

    return sorted({obj.name.strip() for num, obj in objects.items()
                   if num != player and num not in room_numbers and obj.name.strip() and in_a_room(obj)})


# Inform's metaclass objects (1..4) sit at the top of the tree like rooms do.
_INFORM_METACLASSES = frozenset({"Class", "Object", "Routine", "String"})


def game_rooms(env, start_room) -> set[int]:
    """The game's rooms: objects under the start room's parent.

    ZIL games keep exactly the rooms in one container. Inform games put rooms at the top of the tree
    (parent 0) beside objects out of play ("bottled water") and library objects ("(Inform Parser)");
    there a room is a top-level object whose name is a capitalised title.
    """
    def is_room(obj) -> bool:
        name = obj.name.strip()
        if not name or obj.num in (0, env.player_obj_num) or obj.parent != start_room.parent:
            return False
        return bool(start_room.parent) or (name[0].isupper() and "(" not in name
                                           and name not in _INFORM_METACLASSES)

    return {obj.num for obj in env.get_world_objects() if is_room(obj)} | {start_room.num}


def resolve_seed(rom: Path, seed: int | None) -> int:
    """The seed FrotzEnv will use: the given one, or (for None or 0) the walkthrough's seed."""
    return int(jericho.FrotzEnv(str(rom), seed=seed)._seed)


class JerichoSession:
    """One live Jericho episode, stepped by the recorder; `state` is what the agent sees."""

    env_name = "jericho"

    def __init__(self, rom: Path, seed: int | None, agent_name: str, record_valid_actions: bool = True):
        self.rom = Path(rom)
        if not self.rom.is_file():
            raise FileNotFoundError(str(rom))
        self.env = jericho.FrotzEnv(str(self.rom), seed=seed)
        # FrotzEnv replaces a missing (or 0) seed by the walkthrough's; record the one in use.
        self.seed = int(self.env._seed)
        self.game = self.rom.stem
        self.agent_name = agent_name
        self.episode_id = episode_id(self.game, agent_name, self.seed)
        self._record_valid_actions = record_valid_actions
        observation, info = self.env.reset()
        room = current_room(self.env)
        self._rooms: dict[int, str] = {}
        self._titles: dict[int, str] = {}
        self._see_room(room)
        game_room_numbers = game_rooms(self.env, room)
        # The vocabulary is read at reset, before anything is eaten, burnt or taken out of play.
        self._vocab = {"item": item_vocabulary(self.env, game_room_numbers), "direction": direction_vocabulary(),
                       "room": sorted({clean_room_name(name) for name in
                                       (self.env.get_object(num).name for num in game_room_numbers)
                                       if not looks_abbreviated(name)})}
        self.initial = {"observation": observation, "room": room.num, "inventory": self._inventory(),
                        "score": int(info["score"]), "moves": int(info["moves"])}
        self.state = self._agent_state(0, observation, room.num, self.initial["inventory"],
                                       self.initial["score"])
        self.death_step: int | None = None

    def _see_room(self, room) -> None:
        if room.num not in self._rooms:
            saved = self.env.get_state()
            look = self.env.step("look")[0]
            self.env.set_state(saved)
            self._rooms[room.num] = room.name
            self._titles[room.num] = room_title(room.name, look)

    def _inventory(self) -> list[str]:
        return sorted(item.name.strip() for item in self.env.get_inventory())

    def _agent_state(self, step: int, observation: str, room: int, inventory: list[str], score: int) -> dict:
        return {"step": step, "observation": observation, "room": room,
                "room_name": self._titles[room], "inventory": inventory, "score": score,
                "valid_actions": valid_actions(self.env) if self._record_valid_actions else None}

    def step(self, step: int, choice: Choice) -> dict:
        before = self.state
        observation, reward, done, info = self.env.step(choice.action)
        room = current_room(self.env)
        self._see_room(room)
        inventory = self._inventory()
        moved = room.num != before["room"]
        if done and self.env.game_over() and not self.env.victory():
            self.death_step = step
        record = {
            "step": step, "action": choice.action, "reason": choice.reason,
            "obs_before": before["observation"], "obs_after": observation,
            "reward": int(reward), "score": int(info["score"]), "moves": int(info["moves"]),
            "room_before": before["room"], "room_after": room.num, "moved": moved,
            "direction": command_direction(choice.action) if moved else None,
            "inventory_before": before["inventory"], "inventory_after": inventory,
            "valid_actions": before["valid_actions"], "done": bool(done),
        }
        self.state = self._agent_state(step, observation, room.num, inventory, int(info["score"]))
        return record

    def ending(self) -> str:
        return "done"

    def header(self) -> dict:
        names = display_names(self._titles)
        rooms = [{"room": num, "name": name, "display_name": names[num]} for num, name in self._rooms.items()]
        # A room the episode reached that the reset-time scan missed is still a room of the game.
        # ... and a visited room is named by its title only, not also by its short name.
        short_names = {clean_room_name(name) for name in self._rooms.values()}
        vocab = {**self._vocab, "room": sorted(set(self._vocab["room"]) - short_names | set(self._titles.values()))}
        return {"rom": self.rom.name, "death_step": self.death_step,
                "death_cause": None if self.death_step is None else "unknown",
                "vocab": vocab, "rooms": rooms, "initial": self.initial}
