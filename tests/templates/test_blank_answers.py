"""A text answer that is blank is no answer (CONVENTIONS.md, Answers): in detective's help menu the game
prints a screen of spaces, then nothing at all, to every command (issue 30, closing audit: the LLM-driven
agent typed `help`). qtc asked "What did the game reply to your action at step 2?" with the answer '',
which the QA format then refused. Compiled SQL and reference alike, on a hand-made episode."""

from __future__ import annotations

from support.ground_truth import differences, library, reference_candidates, sql_candidates, store_of
from support.strategies import jericho_episode


def test_a_blank_reply_is_no_answer():
    episode = jericho_episode([(("idle", "wait"), None, 0), (("idle", "help"), None, 0), (("idle", "about"), None, 0)])
    episode.steps[1]["obs_after"] = episode.steps[2]["obs_before"] = "\n" + " " * 80
    episode.steps[2]["obs_after"] = ""
    store = store_of([episode])
    for compiled in (c for c in library() if c.id in ("jericho.obs_after", "jericho.obs_before")):
        sql = sql_candidates(store.con, compiled, None)
        assert not differences(sql, reference_candidates(store, compiled, None)), compiled.id
        assert {c.params["t"] for c in sql if not c.adversarial} == {1, 2} if compiled.id.endswith("before") else {1}
