"""The recorder of a loop of the user's own (qtc.record.open): a Gymnasium-style `reset()` / `step(action,
reason)` around a live game that writes the trace `qtc play` writes.

It drives the recording `qtc play`'s loop drives (runtime/record/episodes.py), so the same game, seed,
agent name and choices give the same bytes. It records one episode, which ends when the game ends, at
`max_steps`, or at `close()` (`ended_by: walkthrough_end`: the agent stopped). A choice the game does not
have ends it as crashed (InvalidAction), a step after its end is refused (EpisodeOver); in a `with`
block, Ctrl-C finishes it as interrupted and an error as crashed (RecordingCrashed), as in `qtc play`.
"""

from __future__ import annotations

from pathlib import Path

from qtc.errors import UserError

from .choice import Choice
from .episodes import AGENT_STOPPED, EpisodeRecording
from .games import EpisodeOptions, find_game


class Recorder:
    """One episode of a live game, played by the caller's loop and written as a qtc trace."""

    def __init__(self, session, directory: Path, max_steps: int | None):
        self._recording = EpisodeRecording(session, directory, max_steps)
        self._guard = None

    @property
    def episode_id(self) -> str:
        return self._recording.session.episode_id

    @property
    def path(self) -> Path:
        """The trace file, finished once the episode has ended."""
        return self._recording.path

    @property
    def actions(self) -> tuple[str, ...] | None:
        """The game's actions by name (Crafter's 17), or None where any command goes (Jericho, TextWorld)."""
        return self._recording.session.actions

    @property
    def ended_by(self) -> str | None:
        """How the episode ended (docs/trace-format.md), or None while it goes on."""
        return self._recording.ended_by

    def reset(self) -> dict:
        """The first state: the dict an agent's `choose` gets before step 1."""
        if self._recording.n_steps:
            raise UserError(f"{self.episode_id}: a recorder records one episode, and this one has begun; "
                            "open another recorder for another episode")
        return self._recording.state

    def step(self, action: str, reason: str | None = None) -> tuple[dict, float, bool]:
        """Play `action` (recorded with `reason`): the next state, the step's reward, and whether the episode
        ended (the file is then finished)."""
        with self._recording.finishing():
            record = self._recording.step(Choice(action, reason))
        return self._recording.state, record["reward"], self._recording.ended

    def close(self) -> Path:
        """Finish the file (as the agent stopping, if the game has not ended); the trace's path."""
        if not self._recording.ended:
            self._recording.finish(AGENT_STOPPED)
        return self.path

    def __enter__(self) -> Recorder:
        self._guard = self._recording.finishing()
        self._guard.__enter__()
        return self

    def __exit__(self, kind, error, traceback) -> bool | None:
        if error is None:
            self._guard.__exit__(None, None, None)
            self.close()
            return None
        return self._guard.__exit__(kind, error, traceback)


def open_recorder(game: str, out: Path | str = "traces", seed: int | None = None, agent: str = "agent",
                  rom: Path | str | None = None, frames: bool = False, max_steps: int | None = None,
                  valid_actions: bool = True, game_file: Path | str | None = None, make: str | None = None,
                  make_options: dict[str, str] | None = None) -> Recorder:
    """A recorder of one episode of `game` ("crafter", "jericho" with `rom`, or "textworld" with a
    `game_file` or a challenge to `make` at `seed`, with the generator's `make_options`, into `out`),
    written to `out`/<game>-<agent>-s<seed>.jsonl as `qtc play` writes it (`frames`: Crafter's screens
    beside it; `valid_actions`: Jericho's valid-action finder, as `qtc play` runs it unless
    --no-valid-actions)."""
    options = EpisodeOptions(agent=agent, seed=seed, rom=None if rom is None else Path(rom),
                             max_steps=max_steps, frames=frames, valid_actions=valid_actions,
                             game_file=None if game_file is None else Path(game_file), make=make,
                             make_options=tuple((make_options or {}).items()), games_dir=Path(out))
    found = find_game(game, options)
    return Recorder(found.start(options, found.first_seed(options)), Path(out), max_steps)
