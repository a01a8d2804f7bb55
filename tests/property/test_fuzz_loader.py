"""The trace loader under fuzzing: a corrupted trace file (fuzzing.corrupted, which the deep run uses
too) never loads silently wrong. Either loading fails with a UserError that names the file and a line,
or what was loaded is exactly what the file says, read back line by line with plain json. And any text
a step may hold round-trips.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import duckdb
from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples
from support.fuzzing import STEP_COLUMNS, corrupted, load_trace, loaded_steps, round_trip
from support.strategies import jericho_episodes, write_episodes

from qtc.dsl import schema
from qtc.errors import UserError
from qtc.runtime.trace.store import load_traces



def _as_written(path: Path) -> tuple[dict, list[dict]]:
    lines = path.read_text(encoding="utf-8").removesuffix("\n").split("\n")  # as qtc reads: at "\n" only
    return json.loads(lines[0]), [{c: json.loads(line)[c] for c in STEP_COLUMNS} for line in lines[1:]]


@examples(30)
@given(data=st.data())
def test_a_corrupted_trace_is_refused_with_its_place_or_loads_as_written(data):
    episode = data.draw(jericho_episodes(max_steps=6), label="episode")
    with tempfile.TemporaryDirectory() as directory:
        (path,) = write_episodes([episode], Path(directory))
        kind, corrupted_bytes = corrupted(path.read_bytes(), data.draw(st.randoms(use_true_random=False)))
        data.draw(st.just(kind), label="corruption")
        path.write_bytes(corrupted_bytes)
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
