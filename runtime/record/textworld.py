"""Recording TextWorld episodes: games made by TextWorld's generator (or given as files), played with the
world's facts read at every step.

Games. `make_game` generates a game of one of TextWorld's challenges (cooking, treasure_hunter,
coin_collector, simple) from a seed and the challenge's own options, checked by the challenge's own
argument parser, and compiles it with the Inform 7 compiler TextWorld bundles into `<game>.z8` beside
`<game>.json` (the game's world, which TextWorld needs to report facts). Both are written under a
temporary name and moved into place, the world last, so a failed generation leaves nothing behind; a
game already there is played again, not made again. The trace header keeps how it was made
(`make`: the challenge, the seed, the settings, TextWorld's version), so it can be made again.

Facts (CONVENTIONS.md, TextWorld). TextWorld reports the true state of the world as propositions:
`at(fridge, kitchen)`, `in(red potato, I)` (carried), `open(fridge)`, `link(kitchen, door, pantry)`.
The trace keeps each as a list [predicate, argument names...], every fact before step 1 in the header
and each step's changes (`facts_added`, `facts_removed`). An entity is named as the game names it
(`kitchen`, `red potato`); one without a name by its identifier (`P` the player, `I` the inventory,
`RECIPE`, `ingredient_0`), and a name two entities share by the name and the identifier.

Rooms are numbered in the order of the game's entities; the player's room is the one of the fact
at(P, room). The items carried are the things in(x, I). A move is a step that changed the room; its
direction is the one the command names ("go north").
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Callable

from qtc.dsl.conventions import command_direction, direction_vocabulary
from qtc.errors import UserError
from qtc.runtime.trace.format import episode_id

from .choice import Choice

# The challenges `--make` names, by TextWorld's registry name, with qtc's default settings: cooking
# games that take the player through six rooms, opening, cooking and cutting three ingredients (the
# challenge's own defaults make a one-room game with the one ingredient in hand); level 1 elsewhere.
CHALLENGES = {
    "cooking": ("tw-cooking", {"recipe": "3", "take": "3", "go": "6", "open": "true", "cook": "true",
                               "cut": "true"}),
    "treasure_hunter": ("tw-treasure_hunter", {"level": "1"}),
    "coin_collector": ("tw-coin_collector", {"level": "1"}),
    "simple": ("tw-simple", {"rewards": "dense", "goal": "detailed"}),
}
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")
# What a game file is played with: every fact, TextWorld's own winning commands, the admissible commands.
_INFOS = dict(facts=True, policy_commands=True, admissible_commands=True, score=True, max_score=True,
              moves=True, won=True, lost=True, game=True, objective=True)
PLAYER, INVENTORY = "P", "I"
# TextWorld's kinds of things a player can carry (its type hierarchy's portable objects).
_PORTABLE = "o"


_TYPE_WORDS = {int: "a whole number", float: "a number"}


@dataclass(frozen=True)
class _Option:
    """One option a challenge declares: its default, its type, its choices, whether it is a switch."""
    default: object
    type: Callable[[str], object] | None
    choices: tuple | None
    switch: bool
    required: bool


class _Declared:
    """What a challenge's `add_arguments(parser)` declares, read without a parser: each option by its
    name (`recipe`, `recipe_seed`)."""

    def __init__(self):
        self.options: dict[str, _Option] = {}

    def add_argument_group(self, *args, **kwargs) -> _Declared:
        return self

    def add_argument(self, *flags, type=None, default=None, choices=None, action=None, required=False, **rest):
        name = flags[0].lstrip("-").replace("-", "_")
        switch = action == "store_true"
        self.options[name] = _Option(False if switch else default, type, tuple(choices) if choices else None,
                                     switch, required)


def make_settings(kind: str, options: dict[str, str]) -> dict:
    """The challenge's settings: its own defaults, qtc's over them, then `options`, each read as the
    challenge declares it (a whole number, a switch, one of its choices)."""
    import textworld.challenges

    challenge, defaults = CHALLENGES[kind]
    declared = _Declared()
    textworld.challenges.CHALLENGES[challenge][2](declared)
    settings = {name: option.default for name, option in declared.options.items()}
    for key, value in {**defaults, **options}.items():
        name = key.replace("-", "_")
        option = declared.options.get(name)
        where = f"--make-option {key}={value}"
        if option is None:
            raise UserError(f"{where}: {kind} has no option {key!r} (its options: {', '.join(sorted(declared.options))})")
        if option.switch:
            if value.lower() not in _TRUE + _FALSE:
                raise UserError(f"{where}: {key} is on or off (true or false)")
            settings[name] = value.lower() in _TRUE
            continue
        try:
            settings[name] = option.type(value) if option.type else value
        except ValueError:
            raise UserError(f"{where}: {key} takes {_TYPE_WORDS.get(option.type, 'another value')}") from None
        if option.choices and settings[name] not in option.choices:
            raise UserError(f"{where}: {key} is one of {', '.join(map(str, option.choices))}")
    missing = [name for name, option in declared.options.items() if option.required and settings[name] is None]
    if missing:
        raise UserError(f"--make {kind}: {', '.join(missing)} must be given (--make-option {missing[0]}=...)")
    return settings


def game_name(kind: str, seed: int, options: dict[str, str]) -> str:
    """The name of the game `make_game` makes: the challenge and the seed, and a digest of the settings
    that differ from qtc's defaults ("cooking_s1", "cooking_s1_3fa9c2d1"): `open=false` and `open=no`
    name one game."""
    settings, defaults = make_settings(kind, options), make_settings(kind, {})
    changed = {key: value for key, value in sorted(settings.items()) if defaults[key] != value}
    digest = hashlib.sha256(json.dumps(changed).encode()).hexdigest()[:8]
    return f"{kind}_s{seed}" + (f"_{digest}" if changed else "")


def parse_make_options(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--make-option k=v` pairs as a dict; a UserError for one without '='."""
    options = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise UserError(f"--make-option {pair}: expected KEY=VALUE (recipe=2, open=false)")
        options[key.strip()] = value.strip()
    return options


