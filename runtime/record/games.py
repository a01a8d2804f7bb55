"""The games qtc records, each found here by the name `qtc play` and qtc.record take ("crafter",
"jericho"): what options it takes, the seed of its first episode, and the live session of an episode.

A session is what the recording (runtime/record/episodes.py) drives: `episode_id`, `env_name`, `game`,
`seed`, `agent_name`, `state` (what the agent sees), `actions` (the game's action names, or None where
any command goes), `action_problem(action)`, `step(step, choice)`, `ending()`, `header()`, and optionally
`write_beside(trace_path)`. A game adds a class with the methods of Game below and an entry in GAMES.
"""

from __future__ import annotations

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


class Game(Protocol):
    def check(self, options: EpisodeOptions) -> None:
        """Raise InvalidOption for an option the game cannot record with."""

    def name(self, options: EpisodeOptions) -> str:
        """The game as episode ids name it."""

    def first_seed(self, options: EpisodeOptions) -> int:
        """The seed the first episode uses."""

    def start(self, options: EpisodeOptions, seed: int):
        """The live session of an episode at `seed`."""


class Crafter:
    def check(self, options: EpisodeOptions) -> None:
        if options.rom is not None:
            raise InvalidOption("rom", "is for Jericho (Crafter has no story file)")

    def name(self, options: EpisodeOptions) -> str:
        return "crafter"

    def first_seed(self, options: EpisodeOptions) -> int:
        return 0 if options.seed is None else options.seed

    def start(self, options: EpisodeOptions, seed: int):
        from .crafter import CrafterSession

        return CrafterSession(seed, options.agent, options.max_steps, options.ordered_objects, options.frames)


class Jericho:
    def check(self, options: EpisodeOptions) -> None:
        if options.frames:
            raise InvalidOption("frames", "is for Crafter (Jericho has no screen)")
        if options.rom is None:
            raise InvalidOption("rom", "is needed: the path of a Jericho story file (.z3/.z5/.z8)")
        if not Path(options.rom).is_file():
            raise InvalidOption("rom", f"{options.rom}: no such story file")

    def name(self, options: EpisodeOptions) -> str:
        return Path(options.rom).stem

    def first_seed(self, options: EpisodeOptions) -> int:
        from .jericho import resolve_seed

        return resolve_seed(Path(options.rom), options.seed)

    def start(self, options: EpisodeOptions, seed: int):
        from .jericho import JerichoSession

        return JerichoSession(Path(options.rom), seed, options.agent, options.valid_actions)


GAMES: dict[str, Game] = {"crafter": Crafter(), "jericho": Jericho()}

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
