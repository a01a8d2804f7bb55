"""The games qtc records, each found here by the name `qtc play` and qtc.record take ("crafter",
"jericho", "textworld"): what options it takes, the seed of its first episode, and the live session of an episode.

A session is what the recording (runtime/record/episodes.py) drives: `episode_id`, `env_name`, `game`,
`seed`, `agent_name`, `state` (what the agent sees), `actions` (the game's action names, or None where
any command goes), `action_problem(action)`, `step(step, choice)`, `ending()`, `header()`, and optionally
`write_beside(trace_path)`; a game with a built-in `walkthrough` agent, `walkthrough` (its commands). A game
adds a class with the members of Game below and an entry in GAMES: `qtc play` reads them and never compares
a game's name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from qtc.errors import InvalidOption, UserError


@dataclass(frozen=True)
class EpisodeOptions:
    """How episodes are recorded, whatever the game; a game refuses what it has no use for."""
    agent: str
    seed: int | None = None  # None: the game's default (Crafter 0, Jericho its walkthrough's)
    rom: Path | None = None
    max_steps: int | None = None  # None: no limit (the game or the caller ends the episode)
    frames: bool = False
    valid_actions: bool = True
    ordered_objects: bool = True
    game_file: Path | None = None  # TextWorld: a game file to play
    make: str | None = None  # TextWorld: the challenge whose game is generated, at each episode's seed
    make_options: tuple[tuple[str, str], ...] = ()  # TextWorld: the generator's options, as (key, value)
    games_dir: Path | None = None  # TextWorld: where generated games are written (the output folder)


class Game(Protocol):
    # `qtc play`'s built-in agents for the game, its default first; whether its llm agent can be shown
    # screens (--vision).
    agents: tuple[str, ...]
    vision: bool

    def check(self, options: EpisodeOptions) -> None:
        """Raise InvalidOption for an option the game cannot record with."""

    def name(self, options: EpisodeOptions, seed: int) -> str:
        """The game as the ids of episodes at `seed` name it."""

    def first_seed(self, options: EpisodeOptions) -> int:
        """The seed the first episode uses."""

    def start(self, options: EpisodeOptions, seed: int):
        """The live session of an episode at `seed`."""

    def note(self, options: EpisodeOptions) -> str | None:
        """What `qtc play` says before recording, if anything (how long a step takes)."""

    def llm_prompt(self, state: dict, actions: tuple[str, ...]) -> str:
        """What the llm agent (runtime/record/agents.py) is shown of a state, given the game's actions."""


def _text_game_prompt(state: dict, actions: tuple[str, ...]) -> str:
    return (f"{state['observation']}\n\nInventory: {', '.join(state['inventory']) or 'nothing'}\n"
            f"Valid actions include: {', '.join(state.get('valid_actions') or [])}")


def _refuse_made_games(options: EpisodeOptions) -> None:
    """A game that is no TextWorld game has no game file to play nor one to make."""
    if options.game_file is not None or options.make is not None or options.make_options:
        raise UserError("--game, --make and --make-option are for TextWorld")


class Crafter:
    agents = ("scripted", "random", "llm")
    vision = True

    @staticmethod
    def llm_prompt(state: dict, actions: tuple[str, ...]) -> str:
        rows = "\n".join(" ".join((m or "-")[:5].ljust(5) for m in row) for row in state["view"]["rows"])
        creatures = ", ".join(f"{c['creature']} at ({c['x']},{c['y']})" for c in state["creatures"])
        return (f"Step {state['step']}. You are at ({state['x']},{state['y']}) facing {state['facing']} "
                f"on {state['terrain']}.\nView (rows from top):\n{rows}\nCreatures: {creatures or 'none'}\n"
                f"Inventory: {json.dumps(state['inventory'])}\nActions: {', '.join(actions)}")

    def check(self, options: EpisodeOptions) -> None:
        _refuse_made_games(options)
        if options.rom is not None:
            raise InvalidOption("rom", "is for Jericho (Crafter has no story file)")


    def name(self, options: EpisodeOptions, seed: int) -> str:
        return "crafter"

    def first_seed(self, options: EpisodeOptions) -> int:
        return 0 if options.seed is None else options.seed

    def start(self, options: EpisodeOptions, seed: int):
        from .crafter import CrafterSession

        return CrafterSession(seed, options.agent, options.max_steps, options.ordered_objects, options.frames)

    def note(self, options: EpisodeOptions) -> str | None:
        return None


