"""What an environment's EMemBench log format is (emembench.py lists them): `EmembenchFormat`, the record an
environment EMemBench ran writes in its own module (emembench_jericho.py, emembench_crafter.py), and what
its members share: a log read (`EmembenchLog`), a log planned for import (`Planned`), and the comparisons
that hold a replayed game to its log (`same`, `not_ended`, `Divergence`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from qtc.errors import UserError

SHOWN = 80  # characters of a differing value shown in a message


@dataclass
class EmembenchLog:
    """One run's log: its step rows (the closing row left out) with their line numbers; `seed` is the
    logged seed (Crafter) or the `seed<N>` folder's holding the file (Jericho), else None."""
    path: Path
    env: str
    run: str
    rows: list[dict]
    lines: list[int]
    seed: int | None

    def where(self, index: int) -> str:
        """The file and line of row `index`, for messages."""
        return f"{self.path}:{self.lines[index]}"


@dataclass
class Planned:
    """A log to import: where its episode goes, and the game to replay it in."""
    log: EmembenchLog
    episode_id: str
    seed: int
    rom: Path | None = None  # Jericho's story file
    frames: Path | None = None  # Crafter: the run's frames folder, if it kept its frames


class EmembenchFormat(Protocol):
    """An environment's EMemBench log: how its runner lays out and names a run's log, the fields a row
    needs, how a trace is written as one, and how a log is checked and replayed for `qtc import`."""
    env: str
    layout: str  # where a run's log lies, for the message of a folder holding none
    required: tuple[str, ...]  # the dotted fields every step row must have for the import
    replays_again: bool  # whether a replay the log leaves is tried again (`replay_again`)

    def is_log(self, path: Path) -> bool:
        """Whether `path` is the name of one of this format's logs."""

    def run_name(self, path: Path) -> str:
        """The run a log belongs to, by its path."""

    def check(self, log: EmembenchLog) -> None:
        """Hold a read log to what the runner writes (a UserError names the file, line and field) and set
        its seed."""

    def write(self, trace_path: Path, header: dict, steps: list[dict], out_dir: Path) -> tuple[Path, list[dict]]:
        """Where an episode's log goes under `out_dir` and its rows; writes what lies beside the log."""

    def choices(self, log: EmembenchLog) -> list:
        """The logged (action, reason) of each step, as record.choice.Choice."""

    def plan(self, log: EmembenchLog, agent: str, find_rom: Callable[[str], Path], seed: int | None) -> Planned:
        """The episode a log is imported as (`find_rom`, `seed`: emembench_import.plan)."""

    def session(self, item: Planned, valid_actions: bool):
        """The live game the log is recorded from, and its on_step hook that holds it to the log."""

    def replay_again(self, item: Planned, pristine):
        """Where `replays_again`: a session, from a copy of the one at reset, that plays the whole log where
        the first replay diverged (raises the Divergence if none does)."""


def agent_name(run: str) -> str:
    """The agent an imported run is recorded as: the run's name, in the characters a file name keeps."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", run) or "emembench"


class Divergence(UserError):
    """The game and the log disagree at `step`."""

    def __init__(self, message: str, step: int):
        super().__init__(message)
        self.step = step


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def same(log: EmembenchLog, index: int, name: str, logged, played) -> None:
    """A Divergence at step index + 1 if the logged value of a field is not the game's."""
    if logged != played:
        raise Divergence(f"{log.where(index)}: step {index + 1}: field '{name}' differs from the game's: "
                         f"the log has {_shown(logged)}, the game {_shown(played)}", index + 1)


def not_ended(log: EmembenchLog, index: int, done: bool) -> None:
    """A Divergence if the game ended at step index + 1 and the log goes on."""
    if done and index + 1 < len(log.rows):
        raise Divergence(f"{log.where(index + 1)}: step {index + 2}: the game ended at step {index + 1}, the log "
                         f"goes on to step {len(log.rows)}", index + 1)
