"""Recording Jericho episodes: rooms by object number, moves from room changes, what the player carries,
offline valid actions.

Rooms. The room is the outermost named ancestor of the player in the object tree (read from the game's
memory, runtime/record/jericho_objects.py): the player's parent may be a bed or a boat, and ZIL games
(zork1) keep every room under one nameless container object. A room is keyed by its object number
("Forest" is three rooms in zork1). The object's short name is often an abbreviation of the title the
game prints ("Living " for "Living Room", "AragaFalls" for "Aragain Falls", "" for zork1's Cyclops
Room), so the display name is the title that `look` prints (looked at in a saved copy of the state,
which is then restored) when that title matches the short name (same first letter, the name's letters
in order within the title's; a vehicle suffix such as ", in the magic boat" dropped). A room whose
look printed no such title (dark, or too loud to see) is looked at again on each later step in it;
until then it is named as the game lists the room object (jericho_objects.listed_lines: "Loud Room"
for `Loud `), else by the short name with whitespace collapsed. A look title that is the listed name
counts as matching ("Maze" for advent's `(Alike_Maze_1)`).
Display names that several rooms seen in the episode share are numbered in the order the rooms were
first seen: "Forest (1)", "Forest (2)".
A name drops the markup some games print around titles (detective's "<< Mayor's house >>"). The
rooms the episode never entered are named only if the game's walkthrough enters them: places, not
a hint menu or a limbo kept among the rooms. A location first entered at the step that ends the game is
the game's closing screen, no place (`closing_screen`: detective's "<< Info >>", its credits, entered by
`up` from the last room): the player stays, for the trace, in the room it was in.

Carried items (CONVENTIONS.md, Items). The player carries every object inside the player object that
the game's inventory listing shows there (in an open pouch in an open toolkit: ItemNames); each is
named as the listing prints it, without article or state remark ("tan label", not `tlabel`). One object keeps one
name: the one the listing gave it in the game's walkthrough (replayed at reset in a second env), so
the item vocabulary names it alike, else the first one it was listed by in the episode.

The object tree (CONVENTIONS.md, Sightings). The header keeps every object's parent before step 1 and,
for each step, the objects whose parent it changed, so the store rebuilds the tree at any step. Names
are asked of the game only for the objects the player could see: those inside its room after a step
(each object once per episode, ItemNames), besides those it carries.

Changes (CONVENTIONS.md, Rejected commands). A step changed the world by Jericho's own test of a valid
action: the interpreter saw the game move an object or set or clear an attribute (but for the objects
and attributes Jericho's binding of the game ignores: zork1's thief), or change one of the bytes the
binding watches (zork1's prayer, the dug sand), or the score changed, or the game ended. Read right after
the agent's command, before the recorder looks at the room (its `look` resets the interpreter's record).
The header lists the steps that changed nothing (`unchanged_steps`).

Moves. `moved` is whether the action changed the room; `direction` is the direction the command names
("n", "north", "go north", "climb up", "enter" -> "in", ...) and is recorded only for an action that
moved the player (a blocked "north" is not a move; "climb tree" is a move without a direction).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import jericho

from qtc.dsl.conventions import words

from .agents import Choice
from .jericho_actions import valid_actions
from .jericho_objects import clean_listed_name, listed_inside, listed_lines, tree
from qtc.dsl.conventions import command_direction, direction_vocabulary
from qtc.dsl.room_names import display_names
from qtc.dsl.sightings import room_objects
from qtc.runtime.trace.format import episode_id

# What some games print around a room's title, no part of its name: detective's "<< Mayor's house >>".
_TITLE_MARKUP = re.compile(r"^[\s<>*=~_|\[\]{}-]+|[\s<>*=~_|\[\]{}-]+$")


def clean_room_name(name: str) -> str:
    """A room's name as a reader writes it: whitespace collapsed, the game's markup around it dropped.

    >>> clean_room_name("<< Mayor's  house >>"), clean_room_name("Room # 30")
    ("Mayor's house", 'Room # 30')
    """
    return _TITLE_MARKUP.sub("", " ".join(name.split()))


# Where the player sits, after the title: ", in the magic boat" (zork1), " (on the Black Dragon)" (jewel).
_VEHICLE_SUFFIX = re.compile(r",\s+(in|on)\s+the\s+.*$|\s+\((in|on)\s+the\s+[^()]*\)$")


def _in_order(short: str, title: str) -> bool:
    """Whether the letters and digits of a short name are in order within a title."""
    letters = iter(title.lower())
    return all(c in letters for c in short.lower() if c.isalnum())


def title_line(look: str) -> str | None:
    """The first line `look` printed if it can be a room title (short, capitalised, no sentence)."""
    lines = [line.strip() for line in look.strip().splitlines() if line.strip()]
    title = clean_room_name(_VEHICLE_SUFFIX.sub("", lines[0])) if lines else ""
    if not title or len(title) > 50 or re.search(r"[.!?]", title) or not title[0].isupper():
        return None
    return title


def looked_title(name: str, look: str, listed: str | None = None) -> str | None:
    """The room title printed by `look` if it matches the object's short name (same first letter too),
    or is the name the game lists the room object by (`listed`: "Maze" for advent's `(Alike_Maze_1)`)."""
    short, title = clean_room_name(name), title_line(look)
    if title and (not short or (short[0].lower() == title[0].lower() and _in_order(short, title))
                  or title == listed):
        return title
    return None


def room_title(name: str, look: str) -> str:
    """The room title printed by `look` if it matches the object's short name, else the short name."""
    return looked_title(name, look) or clean_room_name(name)


def listed_title(line: str | None) -> str | None:
    """A room's name as the game lists the room object ("A Loud Room" -> "Loud Room"), if it reads as one."""
    title = clean_room_name(clean_listed_name(line, keep_the=True)) if line else ""
    return title if title and len(title) <= 50 and not re.search(r"[.!?:]", title) else None


def looks_abbreviated(name: str) -> bool:
    """Whether a short name is likely a clipped form of the printed title ("Living ", "CanyView").

    Unvisited rooms cannot be looked at, so the vocabulary holds their short names; clipped ones are
    left out, lest a false premise name a room the episode visited under its full title.
    """
    return not name.strip() or name != name.strip() or bool(re.search(r"[a-z][A-Z]|^[A-Z]{2}[a-z]", name))


def _is_named(obj) -> bool:
    return obj is not None and bool(obj.name.strip())


@dataclass(frozen=True)
class Room:
    """The object the player is in: its number, short name ("" when jericho cannot read it) and parent."""
    num: int
    name: str
    parent: int


def current_room(env) -> Room:
    """The player's room: the outermost named ancestor of the player object.

    Objects jericho cannot read (advent's 269) are read from the tree; such a room has no short name.
    """
    objects = tree(env)
    num, seen = objects.parent(env.player_obj_num), set()
    while num and num not in seen and _is_named(env.get_object(objects.parent(num))):
        seen.add(num)
        num = objects.parent(num)
    obj = env.get_object(num) if num else None
    return Room(num, obj.name if obj is not None else "", objects.parent(num) if num else 0)


class ItemNames:
    """Objects named as the game lists them, each asked once per episode (None: not a thing);
    `known` names objects in advance (those of the walkthrough, so the vocabulary names them alike).
    It follows one episode step by step: what it carried at its last look decides what stays carried."""

    def __init__(self, env, known: dict[int, str | None] | None = None):
        self.env = env
        self._names: dict[int, str | None] = dict(known or {})
        self._carried_in: dict[int, int] = {}  # each thing carried at the last look -> what held it
        self._listed_inside: dict[tuple[int, int, bytes], bool] = {}

    @property
    def known(self) -> dict[int, str | None]:
        return dict(self._names)

    def names(self, nums: list[int]) -> list[str | None]:
        unknown = [num for num in nums if num not in self._names]
        if unknown:
            self._names.update({num: clean_listed_name(line) or None if line else None
                                for num, line in listed_lines(self.env, unknown).items()})
        return [self._names[num] for num in nums]

    def carried_objects(self) -> dict[int, str]:
        """The things the player carries (CONVENTIONS.md, Items), by object number, with their names:
        every named thing it holds, and every named thing inside a carried thing that the game lists
        there (`_shown_inside`) or that was carried in that same thing at the last look (closing the case
        it lies in does not drop it)."""
        objects = tree(self.env)
        player = self.env.player_obj_num
        carried: dict[int, str] = {}
        holders, carried_in = [player], {}
        while holders:
            pairs = [(holder, num) for holder in holders for num in objects.children(holder)
                     if num not in carried and num != player]
            named = [(pair, name) for pair, name in zip(pairs, self.names([num for _, num in pairs])) if name]
            inside = [(holder, num) for (holder, num), _ in named
                      if holder != player and self._carried_in.get(num) != holder]
            shown = self._shown_inside(objects, inside)
            holders = []
            for (holder, num), name in named:
                if holder == player or self._carried_in.get(num) == holder or shown[(holder, num)]:
                    carried[num], carried_in[num] = name, holder
                    holders.append(num)
        self._carried_in = carried_in
        return carried

    def _shown_inside(self, objects, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], bool]:
        """For each (holder, thing), whether the game's inventory, with the player holding only the holder
        (open or closed as it is) with only the thing inside, lists the thing on a line of its own: a thing
        in an open case is listed, a spell on a scroll or a thing in a closed case is not. Asked once
        per holder's attributes (open, closed...)."""
        keys = {pair: (*pair, objects.attributes(pair[0])) for pair in pairs}
        unknown = [pair for pair in pairs if keys[pair] not in self._listed_inside]
        for (holder, num), lines in listed_inside(self.env, unknown).items():
            self._listed_inside[keys[(holder, num)]] = any(clean_listed_name(line) == self._names[num]
                                                           for line in lines)
        return {pair: self._listed_inside[keys[pair]] for pair in pairs}

    def carried(self) -> list[str]:
        """The names of the things the player carries, sorted (a name once per object)."""
        return sorted(self.carried_objects().values())


