"""The context a model answers from (runtime/evaluate/context.py): the modes (budget:B within its budget),
nothing after the horizon, the state before and after each step, and only what the agent could observe."""

from __future__ import annotations

import re

import pytest

from qtc.dsl import crafter_data
from qtc.errors import InvalidOption
from qtc.runtime.evaluate.context import ContextMode, LogSizes, Shown, estimated_tokens, render_context, shown_steps
from qtc.runtime.evaluate.crafter import CREATURE_SYMBOLS, MATERIAL_SYMBOLS
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.trace.store import open_store

CRAFTER = "crafter-scripted-s0"
ZORK = "zork1-walkthrough-s12"


def context(con, episode_id: str, env: str, mode: str, horizon: int, evidence=()) -> str:
    return render_context(EpisodeRows(con), episode_id, env, shown_steps(ContextMode.parse(mode), horizon, list(evidence)))


def blocks(text: str) -> dict[str, list[str]]:
    """The blocks of a context by their heading ('Step 3', 'Before step 5')."""
    result, heading = {}, None
    for line in text.splitlines():
        if not line.startswith(" "):
            heading = line
            result[heading] = []
        else:
            result[heading].append(line.strip())
    return result


def test_context_modes_choose_the_steps(crafter_db):
    full = blocks(context(crafter_db, CRAFTER, "crafter", "full", 40))
    assert [h for h in full if h.startswith(("Step", "Before"))] == \
        ["Before step 1 (the start)"] + [f"Step {t}" for t in range(1, 41)]
    last = blocks(context(crafter_db, CRAFTER, "crafter", "last:5", 40))
    assert [h for h in last if h.startswith(("Step", "Before"))] == \
        ["Before step 36"] + [f"Step {t}" for t in range(36, 41)]
    longer = blocks(context(crafter_db, CRAFTER, "crafter", "last:100", 40))
    assert "Before step 1 (the start)" in longer and "Step 40" in longer and "Step 41" not in longer
    evidence = blocks(context(crafter_db, CRAFTER, "crafter", "evidence", 40, [3, 4, 20]))
    assert [h for h in evidence if h.startswith(("Step", "Before"))] == \
        ["Before step 3", "Step 3", "Step 4", "Before step 20", "Step 20"]
    start_only = blocks(context(crafter_db, CRAFTER, "crafter", "evidence", 40, [0]))
    assert [h for h in start_only if h.startswith(("Step", "Before"))] == ["Before step 1 (the start)"]
    assert "(no steps are shown)" in context(crafter_db, CRAFTER, "crafter", "evidence", 40, [])


def test_nothing_after_the_horizon_is_shown(crafter_db):
    for mode in ("full", "last:10", "evidence"):
        text = context(crafter_db, CRAFTER, "crafter", mode, 25, [24, 25, 26, 150])
        steps = [int(n) for n in re.findall(r"^(?:Step|Before step) (\d+)", text, re.MULTILINE)]
        assert max(steps) == 25 or (mode == "evidence" and max(steps) == 25)
        assert "Step 26" not in text and "Before step 26" not in text


def test_crafter_states_hold_to_before_and_after(crafter_db):
    """The state shown before step t is the state after step t-1 (the row of step t-1 in the state tables,
    terrain_before of step t); the state in step t's block is the one its action produced."""
    text = blocks(context(crafter_db, CRAFTER, "crafter", "evidence", 200, [120]))
    before, after = text["Before step 120"], text["Step 120"]
    (terrain_before, facing_before, terrain_after, action, reason), = crafter_db.execute(
        "SELECT terrain_before, facing_before, terrain_after, action, reason FROM crafter_steps "
        "WHERE episode_id = ? AND step = 120", [CRAFTER]).fetchall()
    assert before[0].startswith(f"standing on {terrain_before}, facing {facing_before}")
    assert after[0] == f"action: {action}" and after[1] == f"reason: {reason}"
    assert after[2].startswith(f"standing on {terrain_after}")
    for lines, step in ((before, 119), (after, 120)):
        held = dict(crafter_db.execute("SELECT item, count FROM crafter_inventory WHERE episode_id = ? AND step = ?",
                                       [CRAFTER, step]).fetchall())
        stats = ", ".join(f"{s} {held[s]}" for s in crafter_data.STATS)
        assert any(line.startswith(stats + " | inventory: ") for line in lines)
        for item in crafter_data.ITEMS:
            assert (f"{item} {held[item]}" in " ".join(lines)) == (held[item] > 0)


