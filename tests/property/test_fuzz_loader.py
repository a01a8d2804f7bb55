"""The trace loader under fuzzing: a corrupted trace file never loads silently wrong. Either loading
fails with a UserError that names the file and a line, or what was loaded is exactly what the file
says, read back line by line with plain json. And any text a step may hold round-trips.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import duckdb
from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples
from support.fuzzing import STEP_COLUMNS, load_trace, loaded_steps, round_trip
from support.strategies import LIST_EDITS, edited, jericho_episode, jericho_episodes, write_episodes

from qtc.dsl import schema
from qtc.errors import UserError
from qtc.runtime.trace.store import load_traces



@st.composite
def corruptions(draw, text: str) -> str:
    """The text of a trace file with one corruption: bytes cut, lines dropped, repeated or swapped,
    a value of a field replaced by another JSON value, a field removed, or a character replaced."""
    lines = text.splitlines()
    kind = draw(st.sampled_from(["cut", *LIST_EDITS, "value", "remove", "character"]))
    i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
    if kind == "cut":
        return text[:draw(st.integers(0, len(text) - 1))]
    if kind in LIST_EDITS:
        lines = edited(lines, kind, i, j)
    elif kind in ("value", "remove"):
        record = json.loads(lines[i])
        field = draw(st.sampled_from(sorted(record)))
        if kind == "remove":
            del record[field]
        else:
            record[field] = draw(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=5)
                                 | st.lists(st.integers(0, 3), max_size=2))
        lines[i] = json.dumps(record)
    else:
        position = draw(st.integers(0, len(lines[i]) - 1)) if lines[i] else 0
        lines[i] = lines[i][:position] + draw(st.characters()) + lines[i][position + 1:]
    return "\n".join(lines) + "\n"


def _as_written(path: Path) -> tuple[dict, list[dict]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [{c: json.loads(line)[c] for c in STEP_COLUMNS} for line in lines[1:]]


@examples(30)
@given(data=st.data())
def test_a_corrupted_trace_is_refused_with_its_place_or_loads_as_written(data):
    episode = data.draw(jericho_episodes(max_steps=6), label="episode")
    with tempfile.TemporaryDirectory() as directory:
        (path,) = write_episodes([episode], Path(directory))
        path.write_text(data.draw(corruptions(path.read_text(encoding="utf-8")), label="corrupted"),
                        encoding="utf-8")
        try:
            con = load_trace(path)
        except UserError as error:
            assert str(error).startswith(f"{path}:") or str(error).startswith(str(path)), error
            return
        header, steps = _as_written(path)
        assert con.execute("SELECT n_steps FROM episodes").fetchall()[0][0] == header["n_steps"] == len(steps)
        assert loaded_steps(con) == steps


@examples(20)
@given(st.text(alphabet=st.characters(codec="utf-8")))
def test_any_reason_round_trips(reason):
    """Whatever text the agent gives as its reason is loaded back unchanged."""
    assert round_trip(reason) == reason
