"""Jericho's `steps.changed` (CONVENTIONS.md, Changes): recorded from the live interpreter on zork1
commands whose effect is known, read from the header's `unchanged_steps` by the store, null for a
trace recorded before it (and `qtc load` says so), and a malformed list refused with its field."""

from __future__ import annotations

import json
import re

import duckdb
import pytest
from support.strategies import jericho_episode, write_episodes

from qtc.cli import main
from qtc.errors import UserError
from qtc.runtime.record.agents import WalkthroughAgent
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.record.jericho import JerichoSession
from qtc.runtime.trace.store import load_traces, open_store

# zork1 from West of House: what each command did to the world (False: it changed nothing).
ZORK1_COMMANDS = [("open mailbox", True), ("open mailbox", False), ("take leaflet", True), ("take leaflet", False),
                  ("read leaflet", False), ("inventory", False), ("east", False), ("north", True),
                  ("frobnicate", False), ("drop leaflet", True)]


def test_the_recorder_asks_the_interpreter_after_each_command(tmp_path, zork1_rom):
    session = JerichoSession(zork1_rom, None, "commands", record_valid_actions=False)
    path = record_episode(session, WalkthroughAgent([command for command, _ in ZORK1_COMMANDS]), tmp_path, 100)
    with open_store(path) as con:
        rows = con.execute("SELECT action, changed, rejected FROM jericho_steps ORDER BY step").fetchall()
    assert [(action, changed) for action, changed, _ in rows] == ZORK1_COMMANDS
    # The parser refused "frobnicate": it changed nothing, and is the one rejected command.
    assert [action for action, _, rejected in rows if rejected] == ["frobnicate"]


# Looks, takes the key, goes north, takes the key it carries, waits with a score of 5, refuses a word.
STEPS = [(("idle", "look"), None, 0), (("take", "brass key"), None, 0), (("move", "north", 20), None, 0),
         (("take", "brass key"), None, 0), (("idle", "wait"), None, 5), (("refused", "frobnicate"), None, 0)]


def test_the_store_reads_the_header_list_as_one_flag_a_step(tmp_path):
    episode = jericho_episode(STEPS, room=10)
    assert episode.header["unchanged_steps"] == [1, 4, 6]
    write_episodes([episode], tmp_path)
    with open_store(tmp_path) as con:
        flags = con.execute("SELECT changed FROM jericho_steps ORDER BY step").fetchall()
    assert [changed for (changed,) in flags] == [False, True, True, False, True, False]


def test_a_step_whose_inventory_room_or_score_changed_is_never_unchanged(tmp_path):
    """karn step 315: the access card digested, and the interpreter's test saw nothing change."""
    episode = jericho_episode(STEPS, room=10)
    episode.header["unchanged_steps"] = [1, 2, 3, 4, 5, 6]  # the take, the move and the score listed too
    write_episodes([episode], tmp_path)
    with open_store(tmp_path) as con:
        flags = con.execute("SELECT changed FROM jericho_steps ORDER BY step").fetchall()
    assert [changed for (changed,) in flags] == [False, True, True, False, True, False]


def test_a_trace_recorded_before_the_flag_loads_with_it_null(tmp_path, capsys):
    episode = jericho_episode(STEPS, room=10)
    del episode.header["unchanged_steps"]
    (path,) = write_episodes([episode], tmp_path)
    with duckdb.connect() as con:
        assert load_traces(con, [tmp_path]).lacking == {"unchanged_steps": [path]}
        assert con.execute("SELECT count(*), count(changed) FROM jericho_steps").fetchone() == (6, 0)
    assert main(["load", str(tmp_path), "--db", str(tmp_path / "t.duckdb")]) == 0
    assert "lack which steps changed nothing in the world, so its steps.changed is null" in capsys.readouterr().out


@pytest.mark.parametrize("steps, message", [
    ([0], "field 'unchanged_steps[0]': 0 is not a step of the episode (1..6)"),
    ([2, 7], "field 'unchanged_steps[1]': 7 is not a step of the episode (1..6)"),
    ([3, 3], "field 'unchanged_steps[1]': 3 does not follow 3"),
    ([4, 1], "field 'unchanged_steps[1]': 1 does not follow 4"),
])
def test_a_malformed_list_is_refused_with_its_field(tmp_path, steps, message):
    (path,) = write_episodes([jericho_episode(STEPS, room=10)], tmp_path)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["unchanged_steps"] = steps
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with duckdb.connect() as con, pytest.raises(UserError, match=re.escape(f"{path.name}:1: {message}")):
        load_traces(con, [tmp_path])
