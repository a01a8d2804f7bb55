"""How an episode is written, step by step, and how it ends; the recording loop of `qtc play` over it, with
resume and progress.

A session (runtime/record/games.py finds a game's) owns the live game; an EpisodeRecording owns the
trace file: it checks each choice, plays it, writes the step and finishes the file once, with how the
episode ended. `record_episode` (an agent's loop) and the recorder of qtc.record (the user's loop,
runtime/record/recorder.py) drive the same recording, so the same seed and choices give the same bytes.

Ctrl-C finishes the episode under way as `ended_by: interrupted` (a complete, clearly marked file) and
stops. An error in the game or the agent finishes it as `ended_by: crashed`, every step played before
the failing one kept, and stops with RecordingCrashed, one line naming the episode, the step and the
error; a choice the game does not have (InvalidAction) ends it the same way. Both are recorded again by
the next run. Recording many episodes skips those already complete, so a long run resumes where it
stopped; with jobs > 1 the episodes are recorded by worker processes, each episode written by one of
them as one process writes it, so a run resumes the same way (an episode's file depends on its seed
alone, not on who recorded it).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qtc.errors import UserError
from qtc.processes import die_with_parent
from qtc.runtime.trace.format import EpisodeWriter, episode_path, is_complete

from .choice import Choice, as_choice

StepHook = Callable[[object, dict], None]

# The ending of an episode whose agent stopped before the game ended: an agent's choose returned None (a
# walkthrough ran out) or a recorder was closed (docs/trace-format.md).
AGENT_STOPPED = "walkthrough_end"


class RecordingCrashed(UserError):
    """A step of an episode failed (the game or the agent raised): the steps before it were kept."""


class InvalidAction(RecordingCrashed):
    """A choice the game does not have (not one of Crafter's actions, not a Jericho command): the steps
    before it were kept."""


class EpisodeOver(UserError):
    """A step asked of an episode that has ended: its file is finished, with how it ended."""


class EpisodeRecording:
    """One episode's trace file, written as the session plays: `step(choice)` checks the choice, plays it
    and writes the step, and finishes the file when the game ended or `max_steps` steps were played (None:
    no limit); `finish(ending)` finishes it otherwise. `finishing()` guards a loop driving it."""

    def __init__(self, session, directory: Path, max_steps: int | None):
        self.session = session
        self.max_steps = max_steps
        self.identity = {"episode_id": session.episode_id, "env": session.env_name, "game": session.game,
                         "seed": session.seed, "agent": session.agent_name}
        self._writer = EpisodeWriter(directory, session.episode_id, self.identity)
        self.path = self._writer.path
        self.n_steps = 0
        self.ended_by: str | None = None

    @property
    def ended(self) -> bool:
        return self.ended_by is not None

    @property
    def state(self) -> dict:
        """What the agent sees before the next step."""
        return self.session.state

    def step(self, choice: Choice) -> dict:
        """Play the next step and write it; returns its record."""
        if self.ended:
            raise EpisodeOver(f"{self.session.episode_id}: no step {self.n_steps + 1}: the episode ended at "
                              f"step {self.n_steps} ({self.ended_by}); its trace is {self.path}")
        problem = self._problem(choice)
        if problem:
            raise InvalidAction(self._crashed(problem))
        record = self.session.step(self.n_steps + 1, choice)
        self._writer.write_step(record)
        self.n_steps += 1
        if record["done"]:
            self.finish(self.session.ending())
        elif self.max_steps is not None and self.n_steps >= self.max_steps:
            self.finish("step_limit")
        return record

    def _problem(self, choice: Choice) -> str | None:
        if choice.reason is not None and not isinstance(choice.reason, str):
            return f"the reason must be text or None, got {type(choice.reason).__name__}"
        return self.session.action_problem(choice.action)

    def finish(self, ending: str) -> Path:
        """Write the finished file, ended by `ending` (trace/format.py ENDINGS)."""
        header = {**self.identity, "n_steps": self.n_steps, "ended_by": ending, **self.session.header()}
        # Files a session keeps beside its trace (Crafter's frames) go first: a finished trace never lacks them.
        getattr(self.session, "write_beside", lambda path: None)(self.path)
        self._writer.finish(header)
        self.ended_by = ending
        return self.path

    def _crashed(self, what: str) -> str:
        """Finish the file as crashed; the one line saying so, naming the step that failed and `what`."""
        self.finish("crashed")
        return (f"{self.session.episode_id}: step {self.n_steps + 1} failed ({what}); its {self.n_steps} "
                f"step(s) before are kept in {self.path} (ended_by: crashed)")

    @contextlib.contextmanager
    def finishing(self) -> Iterator[EpisodeRecording]:
        """Guard a loop driving the recording: Ctrl-C finishes the episode as interrupted (and goes on), an
        error as crashed, raised again as RecordingCrashed. Errors once the file is finished pass as they are."""
        try:
            yield self
        except KeyboardInterrupt:
            if not self.ended:
                self.finish("interrupted")
            raise
        except Exception as error:
            if self.ended:
                raise
            raise RecordingCrashed(self._crashed(f"{type(error).__name__}: {error}")) from error


def record_episode(session, agent, directory: Path, max_steps: int,
                   on_step: StepHook | None = None, advance: Callable[[], None] | None = None) -> Path:
    """Play `agent` in `session` for at most `max_steps` steps and write the episode to `directory`.

    `on_step(session, record)` runs after each step while the live game is at that step (the tests
    use it to check the record against the game); `advance()` ticks a progress bar.
    """
    recording = EpisodeRecording(session, directory, max_steps)
    with recording.finishing():
        while not recording.ended:
            choice = as_choice(agent.choose(recording.state))
            if choice is None:
                recording.finish(AGENT_STOPPED)
                break
            record = recording.step(choice)
            if on_step:
                on_step(session, record)
            if advance:
                advance()
    return recording.path


@dataclass(frozen=True)
class EpisodeSpec:
    """What to record: `make()` builds (session, agent); `episode_id` names the file to resume by. To be
    recorded by a worker process, `make` must pickle (a module's function, or a partial of one)."""
    episode_id: str
    make: Callable[[], tuple[object, object]]


def record_episodes(specs: Iterable[EpisodeSpec], directory: Path, max_steps: int,
                    show_progress: bool = True, jobs: int = 1) -> tuple[list[Path], list[Path]]:
    """Record each episode not already complete in `directory`, `jobs` at a time (worker processes when
    more than one); returns (recorded, skipped), in the order of `specs`."""
    specs = list(specs)
    recorded, skipped = [], []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("episodes"), TextColumn("{task.fields[steps]} steps"),
               TextColumn("{task.fields[rate]:.0f} steps/s"), TimeElapsedColumn())
    with Progress(*columns, disable=not show_progress, transient=False) as progress:
        task = progress.add_task("recording", total=len(specs), steps=0, rate=0.0)
        total_steps = 0

        def advance() -> None:
            nonlocal total_steps
            total_steps += 1
            elapsed = progress.tasks[task].elapsed or 0.0
            progress.update(task, steps=total_steps, rate=total_steps / elapsed if elapsed else 0.0)

        todo = []
        for spec in specs:
            path = episode_path(directory, spec.episode_id)
            if is_complete(path):
                skipped.append(path)
                progress.advance(task)
            else:
                todo.append(spec)
        if jobs > 1 and len(todo) > 1:
            def finished(steps: int) -> None:
                for _ in range(steps):
                    advance()
                progress.advance(task)
            recorded = _record_in_workers(todo, directory, max_steps, min(jobs, len(todo)), finished)
        else:
            for spec in todo:
                recorded.append(_record(spec, directory, max_steps, advance))
                progress.advance(task)
    return recorded, skipped


def _record(spec: EpisodeSpec, directory: Path, max_steps: int, advance: Callable[[], None] | None = None) -> Path:
    session, agent = spec.make()
    return record_episode(session, agent, directory, max_steps, advance=advance)


def _record_counting(spec: EpisodeSpec, directory: Path, max_steps: int) -> tuple[Path, int]:
    """What a worker process runs: the episode recorded, and its steps (for the progress bar)."""
    path = _record(spec, directory, max_steps)
    return path, sum(1 for _ in path.open(encoding="utf-8")) - 1


def _record_in_workers(specs: list[EpisodeSpec], directory: Path, max_steps: int, jobs: int,
                       finished: Callable[[int], None]) -> list[Path]:
    """The episodes recorded by `jobs` worker processes (spawned: a game's state must not cross a fork).
    Ctrl-C reaches the workers too: each finishes its episode as interrupted, as one process does; the
    episodes not started are left for the next run."""
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=die_with_parent,
                             initargs=(os.getpid(),)) as executor:  # workers die with this process
        futures = {executor.submit(_record_counting, spec, directory, max_steps): number
                   for number, spec in enumerate(specs)}
        paths: dict[int, Path] = {}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    paths[futures[future]], steps = future.result()
                    finished(steps)
        except BaseException:
            executor.shutdown(cancel_futures=True)
            raise
    return [paths[number] for number in sorted(paths)]
