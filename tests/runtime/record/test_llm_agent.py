"""The llm agent asks through the one model client (runtime/chat.py): a live Crafter game played by a
real HTTP server on 127.0.0.1 speaking the OpenAI protocol, with a rate limit retried, a chatty reply
read and an unusable one recorded as a no-op."""

from __future__ import annotations

from support.openai_stub_server import ChatCompletionServer, Reply
from qtc.cli import main
from qtc.runtime.trace.format import read_episode


def test_qtc_play_with_the_llm_agent(tmp_path):
    replies = iter([
        Reply(status=429, headers={"Retry-After": "0"}),
        Reply('Sure! ```json\n{"action": "move_left", "reason": "explore to the west"}\n```'),
        Reply('{"action": "fly", "reason": "up"}'),
        Reply('{"action": "do", "reason": "hit what is in front"}'),
    ])
    with ChatCompletionServer(lambda body: next(replies)) as server:
        assert main(["play", "crafter", "--agent", "llm", "--base-url", server.url, "--model", "stub",
                     "--max-steps", "3", "--out", str(tmp_path), "--quiet"]) == 0
    steps = read_episode(tmp_path / "crafter-llm-s0.jsonl").steps
    assert [(s["action"], s["reason"]) for s in steps] == [
        ("move_left", "explore to the west"), ("noop", 'unusable reply: {"action": "fly", "reason": "up"}'),
        ("do", "hit what is in front")]
    assert len(server.requests) == 4 and all(r["model"] == "stub" and r["temperature"] == 0 for r in server.requests)
    # Each request holds the recent history: the states shown and the replies given.
    assert [m["role"] for m in server.requests[-1]["messages"]] == ["system", "user", "assistant", "user",
                                                                   "assistant", "user"]
