"""The templates of templates/jericho/effects.qtpl on real episodes: zork1, detective and sorcerer, the
start of each walkthrough with commands put in, some of which change nothing ("inventory", a word the
parser does not know; the session's `refusal_traces`, support/refusals.py), every candidate's answer
worked out again from the trace file alone, as a careful reader would: the header's `unchanged_steps`
and the parser's replies (CONVENTIONS.md, Changes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtc.dsl.library import load_library
from qtc.dsl.rejected import parser_refused
from qtc.runtime.trace.store import open_store

from support.handmade import candidates
from support.paths import TEMPLATES
from support.refusals import ROMS


def read_trace(path: Path) -> tuple[str, dict[int, tuple[bool, bool]]]:
    """Each step's (refused by the parser, changed the world), from the trace file alone."""
    header, *steps = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    unchanged = set(header["unchanged_steps"])
    return header["episode_id"], {s["step"]: (parser_refused(s["obs_after"]), s["step"] not in unchanged)
                                  for s in steps}


@pytest.fixture(scope="module")
def recorded(refusal_traces):
    traces = dict(read_trace(path) for path in refusal_traces.glob("*.jsonl"))
    con = open_store(refusal_traces)
    yield con, traces
    con.close()


def test_the_effect_templates_answer_what_the_traces_show(recorded):
    con, traces = recorded
    rows = {c.id: candidates(con, c) for c in load_library([TEMPLATES]).compiled
            if c.id in ("jericho.unchanged_steps", "jericho.unchanged_count", "jericho.command_changed_world")}
    assert all(rows.values()) and len({r["episode_id"] for r in rows["jericho.unchanged_steps"]}) == len(ROMS)

    def idle(r) -> list[int]:
        steps = traces[r["episode_id"]]
        return [t for t in range(r["p_L"], r["p_R"] + 1) if not steps[t][0] and not steps[t][1]]
    for r in rows["jericho.unchanged_steps"]:
        assert sorted(r["answer"]) == idle(r)
    for r in rows["jericho.unchanged_count"]:
        assert r["answer"] == len(idle(r))
    for r in rows["jericho.command_changed_world"]:
        assert r["answer"] == traces[r["episode_id"]][r["p_t"]][1]
    # "inventory" (steps 5 and 7) changed nothing in each of the three games, and the unknown word (step 6)
    # is refused, not idle.
    for episode, steps in traces.items():
        assert [steps[t] for t in (5, 6, 7)] == [(False, False), (True, False), (False, False)], episode
