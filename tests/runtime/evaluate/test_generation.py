"""Control of generation in qtc answer against a real HTTP server on 127.0.0.1: --max-tokens, --json-mode
(the answers' JSON schema as response_format), --max-connections (concurrent requests, the answers file in
batch order), a context longer than the model's window recorded as the question's error, --dry-run and
--log-requests."""

from __future__ import annotations

import json

from support.answering import answer, asked_in, crafter_questions, policy_for, read_answers_file
from support.handmade_qa import write_jsonl
from support.openai_stub_server import CONTEXT_TOO_LONG, ChatCompletionServer


def test_json_mode_and_max_tokens_reach_the_server(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 3)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    sent = {}
    for mode in ("schema", "object", "off"):
        out = tmp_path / f"{mode}.jsonl"
        with ChatCompletionServer(policy_for(records)) as server:
            assert answer(qa, [crafter_trace_dir], server.url, out, "--json-mode", mode, "--max-tokens", "99") == 0
        (body,) = server.requests
        sent[mode] = body.get("response_format")
        assert body["max_tokens"] == 99
        assert [a["prediction"] for a in read_answers_file(out)] == [r["answer"] for r in records]
    schema = sent["schema"]["json_schema"]["schema"]
    assert sent["schema"]["type"] == "json_schema" and schema["required"] == ["answers"]
    assert schema["properties"]["answers"]["minItems"] == schema["properties"]["answers"]["maxItems"] == 3
    assert sent["object"] == {"type": "json_object"} and sent["off"] is None


def test_a_bad_json_mode_or_count_is_one_line(tmp_path, crafter_db, crafter_trace_dir, capsys):
    qa = write_jsonl(tmp_path / "qa.jsonl", crafter_questions(crafter_db, 1))
    for argv, message in ((["--json-mode", "xml"], "--json-mode 'xml': expected one of schema, object, off"),
                          (["--max-connections", "0"], "--max-connections must be positive, got 0"),
                          (["--max-tokens", "-5"], "--max-tokens must be positive, got -5")):
        assert answer(qa, [crafter_trace_dir], "http://127.0.0.1:9/v1", tmp_path / "a.jsonl", *argv) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err


def test_concurrent_requests_keep_the_batch_order(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 8)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, delay=0.5)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1", "--max-connections", "4") == 0
    assert server.busy_peak > 1  # requests were under way at once
    assert [a["id"] for a in read_answers_file(out)] == [r["id"] for r in records]  # yet in batch order
    assert [a["prediction"] for a in read_answers_file(out)] == [r["answer"] for r in records]


def test_a_context_longer_than_the_window_is_the_question_s_error(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 3)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, {"q2": "too_long"})) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    assert len(server.requests) == 3  # the run went on
    answers = {a["id"]: a for a in read_answers_file(out)}
    assert answers["q2"]["prediction"] == "" and answers["q2"]["error"].startswith("context too long: about ")
    assert CONTEXT_TOO_LONG in answers["q2"]["error"]  # the server's own words: its count may exceed ours
    assert answers["q1"]["error"] is None and answers["q3"]["prediction"] == records[2]["answer"]
    captured = capsys.readouterr()
    assert "the longest prompt is about" in captured.out
    assert "1 question(s) had a prompt longer than the model's context window" in captured.err


def test_usage_counts_every_request(tmp_path, crafter_db, crafter_trace_dir, capsys):
    """A batch whose reply answered nothing is counted, as are the requests that asked again."""
    records = crafter_questions(crafter_db, 3)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, {"q1": "malformed"})) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
    assert len(server.requests) == 4
    assert "in 4 request(s)" in capsys.readouterr().out


def test_dry_run_prints_the_first_prompt_and_sends_nothing(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--dry-run", "--context", "last:3") == 0
    assert server.requests == [] and not out.exists()
    printed = capsys.readouterr().out
    assert "--- system ---" in printed and "--- user ---" in printed and records[1]["question"] in printed
    assert "tokens; at most 448 in reply; nothing was sent" in printed  # 64 + 192 x 2


def test_log_requests_keeps_prompts_and_raw_replies(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    log = tmp_path / "requests.jsonl"
    with ChatCompletionServer(policy_for(records, {"q2": "too_long"})) as server:
        assert answer(qa, [crafter_trace_dir], server.url, tmp_path / "a.jsonl", "--batch", "1",
                      "--log-requests", str(log)) == 0
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [asked_in({"messages": entry["messages"]}) for entry in logged] == [[r["question"]] for r in records]
    assert json.loads(logged[0]["reply"])["answers"][0]["answer"] == records[0]["answer"]
    assert logged[1]["reply"] is None and CONTEXT_TOO_LONG in logged[1]["error"]
