"""The recording loop shared by both games: agent -> session -> trace file, with resume and progress.

A session (CrafterSession, JerichoSession) owns the live game; this module owns how an episode is
written and how it ends. Ctrl-C finishes the episode under way as `ended_by: interrupted` (a complete,
clearly marked file) and stops. An error in the game or the agent finishes it as `ended_by: crashed`,
every step played before the failing one kept, and stops with RecordingCrashed, one line naming the
episode, the step and the error. Both are recorded again by the next run. Recording many episodes
skips those already complete, so a long run resumes where it stopped; with jobs > 1 the episodes are
recorded by worker processes, each episode written by one of them as one process writes it, so a run
resumes the same way (an episode's file depends on its seed alone, not on who recorded it).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qtc.errors import UserError
from qtc.processes import die_with_parent
from qtc.runtime.trace.format import EpisodeWriter, episode_path, is_complete

StepHook = Callable[[object, dict], None]


class RecordingCrashed(UserError):
    """A step of an episode failed (the game or the agent raised): the steps before it were kept."""


def record_episode(session, agent, directory: Path, max_steps: int,
                   on_step: StepHook | None = None, advance: Callable[[], None] | None = None) -> Path:
    """Play `agent` in `session` for at most `max_steps` steps and write the episode to `directory`.

    `on_step(session, record)` runs after each step while the live game is at that step (the tests
    use it to check the record against the game); `advance()` ticks a progress bar.
    """
    identity = {"episode_id": session.episode_id, "env": session.env_name, "game": session.game,
                "seed": session.seed, "agent": session.agent_name}
    writer = EpisodeWriter(directory, session.episode_id, identity)
    n_steps, ended_by = 0, "step_limit"
    step = 1  # the step being played: the one a failure is reported at

    def finish(ending: str) -> Path:
        header = {**identity, "n_steps": n_steps, "ended_by": ending, **session.header()}
        # Files a session keeps beside its trace (Crafter's frames) go first: a finished trace never lacks them.
        getattr(session, "write_beside", lambda path: None)(writer.path)
        return writer.finish(header)

    try:
        while n_steps < max_steps:
            step = n_steps + 1
            choice = agent.choose(session.state)
            if choice is None:
                ended_by = "walkthrough_end"
                break
            record = session.step(step, choice)
            writer.write_step(record)
            n_steps += 1
            if on_step:
                on_step(session, record)
            if advance:
                advance()
            if record["done"]:
                ended_by = session.ending()
                break
    except KeyboardInterrupt:
        finish("interrupted")
        raise
    except Exception as error:
        path = finish("crashed")
        raise RecordingCrashed(
            f"{session.episode_id}: step {step} failed ({type(error).__name__}: {error}); its {n_steps} "
            f"step(s) before are kept in {path} (ended_by: crashed)") from error
    return finish(ended_by)


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