def test_crafter_view_is_a_grid_around_the_player_and_no_hidden_state(crafter_db):
    text = context(crafter_db, CRAFTER, "crafter", "full", 200)
    step = blocks(text)["Step 60"]
    grid = step[step.index("view:") + 1:step.index("view:") + 8]
    assert len(grid) == 7 and all(len(row) == 9 for row in grid)
    assert grid[3][4] == "@" and sum(row.count("@") for row in grid) == 1
    symbols = {**MATERIAL_SYMBOLS, **CREATURE_SYMBOLS}
    assert set(MATERIAL_SYMBOLS) == set(crafter_data.MATERIALS)
    assert set(CREATURE_SYMBOLS) == set(crafter_data.CREATURES)
    assert len(set(symbols.values())) == len(symbols) and "@" not in symbols.values()
    # Only observable fields: no coordinates, rewards, achievements or damage causes.
    grid_symbols = set(symbols.values()) | {"@", "="}
    first_words = {line.split()[0].rstrip(":") for b in blocks(text).values() for line in b
                   if not (len(line) == 9 and set(line) <= grid_symbols)}
    assert first_words == {"action", "reason", "standing", "health", "view", "creatures"}
    assert not re.search(r"\b(x|y|reward|achievement|damage)\b\s*[:=]", text)
    creatures = re.findall(r"creatures in view: (.*)", text)
    assert any(c != "none" for c in creatures)
    assert all(c == "none" or re.fullmatch(r"([a-z]+ (\d+ steps? (left|right|up|down)( and )?)+(; )?)+", c)
               for c in creatures)


def test_jericho_context_shows_what_the_game_printed(jericho_trace_dir):
    con = open_store(jericho_trace_dir)
    rows = con.execute("SELECT s.step, s.action, s.obs_before, s.obs_after, rb.display_name, ra.display_name, "
                       "s.score, s.moves FROM jericho_steps s "
                       "JOIN jericho_rooms rb ON rb.episode_id = s.episode_id AND rb.room = s.room_before "
                       "JOIN jericho_rooms ra ON ra.episode_id = s.episode_id AND ra.room = s.room_after "
                       "ORDER BY s.step").fetchall()
    full = blocks(context(con, ZORK, "jericho", "full", 30))
    for step, action, obs_before, obs_after, room_before, room_after, score, moves in rows:
        evidence = blocks(context(con, ZORK, "jericho", "evidence", 30, [step]))
        heading = f"Before step {step}" + (" (the start)" if step == 1 else "")
        # The off-by-one pitfall: before step t is obs_before of t; step t shows what its action produced.
        assert evidence[heading][0] == "observation: " + " ".join(obs_before.split())
        assert evidence[heading][1].startswith(f"room: {room_before} | score: ")
        assert full[f"Step {step}"] == [f"action: {action}", "observation: " + " ".join(obs_after.split()),
                                        f"room: {room_after} | score: {score} | moves: {moves}"]
    valid = con.execute("SELECT valid_actions FROM jericho_steps WHERE step = 1").fetchone()[0]
    text = context(con, ZORK, "jericho", "full", 30)
    assert valid and "valid" not in text and "inventory:" not in text


@pytest.mark.parametrize("text", ["last", "last:", "last:x", "last:0", "last:-3", "everything", "Full", "budget",
                                  "budget:0", "budget:1.5", "none:3"])