def closing_screen(room: int, entered: Iterable[int], game_over: bool) -> bool:
    """Whether the location the player is in after a step is the game's closing screen, not a place: one
    first entered (not in `entered`) at the step that ended the game (detective's "<< Info >>")."""
    return game_over and room not in entered


@dataclass(frozen=True)
class Walkthrough:
    """What the game's own walkthrough meets: the things it carries at some step (object number -> listed
    name), for the item vocabulary; every name it listed; the rooms it enters (the start included): the
    places of the game, for the rooms a question may name unvisited (not a hint menu nor a limbo)."""
    items: dict[int, str]
    names: dict[int, str | None]
    rooms: frozenset[int]


def walkthrough(rom: Path) -> Walkthrough:
    """The game's walkthrough replayed from reset, up to its end or the game's."""
    env = jericho.FrotzEnv(str(rom))
    env.reset()
    names = ItemNames(env)
    items, rooms = names.carried_objects(), {current_room(env).num}
    for action in env.get_walkthrough():
        done = env.step(action)[2]
        items.update({num: name for num, name in names.carried_objects().items() if num not in items})
        room = current_room(env).num
        if not closing_screen(room, rooms, done):
            rooms.add(room)
        if env.game_over():
            break
    return Walkthrough(items, names.known, frozenset(rooms))


