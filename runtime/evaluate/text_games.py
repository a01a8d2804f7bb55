"""What the text games (Jericho, TextWorld) share in evaluation: their states, from the same columns of
their steps and rooms tables, and the records' common fields."""

from __future__ import annotations

from typing import Callable

from qtc.runtime.episode_rows import EpisodeRows

from .environment import one_line

DESCRIPTION = "a text adventure game"


def state_lines(env: str) -> Callable:
    """The state_lines of a text game: the observation, then the room as the status line names it, the
    score and the moves."""
    def lines_of(rows: EpisodeRows, episode_id: str, steps: list[int]) -> dict[int, list[str]]:
        # The state after step s is what its action produced; the start state is what step 1 was chosen in.
        states = rows.execute(f"""
            WITH state AS (
                SELECT 0 AS step, obs_before AS observation, room_before AS room, score - reward AS score,
                       NULL::BIGINT AS moves
                FROM {{{env}_steps}} WHERE step = 1
                UNION ALL
                SELECT step, obs_after, room_after, score, moves FROM {{{env}_steps}})
            SELECT s.step, s.observation, coalesce(r.display_name, r.name), s.score, s.moves
            FROM state s LEFT JOIN {{{env}_rooms}} r ON r.room = s.room
            WHERE s.step IN (SELECT unnest($steps)) ORDER BY s.step""", episode_id, steps=steps).fetchall()
        lines = {}
        for step, observation, room, score, moves in states:
            status = [f"room: {room}", f"score: {score}"] + ([f"moves: {moves}"] if moves is not None else [])
            lines[step] = [f"observation: {one_line(observation)}", " | ".join(status)]
        return lines
    return lines_of
