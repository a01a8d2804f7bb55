"""An episode as a memory provider observes it: the episode's description, then its steps one at a time.

A step's text is its block of the log `qtc answer` shows (runtime/evaluate/context.py): step 0 is the
start ("Before step 1 (the start)" and the state the agent began in), step t >= 1 the action, the reason
and the state after it. So the legend and the texts of steps 0..h, joined by newlines, are the log of
`--context full` at horizon h. Steps are rendered a stretch at a time, as the driver asks for them.
"""

from __future__ import annotations

from typing import Iterator

import duckdb
import numpy as np

from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.evaluate.context import Shown, context_blocks
from qtc.runtime.evaluate.registry import EVALUATE_ENVIRONMENTS
from qtc.runtime.trace.frames import episode_frames, frames_file

STRETCH = 500  # steps rendered by one query of each table


class EpisodeFeed:
    def __init__(self, con: duckdb.DuckDBPyConnection, rows: EpisodeRows, episode_id: str, env: str, game: str):
        self._rows = rows
        self.episode = {"episode_id": episode_id, "env": env, "game": game,
                        "legend": EVALUATE_ENVIRONMENTS[env].legend}
        self._frames: np.ndarray | None = (episode_frames(con, episode_id)
                                           if frames_file(con, episode_id) is not None else None)

    def steps(self, first: int, last: int) -> Iterator[dict]:
        """The steps `first` to `last`, in order (step 0 is the start)."""
        for start in range(first, last + 1, STRETCH):
            end = min(start + STRETCH - 1, last)
            shown = Shown(frozenset(range(max(start, 1), end + 1)), frozenset(range(start, end + 1)))
            for block in context_blocks(self._rows, self.episode["episode_id"], self.episode["env"], shown):
                step = {"step": block.step, "text": block.text}
                if self._frames is not None:  # a read-only view: the frames are shared with the screens' cache
                    frame = self._frames[block.step]
                    frame.flags.writeable = False
                    step["frame"] = frame
                yield step