def _words(name: str) -> set[str]:
    return set(words(name))


def nameable_unvisited(unvisited: dict[int, str], titles: Iterable[str]) -> dict[int, str]:
    """The unvisited rooms (number -> name) a question can name: those whose words no other room of the
    game holds all of ("Forest" beside a visited "Forest Path", or a second "Forest"), since a question
    about the Forest never entered could mean the room that was."""
    others = [*titles, *unvisited.values()]
    return {num: name for num, name in unvisited.items()
            if sum(_words(name) <= _words(other) for other in others) == 1}


def unambiguous_names(names: set[str]) -> list[str]:
    """The names, sorted, without those whose words all belong to another one ("key" beside "iron key"):
    a question about the key never held could mean the iron key that was."""
    held = {name: _words(name) for name in names}
    return sorted(name for name in names if not any(held[name] <= held[other] for other in names if other != name))


def item_vocabulary(env, room_numbers: set[int], names: ItemNames) -> list[str]:
    """Listed names of the objects that sit in a room (at any depth), the player and the rooms excluded."""
    objects = tree(env)
    inside = {num for room in room_numbers for num in objects.descendants(room)}
    return sorted(set(filter(None, names.names(sorted(inside - room_numbers - {env.player_obj_num})))))


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


def changed_world(env, reward: float, done: bool) -> bool:
    """Whether the step just taken changed the world, by the test Jericho's valid-action finder applies
    (FrotzEnv.find_valid_actions): the score changed, the game ended, or the interpreter saw the world
    change (FrotzEnv._world_changed). Only right after env.step: any later step resets the interpreter's record."""
    return reward != 0 or done or env._world_changed()


