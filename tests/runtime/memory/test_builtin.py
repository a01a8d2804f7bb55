"""The built-in providers: none, last:N and full ask what --context shows, bm25 finds the step a question
is about, embed embeds each text once across runs; all through qtc answer and the stub server."""

from __future__ import annotations

import re

import pytest

from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.memory.builtin import BM25Provider
from qtc.runtime.memory.feed import EpisodeFeed
from support.answering import answer, crafter_questions, policy_for, read_answers_file
from support.handmade import make_db
from support.handmade_qa import write_jsonl
from support.openai_stub_server import ChatCompletionServer

HORIZON = 12


@pytest.fixture
def qa(tmp_path, trace_db):
    records = crafter_questions(trace_db, 4, horizon=HORIZON)
    return records, write_jsonl(tmp_path / "qa.jsonl", records)


def shown_steps(request: dict) -> set[int]:
    return set(map(int, re.findall(r"^Step (\d+)$", request["messages"][-1]["content"], re.MULTILINE)))


@pytest.mark.parametrize("mode", ["full", "last:5", "none"])
def test_none_last_and_full_ask_what_the_context_modes_show(tmp_path, qa, crafter_trace_dir, mode):
    records, path = qa
    runs = {}
    for flag in ("--context", "--memory"):
        out = tmp_path / f"{flag.strip('-')}.jsonl"
        with ChatCompletionServer(policy_for(records)) as server:
            assert answer(path, [crafter_trace_dir], server.url, out, flag, mode) == 0
        runs[flag] = ([r["messages"] for r in server.requests], read_answers_file(out))
    (context_prompts, context_answers), (memory_prompts, memory_answers) = runs["--context"], runs["--memory"]
    assert memory_prompts == context_prompts
    assert [a["prediction"] for a in memory_answers] == [a["prediction"] for a in context_answers]
    assert {a["context"] for a in memory_answers} == {f"memory:{mode}"}
    expected = {"full": list(range(0, HORIZON + 1)), "last:5": list(range(HORIZON - 4, HORIZON + 1)), "none": []}
    assert all(a["retrieved_steps"] == expected[mode] for a in memory_answers)
    assert all(a["retrieved_steps"] is None for a in context_answers)


def test_bm25_finds_the_step_a_question_is_about_in_a_handmade_episode():
    con = make_db()
    feed = EpisodeFeed(con, EpisodeRows(con), "j1", "jericho", "tiny")
    provider = BM25Provider(k="2")
    provider.reset(feed.episode)
    for step in feed.steps(0, 6):
        provider.observe(step)
    # Step 4 took the lamp "to help in the dark forest"; step 1 took something else.
    assert provider.retrieve({"question": "Why did you take the lamp?"}) == [4, 1]
    assert provider.retrieve({"question": "Where did you drop the leaflet?"})[0] == 6
    assert provider.retrieve({"question": "xyzzy"}) == []  # no word in common: nothing


def test_bm25_shows_the_model_only_the_steps_it_retrieved(tmp_path, qa, crafter_trace_dir):
    records, path = qa
    out = tmp_path / "bm25.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(path, [crafter_trace_dir], server.url, out, "--memory", "bm25", "--memory-option", "k=3") == 0
    answers = read_answers_file(out)
    assert [a["prediction"] for a in answers] == [r["answer"] for r in records]
    for a in answers:
        assert 1 <= len(a["retrieved_steps"]) <= 3 and all(0 <= s <= HORIZON for s in a["retrieved_steps"])
        assert a["context"] == "memory:bm25 k=3" and a["usage"]["prompt_tokens"] > 0
    assert sorted(map(shown_steps, server.requests), key=sorted) == sorted(
        ({s for s in a["retrieved_steps"] if s} for a in answers), key=sorted)


def test_embed_embeds_each_step_once_across_runs(tmp_path, qa, crafter_trace_dir):
    records, path = qa
    cache = tmp_path / "cache" / "embeddings.duckdb"
    retrieved = []
    for run in (1, 2):
        out = tmp_path / f"embed-{run}.jsonl"
        with ChatCompletionServer(policy_for(records)) as server:
            assert answer(path, [crafter_trace_dir], server.url, out, "--memory", "embed", "--memory-option",
                          "model=stub-embed", "--memory-option", f"cache={cache}", "--memory-option", "k=4") == 0
        if run == 1:
            texts = server.embedded
            assert len(texts) == len(set(texts)) == HORIZON + 1 + len(records)  # the steps 0..12, the questions
            assert sum(t.startswith(("Step ", "Before step 1")) for t in texts) == HORIZON + 1
        else:
            assert server.embedded == []  # every text came from the cache
        answers = read_answers_file(out)
        assert [a["prediction"] for a in answers] == [r["answer"] for r in records]
        retrieved.append([a["retrieved_steps"] for a in answers])
    assert retrieved[0] == retrieved[1] and all(len(steps) == 4 for steps in retrieved[0])
