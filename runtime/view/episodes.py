"""What the report's question details read from the trace store: episode lengths, the steps a run's
context sent a model, those steps rendered as the answering prompt renders them (evidence highlighted),
the screens of the evidence steps, and the figure of a spatial question (its environment's report
record's: the Crafter map, the Jericho room graph).
"""

from __future__ import annotations

from html import escape
from typing import Callable

import duckdb

from qtc.errors import UserError
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.evaluate.context import ContextMode, LogSizes, Shown, context_blocks, shown_steps
from qtc.runtime.evaluate.frames import VisualMode, screen_url
from qtc.runtime.evaluate.registry import EVALUATE_ENVIRONMENTS
from qtc.runtime.qa.answers import Answer
from qtc.runtime.qa.questions import Question
from qtc.runtime.spatial.udf import SpatialData
from qtc.runtime.trace.frames import episode_frames, frames_file

from .environment import step_binding
from .registry import VIEW_ENVIRONMENTS

EVIDENCE = ContextMode.parse("evidence")
SCREEN_CELL = 128  # pixels a side: the 64-pixel screen at twice its size, its step in the corner


def in_context(step: int, shown: Shown) -> bool:
    """Whether a context shows evidence step `step`: its action's block (step 0: the start state)."""
    return step in shown.actions or (step == 0 and 0 in shown.states)


def step_ranges(steps) -> str:
    """Step numbers as runs: '1-3, 7, 9-10' ('none' for none)."""
    ordered = sorted(steps)
    runs: list[list[int]] = []
    for step in ordered:
        if runs and step == runs[-1][1] + 1:
            runs[-1][1] = step
        else:
            runs.append([step, step])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "none"


class Episodes:
    """The trace store of the questions' episodes, read for their details."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.lengths = dict(con.execute("SELECT episode_id, n_steps FROM episodes").fetchall())
        self.spatial = SpatialData(con)
        self.rows = EpisodeRows(con)
        self._sizes: dict[str, LogSizes] = {}  # by episode, for budget:B contexts

    def horizon(self, q: Question) -> int:
        n = self.lengths[q.episode_id]
        return n if q.horizon is None else min(q.horizon, n)

    def sent(self, q: Question, answer: Answer | None) -> Shown | None:
        """The steps the model of `answer` was shown for `q`: those its memory retrieved where the answer
        carries them, else those the run's context mode shows at the question's horizon; None when
        neither is known (no answer, or a context that is not a qtc context mode)."""
        if answer is None:
            return None
        horizon = self.horizon(q)
        if answer.retrieved_steps is not None:
            return Shown.of_steps([s for s in answer.retrieved_steps if 0 <= s <= horizon])
        try:
            mode = VisualMode.parse(answer.context)
        except UserError:
            return None
        if mode.kind == "budget" and q.episode_id not in self._sizes:
            self._sizes[q.episode_id] = LogSizes.of_episode(self.rows, q.episode_id, q.env,
                                                            self.lengths[q.episode_id])
        return shown_steps(mode, horizon, q.evidence, self._sizes.get(q.episode_id))

    def log_html(self, q: Question, shown: Shown) -> str:
        """The steps `shown` as the answering prompt renders them, the question's evidence highlighted."""
        blocks = context_blocks(self.rows, q.episode_id, q.env, shown)
        evidence = set(q.evidence)
        legend = EVALUATE_ENVIRONMENTS[q.env].legend
        parts = [f'<pre class="legend">{escape(legend)}</pre>'] if legend else []
        for block in blocks:
            marked = block.step in evidence and (block.action or block.step == 0)
            parts.append(f'<pre class="block{" evidence" if marked else ""}">{escape(block.text)}</pre>')
        return "".join(parts) if blocks else '<p class="none">(no steps are shown)</p>'

    def evidence_shown(self, q: Question) -> Shown:
        """The question's evidence steps, as `--context evidence` shows them."""
        return shown_steps(EVIDENCE, self.horizon(q), q.evidence)

    def screen_evidence(self, q: Question) -> tuple[int, ...]:
        """A Crafter question's evidence steps up to its horizon, whose screens the page shows; none when
        its episode was recorded without frames."""
        if not EVALUATE_ENVIRONMENTS[q.env].screens or frames_file(self.con, q.episode_id) is None:
            return ()
        return tuple(sorted({s for s in q.evidence if 0 <= s <= self.horizon(q)}))

    def screen_figure(self, episode_id: str, step: int) -> str:
        url = screen_url(episode_frames(self.con, episode_id)[step], step, SCREEN_CELL)
        return (f'<figure class="screen"><img src="{url}" width="{SCREEN_CELL}" height="{SCREEN_CELL}" '
                f'alt="{_screen_name(step)}"><figcaption>{_screen_name(step)}</figcaption></figure>')

    def figure(self, q: Question) -> tuple[object, Callable[[], str]] | None:
        """(what the figure depends on, a function drawing it) for a spatial question, else None."""
        if q.category != "spatial":
            return None
        step = step_binding(q, ("t", "j", "R", "L")) or min((s for s in q.evidence if s >= 1), default=None)
        if step is None:
            return None
        figure = VIEW_ENVIRONMENTS[q.env].figure
        return figure(self, q, step) if figure is not None else None


def _screen_name(step: int) -> str:
    return "the start" if step == 0 else f"after step {step}"

