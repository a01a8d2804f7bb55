"""A trace whose lines are each well formed but disagree is refused at load with its file, line and field
(runtime/trace/consistency.py), instead of loading and then failing `qtc generate` inside a template.
Each case is one the deep fuzz run found (docs/testing.md)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from support.strategies import seeded_episode, write_episodes

from qtc.errors import UserError
from qtc.runtime.trace.store import load_traces


def _trace(tmp_path: Path, env: str) -> tuple[Path, list[dict]]:
    (path,) = write_episodes([seeded_episode(env, 1, 12)], tmp_path)
    return path, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _refusal(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    with pytest.raises(UserError) as error:
        load_traces(duckdb.connect(), [path])
    return str(error.value)


def test_the_drawn_episodes_are_consistent(tmp_path):
    for env in ("jericho", "crafter"):
        path, _ = _trace(tmp_path / env, env)
        load_traces(duckdb.connect(), [path])


def test_a_room_listed_twice_is_refused(tmp_path):
    path, records = _trace(tmp_path, "jericho")
    records[0]["rooms"].append(dict(records[0]["rooms"][0], display_name="Elsewhere"))
    last = len(records[0]["rooms"]) - 1
    assert _refusal(path, records) == (f"{path}:1: field 'rooms[{last}].room': room {records[0]['rooms'][0]['room']} "
                                       "is listed again (first as rooms[0])")


def test_a_map_with_rows_of_two_lengths_is_refused(tmp_path):
    path, records = _trace(tmp_path, "crafter")
    records[0]["map_init"]["rows"][3].append(1)
    assert _refusal(path, records) == f"{path}:1: field 'map_init.rows[3]': 9 cells, where row 0 has 8"


def test_a_start_off_the_map_is_refused(tmp_path):
    path, records = _trace(tmp_path, "crafter")
    records[0]["initial"]["y"] = 7
    assert _refusal(path, records) == f"{path}:1: field 'initial.y': position 7 is off the map (0 to 6)"


def test_a_position_off_the_map_is_refused(tmp_path):
    path, records = _trace(tmp_path, "crafter")
    records[4]["x_after"] = -1
    assert _refusal(path, records) == f"{path}:5: field 'x_after': position -1 is off the map (0 to 7)"


def test_a_changed_cell_off_the_map_is_refused(tmp_path):
    path, records = _trace(tmp_path, "crafter")
    records[6]["map_changes"].append({"x": 8, "y": 0, "before": "grass", "after": "sand"})
    k = len(records[6]["map_changes"]) - 1
    assert _refusal(path, records) == f"{path}:7: field 'map_changes[{k}]': cell (8, 0) is off the map (8 x 7)"


@pytest.mark.parametrize("line", [1, 3])
def test_a_material_seen_off_the_map_is_refused(tmp_path, line):
    """The view before step 1 (the header's) or after step 2 (line 3) showing a material in its last
    column, off the map's right edge, where a view holds null (the fuzz run's case: a view row given one
    cell more, which moved a material there)."""
    path, records = _trace(tmp_path, "crafter")
    view = records[0]["initial"]["view"] if line == 1 else records[line - 1]["view"]
    i = len(view["rows"][0]) - 1
    assert view["x"] + i >= 8 and view["rows"][0][i] is None
    view["rows"][0][i] = "grass"
    assert _refusal(path, records) == (
        f"{path}:{line}: field '{'initial.' if line == 1 else ''}view.rows[0][{i}]': a material seen at "
        f"({view['x'] + i}, {view['y']}) is off the map (8 x 7); cells off the map are null")
