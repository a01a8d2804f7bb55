"""The event and rejected-command templates on real episodes (Crafter's scripted agent until it dies;
zork1, detective and sorcerer, walkthrough prefixes with refused commands put in), every candidate's answer worked out again from the trace files
themselves, read as a careful reader would: the inventories, rooms, scores, achievements, stats and
deaths of each step (CONVENTIONS.md, Events; Rejected commands)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qtc.dsl.conventions import ORDINALS, command
from qtc.dsl.library import load_library
from qtc.dsl.rejected import parser_refused
from qtc.runtime.trace.store import open_store

from support.handmade import candidates
from support.paths import TEMPLATES


Events = dict[tuple[str, str | None], list[int]]


def trace_events(path: Path, sightings: dict[str, dict[str, int]]) -> tuple[str, Events, dict[int, bool]]:
    """An episode's events by (kind, subject), each the steps it happened at, and the steps whose command
    the game refused or that changed nothing, read from the trace file alone (two kinds need more than
    the step lines: Crafter's item counts by their change, Jericho's rooms by their display names), but
    for Jericho's first sightings, which rest on the object tree's sightings (`sightings`: each thing's
    first step, by episode; the rule is tested on its own in tests/runtime/trace)."""
    header, *steps = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    events: dict[tuple[str, str | None], set[int]] = {}

    def add(kind, subject, step):
        events.setdefault((kind, subject), set()).add(step)
    if header["death_step"] is not None:
        add("death", None, header["death_step"])
    if header["env"] == "jericho":
        names = {room["room"]: room["display_name"] for room in header["rooms"]}
        for s in steps:
            add("action", command(s["action"]), s["step"])
            for item in set(s["inventory_after"]) - set(s["inventory_before"]):
                add("item_gained", item, s["step"])
            for item in set(s["inventory_before"]) - set(s["inventory_after"]):
                add("item_lost", item, s["step"])
            if s["room_before"] != s["room_after"]:
                add("room_entered", names[s["room_after"]], s["step"])
                add("room_left", names[s["room_before"]], s["step"])
            if s["reward"]:
                add("score_changed", None, s["step"])
                add("score_changed_by", str(s["reward"]), s["step"])
        for item, step in sightings.get(header["episode_id"], {}).items():
            if step >= 1:
                add("first_seen", item, step)
        rejected = {s["step"]: parser_refused(s["obs_after"]) for s in steps}
    else:
        inventory, sleeping, stood = header["initial"]["inventory"], False, {header["initial"]["terrain"]}
        seen = shown(header["initial"])
        for s in steps:
            add("action", s["action"], s["step"])
            for thing in sorted(shown(s) - seen):
                add("first_seen", thing, s["step"])
            seen |= shown(s)
            for achievement in s["achievements"]:
                add("achievement", achievement, s["step"])
            for item, count in s["inventory"].items():
                if item in ("health", "food", "drink", "energy"):
                    if count < 3 <= inventory[item]:
                        add("stat_low", item, s["step"])
                elif count != inventory[item]:
                    add("item_gained" if count > inventory[item] else "item_lost", item, s["step"])
            for damage in s["damage"]:
                add("damage", damage["cause"], s["step"])
            if s["sleeping"] != sleeping:
                add("sleep" if s["sleeping"] else "wake", None, s["step"])
            if s["terrain_after"] not in stood:
                stood.add(s["terrain_after"])
                add("terrain_first", s["terrain_after"], s["step"])
            inventory, sleeping = s["inventory"], s["sleeping"]
        rejected = {}  # Crafter's rule is checked against the live game in tests/runtime/trace/test_events.py
    return header["episode_id"], {key: sorted(steps) for key, steps in events.items()}, rejected


def shown(state: dict) -> set[str]:
    """The materials and creatures a Crafter view shows (a step line, or the header's initial state)."""
    return ({m for row in state["view"]["rows"] for m in row if m is not None}
            | {c["creature"] for c in state["creatures"]})


@pytest.fixture(scope="module")
def recorded(crafter_trace_dir, refusal_traces):
    con = open_store(crafter_trace_dir, refusal_traces)
    sightings: dict[str, dict[str, int]] = {}
    firsts = con.execute("SELECT episode_id, item, min(step) FROM jericho_sightings GROUP BY ALL").fetchall()
    for episode, item, step in firsts:
        sightings.setdefault(episode, {})[item] = step
    read = [trace_events(path, sightings) for folder in (crafter_trace_dir, refusal_traces)
            for path in folder.glob("*.jsonl")]
    yield con, {episode: (events, rejected) for episode, events, rejected in read}
    con.close()


def library_rows(con, prefix: str) -> dict[str, list[dict]]:
    return {c.id: candidates(con, c) for c in load_library([TEMPLATES]).compiled if c.id.startswith(prefix)}


def test_event_templates_answer_what_the_traces_show(recorded):
    con, episodes = recorded
    produced = library_rows(con, "events.")
    for template, rows in produced.items():
        assert any(not r["adversarial"] for r in rows), template
        for r in rows:
            events, _ = episodes[r["episode_id"]]
            e = (r["p_kind"], r.get("p_subject"))
            if r["adversarial"]:
                premise = (r.get("p_anchor", e[0]), r.get("p_anchor_subject", e[1])) if "p_anchor" in r else e
                if "p_last_kind" in r:
                    premise = (r["p_last_kind"], r["p_last_subject"])
                assert premise not in events, (template, r)
                continue
            if "p_last_kind" in r:  # between the first E1 and the first E2, both steps left out
                opened = events[(r["p_first_kind"], r["p_first_subject"])][0]
                closed = events[(r["p_last_kind"], r["p_last_subject"])][0]
                if template == "events.count_between":
                    counted = events[e]
                    assert counted[0] < closed and counted[-1] > opened, (template, r)
                else:
                    counted = {step for (kind, _), steps in events.items() if kind == r["p_kind"] for step in steps}
                assert r["answer"] == sum(opened < step < closed for step in counted), (template, r)
                continue
            if template in ("events.event_kth", "events.event_kth_plain"):
                k = ORDINALS[r["p_k"]] if isinstance(r["p_k"], str) else r["p_k"]
                times = events[e]
                expected = times[k - 1] if 0 < k <= len(times) else times[k] if -len(times) <= k < 0 else None
            elif template == "events.count_after_kth":
                k = ORDINALS[r["p_k"]] if isinstance(r["p_k"], str) else r["p_k"]
                anchors = events[(r["p_anchor"], r["p_anchor_subject"])]
                anchored = anchors[k - 1] if k > 0 else anchors[k]
                ended = anchored + r["p_offset"]
                assert ended <= max(step for steps in events.values() for step in steps), (template, r)
                expected = sum(anchored < step <= ended for step in events[e])
            elif template == "events.events_before_kth":
                k = ORDINALS[r["p_k"]] if isinstance(r["p_k"], str) else r["p_k"]
                anchors = events[(r["p_anchor"], r["p_anchor_subject"])]
                anchored = anchors[k - 1] if k > 0 else anchors[k]
                expected = sum(step < anchored for step in events[e])
            elif template in ("events.events_before_first", "events.events_before_plain"):
                anchored = events[(r["p_anchor"], r.get("p_anchor_subject"))][0]
                expected = sum(step < anchored for step in events[e])
            else:
                expected = events[e][0] - events[(r["p_first_kind"], r["p_first_subject"])][0]
            assert r["answer"] == expected, (template, r)


def test_rejected_command_templates_answer_what_the_replies_show(recorded):
    con, episodes = recorded
    rows = library_rows(con, "jericho.")
    for r in rows["jericho.command_understood"]:
        assert r["answer"] == (not episodes[r["episode_id"]][1][r["p_t"]])
    for r in rows["jericho.rejected_count"]:
        refused = episodes[r["episode_id"]][1]
        assert r["answer"] == sum(refused[t] for t in range(r["p_L"], r["p_R"] + 1))
    for r in rows["jericho.rejected_steps"]:
        refused = episodes[r["episode_id"]][1]
        assert sorted(r["answer"]) == [t for t in range(r["p_L"], r["p_R"] + 1) if refused[t]]
    assert all(rows[t] for t in ("jericho.command_understood", "jericho.rejected_count", "jericho.rejected_steps"))
    assert any(r["answer"] is False for r in rows["jericho.command_understood"])
