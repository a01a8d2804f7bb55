"""What the report's question details read from the trace store: episode lengths, the steps a run's
context sent a model, those steps rendered as the answering prompt renders them (evidence highlighted),
the screens of the evidence steps, and the Crafter map or Jericho room graph of a spatial question.
"""

from __future__ import annotations

from html import escape
from typing import Callable

import duckdb

from qtc.errors import UserError
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.evaluate.context import ContextMode, LogSizes, Shown, context_blocks, crafter_legend, shown_steps
from qtc.runtime.evaluate.frames import VisualMode, screen_url
from qtc.runtime.qa.answers import Answer
from qtc.runtime.qa.questions import Question
from qtc.runtime.spatial.udf import SpatialData
from qtc.runtime.trace.frames import episode_frames, frames_file

from .maps import crafter_map, crafter_map_legend, room_graph

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
        parts = [f'<pre class="legend">{escape(crafter_legend())}</pre>'] if q.env == "crafter" else []
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
        if q.env != "crafter" or frames_file(self.con, q.episode_id) is None:
            return ()
        return tuple(sorted({s for s in q.evidence if 0 <= s <= self.horizon(q)}))

    def screen_figure(self, episode_id: str, step: int) -> str:
        url = screen_url(episode_frames(self.con, episode_id)[step], step, SCREEN_CELL)
        return (f'<figure class="screen"><img src="{url}" width="{SCREEN_CELL}" height="{SCREEN_CELL}" '
                f'alt="{_screen_name(step)}"><figcaption>{_screen_name(step)}</figcaption></figure>')

    def room_names(self, episode_id: str) -> dict[int, str]:
        return dict(self.rows.execute("SELECT room, coalesce(display_name, name) FROM {jericho_rooms}",
                                      episode_id).fetchall())

    def room_before(self, episode_id: str, step: int) -> int | None:
        row = self.rows.execute("SELECT room_before FROM {jericho_steps} WHERE step = $step", episode_id,
                                step=step).fetchone()
        return row[0] if row else None

    def figure(self, q: Question) -> tuple[object, Callable[[], str]] | None:
        """(what the figure depends on, a function drawing it) for a spatial question, else None."""
        if q.category != "spatial":
            return None
        step = _step_binding(q, ("t", "j", "R", "L")) or min((s for s in q.evidence if s >= 1), default=None)
        if step is None:
            return None
        if q.env == "crafter":
            material = q.bindings.get("material")
            maps = self.spatial.episode("crafter", q.episode_id).state

            def draw() -> str:
                drawn = crafter_map(maps, step, material) if maps else ""
                return drawn and drawn + crafter_map_legend()
            return (q.episode_id, step, material), draw
        if q.env != "jericho":  # TextWorld's map is not drawn yet
            return None
        history = self.spatial.episode("jericho", q.episode_id).state
        names = self.room_names(q.episode_id)
        here = self.room_before(q.episode_id, _step_binding(q, ("i",)) or step)
        if here is None:
            return None
        # A room parameter is bound to the room's number; a location answer names the room.
        by_name = {name: room for room, name in names.items()}
        bound = _step_binding(q, ("target",))
        named = q.answer if q.answer_type == "location" and not q.adversarial else None
        target = bound if bound is not None else by_name.get(named)
        if "j" in q.bindings and "i" in q.bindings:  # a path between where you were at steps i and j
            target = self.room_before(q.episode_id, step)
        return ((q.episode_id, step, here, target),
                lambda: room_graph(history.graph_before(step), names, here, target))


def _screen_name(step: int) -> str:
    return "the start" if step == 0 else f"after step {step}"


def _step_binding(q: Question, names: tuple[str, ...]) -> int | None:
    """The first of the bindings `names` that the question binds to a number (a step or a room)."""
    for name in names:
        value = q.bindings.get(name)
        if value is not None and str(value).isdigit():
            return int(value)
    return None