def _inform7_compiler() -> Path:
    """The Inform 7 compiler TextWorld compiles with (its bundled one, or $INFORM_HOME's)."""
    from textworld.generator.inform7 import world2inform7

    home = os.environ.get("INFORM_HOME", world2inform7.I7_DEFAULT_PATH)
    return Path(home, "share", "inform7", "Compilers", "ni")


def make_game(kind: str, seed: int, options: dict[str, str], directory: Path) -> tuple[Path, dict]:
    """The game file of challenge `kind` at `seed` in `directory` (made unless there), and how it is made."""
    import textworld
    import textworld.challenges
    from textworld.generator.inform7.world2inform7 import CouldNotCompileGameError

    if kind not in CHALLENGES:
        raise UserError(f"--make {kind}: unknown challenge (one of {', '.join(CHALLENGES)})")
    settings = make_settings(kind, options)
    challenge = CHALLENGES[kind][0]
    made = {"challenge": challenge, "seed": seed, "settings": settings, "textworld": version("textworld")}
    path = Path(directory) / f"{game_name(kind, seed, options)}.z8"
    if path.is_file() and path.with_suffix(".json").is_file():
        return path, made
    compiler = _inform7_compiler()
    if not compiler.is_file():
        raise UserError(f"--make {kind}: the Inform 7 compiler TextWorld needs is missing ({compiler}); "
                        "reinstall textworld or set INFORM_HOME")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".making-") as scratch:
        game_options = textworld.GameOptions()
        game_options.seeds = seed
        game_options.path = str(Path(scratch) / path.name)
        game_options.file_ext = ".z8"
        game_options.force_recompile = True
        try:
            game = textworld.challenges.CHALLENGES[challenge][1](settings=dict(settings), options=game_options)
            made_file = Path(textworld.generator.compile_game(game, game_options))
        except CouldNotCompileGameError as error:
            raise UserError(f"--make {kind}: Inform 7 could not compile the game "
                            f"({str(error).strip().splitlines()[0]})") from None
        except (ValueError, AssertionError, KeyError, textworld.generator.QuestGenerationError) as error:
            raise UserError(f"--make {kind}: the generator refused the settings {settings} "
                            f"({type(error).__name__}: {error})") from None
        os.replace(made_file, path)
        os.replace(made_file.with_suffix(".json"), path.with_suffix(".json"))  # last: it marks the game made
    return path, made


def check_game_file(path: Path) -> None:
    """A UserError unless `path` is a TextWorld game: a .z8 or .ulx file with TextWorld's world beside it."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"--game {path}: no such game file")
    if path.suffix not in (".z8", ".ulx"):
        raise UserError(f"--game {path}: not a TextWorld game (expected a .z8 or .ulx file)")
    world = path.with_suffix(".json")
    if not world.is_file():
        raise UserError(f"--game {path}: not a TextWorld game (no {world.name} beside it: TextWorld writes "
                        "the game's world there, and its facts come from it)")
    try:
        text = json.loads(world.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"--game {path}: {world.name} is not a TextWorld world ({error})") from None
    if not isinstance(text, dict) or "world" not in text or "infos" not in text:
        raise UserError(f"--game {path}: {world.name} is not a TextWorld world (no 'world' and 'infos')")


def entity_names(game) -> dict[str, str]:
    """Each entity's name by its identifier: its name, or the identifier for one without a name; a name
    that several entities share is followed by the identifier ("key (k_1)")."""
    named = {key: info.name or key for key, info in game.infos.items()}
    counts: dict[str, int] = {}
    for name in named.values():
        counts[name] = counts.get(name, 0) + 1
    return {key: name if counts[name] == 1 else f"{name} ({key})" for key, name in named.items()}


def fact_list(facts, names: dict[str, str]) -> list[list[str]]:
    """TextWorld's propositions as [predicate, argument names...], sorted."""
    return sorted([fact.name, *(names.get(arg.name, arg.name) for arg in fact.arguments)] for fact in facts)