class Jericho:
    agents = ("walkthrough", "random", "llm")
    vision = False
    llm_prompt = staticmethod(_text_game_prompt)

    def check(self, options: EpisodeOptions) -> None:
        _refuse_made_games(options)
        if options.frames:
            raise InvalidOption("frames", "is for Crafter (Jericho has no screen)")
        if options.rom is None:
            raise InvalidOption("rom", "is needed: the path of a Jericho story file (.z3/.z5/.z8)")
        if not Path(options.rom).is_file():
            raise InvalidOption("rom", f"{options.rom}: no such story file")

    def name(self, options: EpisodeOptions, seed: int) -> str:
        return Path(options.rom).stem

    def first_seed(self, options: EpisodeOptions) -> int:
        from .jericho import resolve_seed

        return resolve_seed(Path(options.rom), options.seed)

    def start(self, options: EpisodeOptions, seed: int):
        from .jericho import JerichoSession

        return JerichoSession(Path(options.rom), seed, options.agent, options.valid_actions)

    def note(self, options: EpisodeOptions) -> str | None:
        if not options.valid_actions:
            return None
        steps = options.max_steps
        return (f"the valid-action finder takes 1-3 s a step (up to {steps} steps an episode: {steps}-{3 * steps} s); "
                "--no-valid-actions skips it")


class TextWorld:
    """A game file (`game_file`), or a game generated per episode from its seed (`make`)."""

    agents = ("walkthrough", "random", "llm")
    vision = False
    llm_prompt = staticmethod(_text_game_prompt)

    def check(self, options: EpisodeOptions) -> None:
        from .textworld import CHALLENGES, check_game_file, make_settings

        if options.rom is not None or options.frames:
            raise InvalidOption("rom" if options.rom is not None else "frames", "is not for TextWorld")
        if (options.game_file is None) == (options.make is None):
            raise UserError("TextWorld plays a game file (--game FILE.z8|ulx, game_file) or a game it makes "
                            f"(--make {'|'.join(CHALLENGES)}, make): one of them, not both")
        if options.game_file is not None:
            check_game_file(options.game_file)
        elif options.make not in CHALLENGES:
            raise InvalidOption("make", f"{options.make!r} is not a TextWorld challenge (one of {', '.join(CHALLENGES)})")
        else:
            make_settings(options.make, dict(options.make_options))  # refused options fail before anything is made

    def name(self, options: EpisodeOptions, seed: int) -> str:
        from .textworld import game_name

        if options.game_file is not None:
            return Path(options.game_file).stem
        return game_name(options.make, seed, dict(options.make_options))

    def first_seed(self, options: EpisodeOptions) -> int:
        return 0 if options.seed is None else options.seed

    def start(self, options: EpisodeOptions, seed: int):
        from .textworld import TextWorldSession, make_game

        if options.game_file is not None:
            return TextWorldSession(Path(options.game_file), seed, options.agent)
        path, made = make_game(options.make, seed, dict(options.make_options), options.games_dir or Path("."))
        return TextWorldSession(path, seed, options.agent, made)

    def note(self, options: EpisodeOptions) -> str | None:
        return None


GAMES: dict[str, Game] = {"crafter": Crafter(), "jericho": Jericho(), "textworld": TextWorld()}

# An agent's name is part of its episodes' file names.
_AGENT_NAME = re.compile(r"[A-Za-z0-9_.+]+(-[A-Za-z0-9_.+]+)*")


def find_game(name: str, options: EpisodeOptions) -> Game:
    """The game called `name`, with `options` checked for it."""
    game = GAMES.get(name)
    if game is None:
        raise UserError(f"unknown game {name!r} (one of {', '.join(sorted(GAMES))})")
    if not _AGENT_NAME.fullmatch(options.agent):
        raise InvalidOption("agent", f"name {options.agent!r} is not a file-name word (letters, digits, "
                                     "'_', '.', '+', '-' between them)")
    if options.max_steps is not None and options.max_steps < 1:
        raise InvalidOption("max_steps", f"must be at least 1, got {options.max_steps}")
    game.check(options)
    return game
