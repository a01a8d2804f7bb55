"""Importing EMemBench's logs (emembench.py): each logged action re-played in the real game, the game checked
against the log step by step by the log's format (emembench_jericho.py, emembench_crafter.py: what each
checks, and how a Crafter replay that leaves the log is tried again), the episode written by the recorder
(episodes.py) exactly as `qtc play` writes it for those actions, with the logged reasoning as each step's
reason. A log that ends with `done` ends the game there; a game that ends before the log does is a
divergence too.

Nothing is written half: an episode is recorded into a temporary folder inside the output folder and moved
into place (frames first) only once every step matched, so a divergence, an error or Ctrl-C leaves the
episodes imported before it and nothing of the one under way. Episodes already in the output folder are
skipped, so a rerun resumes.
"""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from typing import Callable

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qtc.errors import UserError
from qtc.runtime.trace.format import episode_path, is_complete
from qtc.runtime.trace.frames import frames_path, remove_frames

from .choice import Choice
from .emembench import EMEMBENCH_FORMATS, read_log
from .emembench_format import Divergence, Planned, agent_name
from .episodes import RecordingCrashed, record_episode


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


def plan(paths: list[Path], find_rom: Callable[[str], Path], seed: int | None = None) -> list[Planned]:
    """Read every log (a UserError names the file, line and field at fault) and name its episode.
    `find_rom(file_name)` gives a Jericho run's story file or raises a UserError saying where it looked;
    `seed` is the Jericho seed (default: a `seed<N>` folder holding the log, else EMemBench's 43)."""
    planned, owners = [], {}
    for path in paths:
        log = read_log(path)
        item = EMEMBENCH_FORMATS[log.env].plan(log, agent_name(log.run), find_rom, seed)
        if item.episode_id in owners:
            raise UserError(f"{path}: its episode {item.episode_id} is also {owners[item.episode_id]}'s (runs are "
                            f"named by their file or folder: rename one)")
        owners[item.episode_id] = path
        planned.append(item)
    return planned


def _record(item: Planned, session, check, directory: Path, advance) -> Path:
    """Record the logged choices in `session` into `directory`; a UserError names the log's step that failed."""
    agent = ReplayAgent(EMEMBENCH_FORMATS[item.log.env].choices(item.log))
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
    disagree) names the file, the line and the step, and leaves nothing of the episode in `out`. A log
    whose format replays again (Crafter's) is replayed from a copy of the game at reset where the first
    replay left it."""
    fmt = EMEMBENCH_FORMATS[item.log.env]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".import-") as temporary:
        session, check = fmt.session(item, valid_actions)
        pristine = copy.deepcopy(session) if fmt.replays_again else None
        try:
            written = _record(item, session, check, Path(temporary), advance)
        except Divergence:
            if pristine is None:
                raise
            written = _record(item, fmt.replay_again(item, pristine), check, Path(temporary), advance)
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