def resolve_seed(rom: Path, seed: int | None) -> int:
    """The seed FrotzEnv will use: the given one, or (for None or 0) the walkthrough's seed."""
    return int(jericho.FrotzEnv(str(rom), seed=seed)._seed)


class JerichoSession:
    """One live Jericho episode, stepped by the recorder; `state` is what the agent sees."""

    env_name = "jericho"
    actions = None  # any command: the valid ones of a state are in its `valid_actions`

    @property
    def walkthrough(self) -> list[str]:
        """The game's own winning commands (the walkthrough agent's)."""
        return self.env.get_walkthrough()

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
        played = walkthrough(self.rom)
        self._names = ItemNames(self.env, played.names)
        room = current_room(self.env)
        self._room = room  # where the player is (a closing screen is no place: the room before it)
        self._rooms: dict[int, str] = {}
        self._titles: dict[int, str] = {}
        self._untitled: set[int] = set()  # rooms whose look has printed no matching title yet
        game_room_numbers = game_rooms(self.env, room)
        # The vocabulary is read at reset, before anything is eaten, burnt or taken out of play.
        # Rooms are listed at reset: the room the player is in cannot be (it would hold the player).
        # Every object beside the start room is, since game_rooms leaves out some (advent's `(Alike_Maze_1)`).
        self._listed_rooms = listed_lines(self.env, sorted(
            {obj.num for obj in self.env.get_world_objects() if obj.parent == room.parent} | game_room_numbers))
        # Rooms a question may name unvisited: the places the walkthrough enters, all rooms without one.
        places = game_room_numbers & played.rooms if len(played.rooms) > 1 else game_room_numbers
        self._room_vocabulary = {num: self._room_vocabulary_name(num, self._listed_rooms[num]) for num in places}
        self._see_room(room)
        # The items of the game: those its walkthrough holds (plausible things never met, never the dam or
        # the thief), else, for a game without one, the things in its rooms at reset.
        items = set(played.items.values()) or set(item_vocabulary(self.env, game_room_numbers, self._names))
        self._vocab = {"item": unambiguous_names(items), "direction": direction_vocabulary()}
        self.initial = {"observation": observation, "room": room.num, "inventory": self._names.carried(),
                        "score": int(info["score"]), "moves": int(info["moves"])}
        self.state = self._agent_state(0, observation, room.num, self.initial["inventory"],
                                       self.initial["score"])
        self.death_step: int | None = None
        self._initial_parents = tree(self.env).parents()
        self._parents = dict(self._initial_parents)
        self._object_moves: list[dict] = []
        self._unchanged_steps: list[int] = []
        self._name_room_objects(room.num)

    def _name_room_objects(self, room: int) -> None:
        """Ask the game the names of the objects the player could see in its room (each once)."""
        self._names.names(room_objects(self._parents, room, self.env.player_obj_num))

    def _record_tree(self, step: int, room: int) -> None:
        """The objects whose parent the step changed, in number order, and the names of those in the room."""
        parents = tree(self.env).parents()
        self._object_moves += [{"step": step, "object": num, "parent": parent}
                               for num, parent in parents.items() if self._parents.get(num) != parent]
        self._parents = parents
        self._name_room_objects(room)

    def _room_vocabulary_name(self, num: int, line: str | None) -> str | None:
        """An unvisited room as the game lists it, else its short name unless that looks clipped."""
        name = self.env.get_object(num).name
        return listed_title(line) or (None if looks_abbreviated(name) else clean_room_name(name))

    def _see_room(self, room: Room) -> None:
        if room.num in self._rooms and room.num not in self._untitled:
            return
        saved = self.env.get_state()
        look = self.env.step("look")[0]
        self.env.set_state(saved)
        listed = listed_title(self._listed_rooms.get(room.num))
        title = looked_title(room.name, look, listed)
        if title:
            self._titles[room.num] = title
            self._untitled.discard(room.num)
        elif room.num not in self._rooms:
            self._titles[room.num] = listed or clean_room_name(room.name)
            self._untitled.add(room.num)
        self._rooms.setdefault(room.num, room.name)

    def _agent_state(self, step: int, observation: str, room: int, inventory: list[str], score: int) -> dict:
        return {"step": step, "observation": observation, "room": room,
                "room_name": self._titles[room], "inventory": inventory, "score": score,
                "valid_actions": valid_actions(self.env) if self._record_valid_actions else None}

    @staticmethod
    def action_problem(action) -> str | None:
        """Why `action` is not a command the game can be given, or None: any text is a command, if it is one
        line (a line break would give the interpreter a second command) that its input buffer holds whole."""
        if not isinstance(action, str) or not action.strip():
            return f"{action!r} is not a command (a Jericho command is a line of text)"
        if not action.isprintable():
            return f"{action!r} is not a command (it holds a line break or a control character)"
        if len(action.encode("utf-8")) > jericho.jericho.INPUT_BUFFER_SIZE:
            return (f"{action[:40]!r}... is not a command (longer than the {jericho.jericho.INPUT_BUFFER_SIZE} "
                    "bytes the interpreter reads)")
        return None

    def step(self, step: int, choice: Choice) -> dict:
        before = self.state
        observation, reward, done, info = self.env.step(choice.action)
        if not changed_world(self.env, reward, done):
            self._unchanged_steps.append(step)
        room = current_room(self.env)
        if closing_screen(room.num, self._rooms, done):
            room = self._room
        self._room = room
        self._see_room(room)
        self._record_tree(step, room.num)
        inventory = self._names.carried()
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
        unvisited = nameable_unvisited({num: name for num, name in self._room_vocabulary.items()
                                        if name and num not in self._rooms}, self._titles.values())
        unvisited_rooms = [{"room": num, "name": self.env.get_object(num).name, "display_name": name}
                           for num, name in sorted(unvisited.items())]
        names = self._names.known
        objects = {"player": self.env.player_obj_num,
                   "tree": [{"object": num, "parent": parent, "name": names.get(num)}
                            for num, parent in self._initial_parents.items()],
                   "moves": self._object_moves}
        return {"rom": self.rom.name, "death_step": self.death_step,
                "death_cause": None if self.death_step is None else "unknown",
                "vocab": self._vocab, "rooms": rooms, "unvisited_rooms": unvisited_rooms, "initial": self.initial,
                "objects": objects, "unchanged_steps": self._unchanged_steps}
