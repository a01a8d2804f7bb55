"""Importing EMemBench's logs (emembench.py): each logged action re-played in the real game, the game checked
against the log step by step, the episode written by the recorder (episodes.py) exactly as `qtc play`
writes it for those actions, with the logged reasoning as each step's reason.

Checked at every step: Jericho, the text before the action (`observation`) and after it
(`env_feedback.text`), the reward and whether the game ended; Crafter, the player's position, inventory
and achievement counts (`info`), the reward, the end of the game, and the screen after the step where the
run kept its frames (`frames/`, then kept beside the trace as `qtc play --frames` keeps them). A log that
ends with `done` ends the game there; a game that ends before the log does is a divergence too.

Nothing is written half: an episode is recorded into a temporary folder inside the output folder and moved
into place (frames first) only once every step matched, so a divergence, an error or Ctrl-C leaves the
episodes imported before it and nothing of the one under way. Episodes already in the output folder are
skipped, so a rerun resumes.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qtc.dsl import crafter_data
from qtc.errors import UserError
from qtc.runtime.trace.format import episode_id, episode_path, is_complete, read_header
from qtc.runtime.trace.frames import frames_path, remove_frames

from .choice import Choice
from .emembench import FRAMES_FOLDER, JERICHO_DEFAULT_SEED, EmembenchLog, frame_name, read_log
from .episodes import RecordingCrashed, record_episode

SHOWN = 80  # characters of a differing value shown in a message


class Divergence(UserError):
    """The game and the log disagree at a step."""


class ReplayAgent:
    """Chooses the logged actions, with the logged reasons, in order; `given` counts those handed out."""

    def __init__(self, choices: list[Choice]):
        self._choices = choices
        self.given = 0

    def choose(self, state: dict) -> Choice | None:
        if self.given == len(self._choices):
            return None
        self.given += 1
        return self._choices[self.given - 1]


def logged_choices(log: EmembenchLog) -> list[Choice]:
    """The logged (action, reason) of each step; EMemBench logs "" for no reason, qtc None."""
    if log.env == "jericho":
        return [Choice(row["agent"]["action"], row["agent"]["reason"] or None) for row in log.rows]
    return [Choice(crafter_data.ACTIONS[row["action_id"]], row["reason"] or None) for row in log.rows]


def agent_name(run: str) -> str:
    """The agent an imported run is recorded as: the run's name, in the characters a file name keeps."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", run) or "emembench"


@dataclass
class Planned:
    """A log to import: where its episode goes, and the game to replay it in."""
    log: EmembenchLog
    episode_id: str
    seed: int
    rom: Path | None  # Jericho's story file

    @property
    def frames(self) -> Path | None:
        """Crafter: the run's frames folder, if it kept its frames."""
        folder = self.log.path.parent / FRAMES_FOLDER
        return folder if self.log.env == "crafter" and (folder / frame_name(0)).is_file() else None


def plan(paths: list[Path], find_rom: Callable[[str], Path], seed: int | None = None) -> list[Planned]:
    """Read every log (a UserError names the file, line and field at fault) and name its episode.
    `find_rom(file_name)` gives a Jericho run's story file or raises a UserError saying where it looked;
    `seed` is the Jericho seed (default: a `seed<N>` folder holding the log, else EMemBench's 43)."""
    from .jericho import resolve_seed

    planned, owners = [], {}
    for path in paths:
        log = read_log(path)
        agent = agent_name(log.run)
        if log.env == "crafter":
            item = Planned(log, episode_id("crafter", agent, log.seed), log.seed, None)
        else:
            try:
                rom = Path(find_rom(log.rom))
            except UserError as error:
                raise UserError(f"{log.where(0)}: field 'game.rom': unknown game {log.rows[0]['game']['name']!r}: "
                                f"{error}") from None
            chosen = seed if seed is not None else log.seed if log.seed is not None else JERICHO_DEFAULT_SEED
            game_seed = resolve_seed(rom, chosen)
            item = Planned(log, episode_id(rom.stem, agent, game_seed), game_seed, rom)
        if item.episode_id in owners:
            raise UserError(f"{path}: its episode {item.episode_id} is also {owners[item.episode_id]}'s (runs are "
                            f"named by their file or folder: rename one)")
        owners[item.episode_id] = path
        planned.append(item)
    return planned


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def _same(log: EmembenchLog, index: int, name: str, logged, played) -> None:
    if logged != played:
        raise Divergence(f"{log.where(index)}: step {index + 1}: field '{name}' differs from the game's: "
                         f"the log has {_shown(logged)}, the game {_shown(played)}")


