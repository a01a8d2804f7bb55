"""Importing EMemBench's logs (emembench.py): each logged action re-played in the real game, the game checked
against the log step by step, the episode written by the recorder (episodes.py) exactly as `qtc play`
writes it for those actions, with the logged reasoning as each step's reason.

Checked at every step: Jericho, the text before the action (`observation`) and after it
(`env_feedback.text`), the reward and whether the game ended; Crafter, the player's position, inventory
and achievement counts (`info`), the reward, the end of the game, and the screen after the step where the
run kept its frames (`frames/`, then kept beside the trace as `qtc play --frames` keeps them). A log that
ends with `done` ends the game there; a game that ends before the log does is a divergence too.

EMemBench ran unmodified Crafter, which picks the creature it despawns by memory address: a Crafter replay
that leaves the log is tried again with other despawn choices (crafter_despawns.py, `despawn_choices`),
and an episode that needed them is written with `ordered_objects: false`.

Nothing is written half: an episode is recorded into a temporary folder inside the output folder and moved
into place (frames first) only once every step matched, so a divergence, an error or Ctrl-C leaves the
episodes imported before it and nothing of the one under way. Episodes already in the output folder are
skipped, so a rerun resumes.
"""

from __future__ import annotations

import copy
import functools
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
from qtc.runtime.trace.format import episode_id, episode_path, is_complete
from qtc.runtime.trace.frames import frames_path, remove_frames

from .choice import Choice
from .crafter_despawns import Despawn, DespawnChoices
from .emembench import FRAMES_FOLDER, JERICHO_DEFAULT_SEED, EmembenchLog, frame_name, read_log
from .episodes import RecordingCrashed, record_episode

SHOWN = 80  # characters of a differing value shown in a message
# Replays tried for one Crafter log, each despawning other creatures, before its divergence is reported.
MAX_REPLAYS = 64


class Divergence(UserError):
    """The game and the log disagree at `step`."""

    def __init__(self, message: str, step: int):
        super().__init__(message)
        self.step = step


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
                         f"the log has {_shown(logged)}, the game {_shown(played)}", index + 1)


def _not_ended(log: EmembenchLog, index: int, done: bool) -> None:
    if done and index + 1 < len(log.rows):
        raise Divergence(f"{log.where(index + 1)}: step {index + 2}: the game ended at step {index + 1}, the log "
                         f"goes on to step {len(log.rows)}", index + 1)


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
        raise Divergence(f"{where}: {step} differs from the game's ({path})", index + 1)


def _check_jericho(item: Planned, session, record: dict) -> None:
    """The on_step hook that holds Jericho to the log after each step."""
    log, index = item.log, record["step"] - 1
    row = log.rows[index]
    _same(log, index, "observation", row["observation"], record["obs_before"])
    _same(log, index, "env_feedback.text", row["env_feedback"]["text"], record["obs_after"])
    _same(log, index, "env_feedback.reward", row["env_feedback"]["reward"], record["reward"])
    _same(log, index, "env_feedback.done", row["env_feedback"]["done"], record["done"])
    _not_ended(log, index, record["done"])


def _check_crafter(item: Planned, index: int, player, reward: float, done: bool, frame: np.ndarray) -> None:
    """Crafter after step index + 1 against the log: what its step info logged, and the screen."""
    log = item.log
    row, info = log.rows[index], log.rows[index]["info"]
    _same(log, index, "info.player_pos", info["player_pos"], [int(player.pos[0]), int(player.pos[1])])
    _same(log, index, "info.inventory", info["inventory"], dict(player.inventory))
    _same(log, index, "info.achievements", info["achievements"], dict(player.achievements))
    _same(log, index, "reward", row["reward"], reward)
    if row["done"] and not done:  # the game may end at the run's step limit without the log saying so
        _same(log, index, "done", row["done"], done)
    if item.frames:
        _same_screen(log, index, item.frames, row["frame"], frame)
    _not_ended(log, index, done)