class TextWorldSession:
    """One live TextWorld episode, stepped by the recorder; `state` is what the agent sees."""

    env_name = "textworld"
    actions = None  # any command: the admissible ones of a state are in its `valid_actions`

    def __init__(self, game_file: Path, seed: int, agent_name: str, made: dict | None = None):
        import textworld

        check_game_file(game_file)
        self.game_file = Path(game_file)
        self.made = made
        self.seed = seed
        self.game = self.game_file.stem
        self.agent_name = agent_name
        self.episode_id = episode_id(self.game, agent_name, seed)
        self.env = textworld.start(str(self.game_file), request_infos=textworld.EnvInfos(**_INFOS))
        self.env.seed(seed)
        state = self.env.reset()
        world = state["game"]
        self._names = entity_names(world)
        kinds = world.kb.types
        self._rooms = [key for key, info in world.infos.items() if info.type == "r"]
        self._room_numbers = {self._names[key]: number for number, key in enumerate(self._rooms)}
        self._portable = sorted(self._names[key] for key, info in world.infos.items()
                                if info.type in kinds and kinds.is_descendant_of(info.type, _PORTABLE))
        # The game's own walkthrough where its maker kept one (cooking games: it reads the cookbook), else
        # TextWorld's winning policy at reset.
        self.walkthrough = list(world.metadata.get("walkthrough") or state["policy_commands"] or [])
        self.death_step: int | None = None
        self._facts = fact_list(state["facts"], self._names)
        room = self._room(self._facts)
        self.initial = {"observation": state["feedback"], "room": room, "inventory": self._carried(self._facts),
                        "score": int(state["score"]), "moves": int(state["moves"]), "facts": self._facts}
        self._opening = {"objective": state["objective"], "max_score": int(state["max_score"]),
                         "walkthrough": self.walkthrough}
        self.state = self._agent_state(0, state, room, self.initial["inventory"])

    def _room(self, facts: list[list[str]]) -> int:
        return next(self._room_numbers[fact[2]] for fact in facts if fact[:2] == ["at", PLAYER])

    @staticmethod
    def _carried(facts: list[list[str]]) -> list[str]:
        return sorted(fact[1] for fact in facts if fact[0] == "in" and fact[2] == INVENTORY)

    def _agent_state(self, step: int, state, room: int, inventory: list[str]) -> dict:
        return {"step": step, "observation": state["feedback"], "room": room,
                "room_name": self._names[self._rooms[room]], "inventory": inventory, "score": int(state["score"]),
                "valid_actions": sorted(state["admissible_commands"] or [])}

    @staticmethod
    def action_problem(action) -> str | None:
        """Why `action` is not a command the game can be given, or None: any one line of text is."""
        if not isinstance(action, str) or not action.strip():
            return f"{action!r} is not a command (a TextWorld command is a line of text)"
        if not action.isprintable():
            return f"{action!r} is not a command (it holds a line break or a control character)"
        return None

    def step(self, step: int, choice: Choice) -> dict:
        before = self.state
        state, score, done = self.env.step(choice.action)  # TextWorld gives the score, not its change
        facts = fact_list(state["facts"], self._names)
        room = self._room(facts)
        inventory = self._carried(facts)
        moved = room != before["room"]
        if done and state["lost"]:
            self.death_step = step
        old = {tuple(fact) for fact in self._facts}
        new = {tuple(fact) for fact in facts}
        record = {
            "step": step, "action": choice.action, "reason": choice.reason,
            "obs_before": before["observation"], "obs_after": state["feedback"],
            "reward": int(score) - before["score"], "score": int(score), "moves": int(state["moves"]),
            "room_before": before["room"], "room_after": room, "moved": moved,
            "direction": command_direction(choice.action) if moved else None,
            "inventory_before": before["inventory"], "inventory_after": inventory,
            "valid_actions": before["valid_actions"], "done": bool(done),
            "facts_added": [list(fact) for fact in sorted(new - old)],
            "facts_removed": [list(fact) for fact in sorted(old - new)],
        }
        self._facts = facts
        self.state = self._agent_state(step, state, room, inventory)
        return record

    def ending(self) -> str:
        return "death" if self.death_step is not None else "done"

    def header(self) -> dict:
        rooms = [{"room": number, "name": self._names[key], "display_name": self._names[key]}
                 for number, key in enumerate(self._rooms)]
        return {"game_file": self.game_file.name, "make": self.made, "death_step": self.death_step,
                "death_cause": None if self.death_step is None else "lost",
                "vocab": {"item": self._portable, "direction": direction_vocabulary()},
                "rooms": rooms, "initial": self.initial, **self._opening}