def test_bad_context_modes_are_refused(text):
    with pytest.raises(InvalidOption, match="expected full, evidence, none, last:N or budget:B") as refused:
        ContextMode.parse(text)
    assert refused.value.field == "context"


def budget_context(con, episode_id: str, env: str, budget: int, horizon: int, evidence=()) -> tuple[str, list[str]]:
    """The budget:B log of a question and its block headings, in order."""
    n_steps = con.execute("SELECT n_steps FROM episodes WHERE episode_id = ?", [episode_id]).fetchone()[0]
    sizes = LogSizes.of_episode(EpisodeRows(con), episode_id, env, n_steps)
    text = render_context(EpisodeRows(con), episode_id, env,
                          shown_steps(ContextMode.parse(f"budget:{budget}"), horizon, list(evidence), sizes))
    return text, [h for h in blocks(text) if h.startswith(("Step", "Before"))]


@pytest.mark.parametrize("budget", [150, 400, 1000, 3000])
def test_budget_keeps_the_evidence_then_the_latest_steps_within_the_budget(crafter_db, budget):
    evidence = [5, 30]
    text, headings = budget_context(crafter_db, CRAFTER, "crafter", budget, 120, evidence)
    assert estimated_tokens(len(text)) <= budget
    steps = [int(h.split()[-1]) for h in headings if h.startswith("Step")]
    assert steps == sorted(steps)  # shown in step order
    recent = [s for s in steps if s not in evidence]
    # The latest steps, one run ending at the horizon, as many as fit beside the evidence: one more passes B.
    assert recent == list(range(120 - len(recent) + 1, 121))
    following = next(s for s in range(120 - len(recent), 0, -1) if s not in steps)
    if set(evidence) <= set(steps):
        longer = render_context(EpisodeRows(crafter_db), CRAFTER, "crafter", Shown.of_steps([*evidence, *recent, following]))
        assert estimated_tokens(len(longer)) > budget
    if budget >= 400:
        assert {"Before step 5", "Step 5", "Before step 30", "Step 30"} <= set(headings)


def test_budget_never_passes_the_horizon_and_can_show_everything(crafter_db):
    text, headings = budget_context(crafter_db, CRAFTER, "crafter", 10**6, 25, [3, 24, 26, 150])
    assert text == context(crafter_db, CRAFTER, "crafter", "full", 25)
    assert headings[-1] == "Step 25" and "Step 26" not in text


def test_budget_sizes_match_the_rendered_log(jericho_trace_dir):
    """The choice is made from the blocks' sizes, not from rendered texts: with observations of every length,
    the log it chooses fits, and one step more would not."""
    con = open_store(jericho_trace_dir)
    for budget in range(60, 1500, 97):
        for evidence in ([], [0, 4], [12]):
            text, headings = budget_context(con, ZORK, "jericho", budget, 20, evidence)
            assert estimated_tokens(len(text)) <= budget and "Step 21" not in text
            steps = [int(h.split()[-1]) for h in headings if h.startswith("Step")]
            recent = [s for s in steps if s not in evidence]
            following = next((s for s in range(min(recent, default=21) - 1, 0, -1) if s not in steps), None)
            if following and set(evidence) - {0} <= set(steps):
                one_more = Shown.of_steps([*evidence, *recent, following])
                assert estimated_tokens(len(render_context(EpisodeRows(con), ZORK, "jericho", one_more))) > budget


def test_none_shows_no_steps_and_a_budget_below_the_legend_is_refused(crafter_db):
    assert shown_steps(ContextMode.parse("none"), 40, [3]) == Shown.of_steps([])
    with pytest.raises(InvalidOption, match="budget:10: an empty crafter log already takes about"):
        budget_context(crafter_db, CRAFTER, "crafter", 10, 40)
    assert str(ContextMode.parse("budget:500")) == "budget:500" and str(ContextMode.parse("none")) == "none"