def _screen(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def _same_screen(log: EmembenchLog, index: int, folder: Path, name: str, played: np.ndarray) -> None:
    """Step index + 1's logged screen (index -1: the one at reset) against the game's."""
    path = folder / name
    where = log.where(max(index, 0))
    if not path.is_file():
        raise UserError(f"{where}: field 'frame': {path} not found (the run's other frames are there)")
    if not np.array_equal(_screen(path), played):
        step = f"step {index + 1}: the screen after it" if index >= 0 else "the screen at reset"
        raise Divergence(f"{where}: {step} differs from the game's ({path})")


def _checker(item: Planned) -> Callable[[object, dict], None]:
    """The on_step hook that holds the game to the log after each step."""
    log = item.log

    def jericho(session, record: dict) -> None:
        index = record["step"] - 1
        row = log.rows[index]
        _same(log, index, "observation", row["observation"], record["obs_before"])
        _same(log, index, "env_feedback.text", row["env_feedback"]["text"], record["obs_after"])
        _same(log, index, "env_feedback.reward", row["env_feedback"]["reward"], record["reward"])
        _same(log, index, "env_feedback.done", row["env_feedback"]["done"], record["done"])

    def crafter(session, record: dict) -> None:
        index = record["step"] - 1
        row, info = log.rows[index], log.rows[index]["info"]
        _same(log, index, "info.player_pos", info["player_pos"], [record["x_after"], record["y_after"]])
        _same(log, index, "info.inventory", info["inventory"], dict(session.player.inventory))
        _same(log, index, "info.achievements", info["achievements"], dict(session.player.achievements))
        _same(log, index, "reward", row["reward"], record["reward"])
        if row["done"] and not record["done"]:  # the game may end at the run's step limit without the log saying so
            _same(log, index, "done", row["done"], record["done"])
        if item.frames:
            _same_screen(log, index, item.frames, row["frame"], session.state["frame"])

    return jericho if log.env == "jericho" else crafter


def _session(item: Planned, valid_actions: bool):
    agent = agent_name(item.log.run)
    if item.log.env == "jericho":
        from .jericho import JerichoSession

        return JerichoSession(item.rom, item.seed, agent, valid_actions)
    from .crafter import CrafterSession

    session = CrafterSession(item.seed, agent, len(item.log.rows), keep_frames=item.frames is not None)
    if item.frames:
        _same_screen(item.log, -1, item.frames, frame_name(0), session.state["frame"])
    return session


def import_episode(item: Planned, out: Path, valid_actions: bool = True,
                   advance: Callable[[], None] | None = None) -> Path:
    """Replay one log and write its episode to `out`; a UserError (Divergence where the game and the log
    disagree) names the file, the line and the step, and leaves nothing of the episode in `out`."""
    log = item.log
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".import-") as temporary:
        session = _session(item, valid_actions)
        agent = ReplayAgent(logged_choices(log))
        try:
            written = record_episode(session, agent, Path(temporary), len(log.rows), on_step=_checker(item),
                                     advance=advance)
        except RecordingCrashed as crash:
            cause = crash.__cause__
            if isinstance(cause, UserError):
                raise cause from None
            raise UserError(f"{log.where(agent.given - 1)}: step {agent.given}: the game failed replaying it "
                            f"({type(cause).__name__}: {cause})") from None
        played = read_header(written)
        if played["n_steps"] < len(log.rows):
            raise Divergence(f"{log.where(played['n_steps'])}: step {played['n_steps'] + 1}: the game ended at step "
                             f"{played['n_steps']} ({played['ended_by']}), the log goes on to step {len(log.rows)}")
        target = episode_path(out, item.episode_id)
        if frames_path(written).exists():  # frames first: a trace in place never lacks its frames
            os.replace(frames_path(written), frames_path(target))
        else:
            remove_frames(target)
        os.replace(written, target)
    return target


def import_logs(items: list[Planned], out: Path, valid_actions: bool = True,
                show_progress: bool = True) -> tuple[list[Path], list[Path]]:
    """Import each planned log whose episode `out` does not hold complete yet; returns (imported, skipped)."""
    imported, skipped = [], []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("episodes"),
               TextColumn("{task.fields[steps]} steps"), TimeElapsedColumn())
    with Progress(*columns, disable=not show_progress) as progress:
        task = progress.add_task("importing", total=len(items), steps=0)
        steps = 0

        def advance() -> None:
            nonlocal steps
            steps += 1
            progress.update(task, steps=steps)

        for item in items:
            target = episode_path(out, item.episode_id)
            if is_complete(target):
                skipped.append(target)
            else:
                imported.append(import_episode(item, out, valid_actions, advance))
            progress.advance(task)
    return imported, skipped