def _replay_crafter(item: Planned, pristine, choices: dict[int, int]) -> tuple[Divergence | None, list[Despawn]]:
    """Replay the log in a copy of the game at reset with these despawn choices: where it diverges (None if
    nowhere) and the despawn draws made."""
    env = copy.deepcopy(pristine)
    despawns = DespawnChoices(dict(choices)).install(env)
    try:
        for index, row in enumerate(item.log.rows):
            frame, reward, done, _ = env.step(row["action_id"])
            _check_crafter(item, index, env._player, float(reward), bool(done), frame)
    except Divergence as divergence:
        return divergence, despawns.draws
    return None, despawns.draws


def despawn_choices(item: Planned, pristine) -> dict[int, int]:
    """The despawn choices (crafter_despawns.py) under which the game plays the whole log, found depth
    first: on a divergence, the last despawn draw before it with a creature left untried takes the next
    one and the draws after it start over. Raises the divergence of the replay that went furthest when
    every choice was tried or MAX_REPLAYS replays were made."""
    choices: dict[int, int] = {}
    furthest = None
    for replays in range(1, MAX_REPLAYS + 1):
        divergence, draws = _replay_crafter(item, pristine, choices)
        if divergence is None:
            return choices
        if furthest is None or divergence.step > furthest.step:
            furthest = divergence
        open_draws = [number for number, draw in enumerate(draws)
                      if draw.step <= divergence.step and choices.get(number, 0) + 1 < draw.among]
        if not open_draws:
            break
        turned = open_draws[-1]
        turn = choices.get(turned, 0) + 1
        choices = {number: earlier for number, earlier in choices.items() if number < turned}
        choices[turned] = turn
    if replays > 1:
        raise Divergence(f"{furthest} (the furthest of {replays} replays, each despawning other creatures)",
                         furthest.step)
    raise furthest


def _session(item: Planned, valid_actions: bool):
    """The live game the log is recorded from, and its on_step hook that holds it to the log."""
    agent = agent_name(item.log.run)
    if item.log.env == "jericho":
        from .jericho import JerichoSession

        return JerichoSession(item.rom, item.seed, agent, valid_actions), functools.partial(_check_jericho, item)
    from .crafter import CrafterSession

    session = CrafterSession(item.seed, agent, len(item.log.rows), keep_frames=item.frames is not None)
    if item.frames:
        _same_screen(item.log, -1, item.frames, frame_name(0), session.state["frame"])

    def check(session, record: dict) -> None:
        _check_crafter(item, record["step"] - 1, session.player, record["reward"], record["done"],
                       session.state["frame"])
    return session, check


def _record(item: Planned, session, check, directory: Path, advance) -> Path:
    """Record the logged choices in `session` into `directory`; a UserError names the log's step that failed."""
    agent = ReplayAgent(logged_choices(item.log))
    try:
        return record_episode(session, agent, directory, len(item.log.rows), on_step=check, advance=advance)
    except RecordingCrashed as crash:
        cause = crash.__cause__
        if isinstance(cause, UserError):
            raise cause from None
        raise UserError(f"{item.log.where(agent.given - 1)}: step {agent.given}: the game failed replaying it "
                        f"({type(cause).__name__}: {cause})") from None


def import_episode(item: Planned, out: Path, valid_actions: bool = True,
                   advance: Callable[[], None] | None = None) -> Path:
    """Replay one log and write its episode to `out`; a UserError (Divergence where the game and the log
    disagree) names the file, the line and the step, and leaves nothing of the episode in `out`.

    A Crafter log the game leaves is replayed again despawning other creatures (despawn_choices); an
    episode that needed it says `ordered_objects: false` (qtc play, with its insertion order, would not
    replay it)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".import-") as temporary:
        session, check = _session(item, valid_actions)
        pristine = copy.deepcopy(session) if item.log.env == "crafter" else None
        try:
            written = _record(item, session, check, Path(temporary), advance)
        except Divergence:
            if pristine is None:
                raise
            choices = despawn_choices(item, pristine.env)
            session = pristine
            DespawnChoices(choices).install(session.env)
            session.ordered_objects = not any(choices.values())
            written = _record(item, session, check, Path(temporary), advance)
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
