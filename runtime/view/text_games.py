"""What the text games' report records share (Jericho's, TextWorld's: their steps and rooms tables have one
shape): a spatial question's figure is the room graph of the moves made before its step, with the room the
player was in, the room asked about and the path (maps.py)."""

from __future__ import annotations

from typing import Callable

from qtc.dsl.schema import Table
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.qa.questions import Question

from .environment import step_binding
from .maps import room_graph


def room_graph_figure(steps_table: Table, rooms_table: Table) -> Callable:
    """The figure function (environment.py, ViewEnvironment.figure) of a text game with these tables."""
    steps, rooms = steps_table.sql_name, rooms_table.sql_name

    def room_names(rows: EpisodeRows, episode_id: str) -> dict[int, str]:
        return dict(rows.execute(f"SELECT room, coalesce(display_name, name) FROM {{{rooms}}}", episode_id).fetchall())

    def room_before(rows: EpisodeRows, episode_id: str, step: int) -> int | None:
        row = rows.execute(f"SELECT room_before FROM {{{steps}}} WHERE step = $step", episode_id, step=step).fetchone()
        return row[0] if row else None

    def figure(episodes, q: Question, step: int):
        history = episodes.spatial.episode(q.episode_id).state
        names = room_names(episodes.rows, q.episode_id)
        here = room_before(episodes.rows, q.episode_id, step_binding(q, ("i",)) or step)
        if here is None:
            return None
        # A room parameter is bound to the room's number; a location answer names the room.
        by_name = {name: room for room, name in names.items()}
        bound = step_binding(q, ("target",))
        named = q.answer if q.answer_type == "location" and not q.adversarial else None
        target = bound if bound is not None else by_name.get(named)
        if "j" in q.bindings and "i" in q.bindings:  # a path between where you were at steps i and j
            target = room_before(episodes.rows, q.episode_id, step)
        return ((q.episode_id, step, here, target),
                lambda: room_graph(history.graph_before(step), names, here, target))
    return figure
