"""Every reply a server can send is an answer or a recorded per-question error, and the run goes on:
broken replies served by a real HTTP server on 127.0.0.1 through the real openai client (chat.py's
read_completion, ask.py's parse_reply); failed answers asked again by the next run; the response_format
dialects tried in turn, a request the server refuses as invalid never retried; the server's tokenizer in
the pre-flight line. The random broken replies here are a seeded few; QTC_FUZZ=deep sends
QTC_FUZZ_REPLIES of them (5,000 by default: docs/testing.md)."""

from __future__ import annotations

import json
import os
import random
import threading
import time

import pytest

from support.answering import answer, asked_in, crafter_questions, policy_for, read_answers_file
from support.handmade_qa import write_jsonl
from support.openai_stub_server import ChatCompletionServer, Reply
from qtc.cli import main
from qtc.errors import UserError
from qtc.runtime.chat import ChatClient, UnusableReply
from qtc.runtime.evaluate.ask import parse_reply
from qtc.runtime.qa.answers import read_answers

REPLY_SECONDS = 5.0  # guards against a hang only: a reply is read in milliseconds


def envelope(content="", **fields) -> bytes:
    """A chat completion's body, with `fields` replacing its parts (message, usage, choices, ...)."""
    body = {"id": "x", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}
    if "message" in fields:
        body["choices"][0]["message"] = fields.pop("message")
    body.update(fields)
    return json.dumps(body).encode()


def answered(text: str) -> str:
    return json.dumps({"answers": [{"question": 1, "answer": text}]})


# Replies with status 200 that give no answer: each is recorded as the question's error.
UNANSWERED = {
    "html": Reply(body=b"<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"),
    "a cut envelope": Reply(body=envelope()[:25]),
    "message null": Reply(body=envelope(message=None)),
    "no choices": Reply(body=envelope(choices=[])),
    "choices not a list": Reply(body=envelope(choices="many")),
    "content a number": Reply(body=envelope(12)),
    "an error with status 200": Reply(body=json.dumps({"error": {"message": "model overloaded"}}).encode()),
    "a list, not an object": Reply(body=b"[1, 2, 3]"),
    "deep nesting": Reply(body=b"[" * 100_000),
    "deep nesting in the content": Reply(body=envelope("[" * 50_000 + "]" * 50_000)),
    "invalid UTF-8": Reply(body=b"\xff\xfe{\x80\x81}"),
    "a huge integer": Reply(body=b'{"choices": [], "usage": {"prompt_tokens": ' + b"9" * 5000 + b"}}"),
    "40,000 characters of whitespace": Reply(body=b" \n\t" * 13_334),
    "whitespace as the content": Reply(body=envelope(" \n" * 20_000)),
    "an empty content": Reply(body=envelope("")),
    "an empty answer": Reply(body=envelope(answered(""))),
    "Unicode digits and broken escapes": Reply(body=envelope('{"answers": [{"question": "\\u0661", "answer": "\\x"}')),
}


def answered_replies(answer_text: str) -> dict[str, Reply]:
    """Odd replies that still answer: content in parts, usage fields as strings, a question number in
    Unicode digits (read by position), a Retry-After that is not a number before the reply."""
    return {
        "content in parts": Reply(body=envelope([{"type": "text", "text": answered(answer_text)}])),
        "usage as strings": Reply(body=envelope(answered(answer_text),
                                                usage={"prompt_tokens": "12", "completion_tokens": "١٢"})),
        "a question number in Unicode digits": Reply(body=envelope(json.dumps(
            {"answers": [{"question": "١", "answer": answer_text}]}))),
    }


def test_every_broken_reply_is_an_answer_or_a_recorded_error_and_a_rerun_asks_the_failed_again(
        tmp_path, crafter_db, crafter_trace_dir, capsys):
    odd = list(answered_replies(""))
    records = crafter_questions(crafter_db, len(UNANSWERED) + len(odd))
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    kinds = dict(zip([r["question"] for r in records], [*UNANSWERED, *odd]))
    replies = {r["question"]: UNANSWERED.get(kinds[r["question"]]) or answered_replies(r["answer"])[kinds[r["question"]]]
               for r in records}
    correct = policy_for(records)

    def broken(body: dict) -> Reply:
        (text,) = asked_in(body)
        return replies[text]

    start = time.monotonic()
    with ChatCompletionServer(broken) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    assert time.monotonic() - start < REPLY_SECONDS * len(records)
    answers = {a["id"]: a for a in read_answers_file(out)}
    assert len(answers) == len(records) and len(server.requests) == len(records)  # nothing retried
    failed = {r["id"] for r in records[:len(UNANSWERED)]}
    for r in records:
        a = answers[r["id"]]
        if r["id"] in failed:
            assert a["prediction"] == "" and a["error"], (kinds[r["question"]], a)
        else:
            assert a["error"] is None and a["prediction"] == r["answer"], (kinds[r["question"]], a)
    err = capsys.readouterr().err
    assert f"{len(failed)} question(s) got no answer" in err and "the same command asks them again" in err
    assert "Traceback" not in err

    with ChatCompletionServer(correct) as server:  # the rerun asks the failed questions, and only them
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    assert {r["id"] for r in records if r["question"] in {asked_in(b)[0] for b in server.requests}} == failed
    final = read_answers(out)
    assert len(final.superseded) == len(failed)
    assert all(final.answers[r["id"]].prediction == r["answer"] for r in records[:len(UNANSWERED)])
    assert main(["score", "--qa", str(qa), "--answers", str(out), "--bootstrap", "10"]) == 0


def test_retry_after_that_is_not_a_number_falls_back_to_backoff():
    replies = iter([Reply(status=429, headers={"Retry-After": value}) for value in ("nan", "-3", "inf", "soon")]
                   + [Reply("fine")])
    with ChatCompletionServer(lambda body: next(replies)) as server:
        waits: list[float] = []
        client = ChatClient("stub", server.url, attempts=5, backoff=0.25, sleep=waits.append)
        assert client.complete([{"role": "user", "content": "hi"}], 10).text == "fine"
    assert waits == [0.25, 0.5, 1.0, 2.0]


LLAMA_CPP_REFUSAL = ("1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be "
                     "'text' or 'json_object' [type=literal_error, input_value='json_schema', input_type=str]")


def test_the_json_schema_dialect_falls_back_to_llama_cpp_s_and_is_remembered(tmp_path, crafter_db,
                                                                            crafter_trace_dir, capsys):
    """llama-cpp-python's server refuses OpenAI's json_schema with HTTP 500 and takes the schema inside a
    json_object: the first refusal is not retried, and every later request is sent in its dialect."""
    records = crafter_questions(crafter_db, 4)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    correct = policy_for(records)

    def llama(body: dict) -> Reply:
        if body.get("response_format", {}).get("type") != "json_object":
            return Reply(status=500, message=LLAMA_CPP_REFUSAL)
        return correct(body)

    with ChatCompletionServer(llama) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "2") == 0
    sent = [body.get("response_format") for body in server.requests]
    assert [f["type"] for f in sent] == ["json_schema", "json_object", "json_object"]
    assert all(f["schema"]["properties"]["answers"]["maxItems"] == 2 for f in sent[1:])
    assert [a["prediction"] for a in read_answers_file(out)] == [r["answer"] for r in records]
    warnings = capsys.readouterr().err.strip().splitlines()
    assert len(warnings) == 1 and "refused response_format json_schema" in warnings[0]
    assert "sending json_object with a schema from now on (--json-mode chooses)" in warnings[0]


def test_a_refusal_that_is_not_the_format_s_is_not_retried_and_names_the_option(tmp_path, crafter_db,
                                                                                crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    refusal = "1 validation error for CreateChatCompletionRequest\nmessages\n  Field required"
    with ChatCompletionServer(lambda body: Reply(status=500, message=refusal)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 2
    assert len(server.requests) == 1  # a request the server calls invalid would fail again
    err = capsys.readouterr().err
    assert "the server refused the request: HTTP 500" in err and "--json-mode object or off" in err
    assert len(err.strip().splitlines()) == 1


def test_the_server_s_tokenizer_counts_the_longest_prompt(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    with ChatCompletionServer(policy_for(records), tokenizer=True) as server:
        assert answer(qa, [crafter_trace_dir], server.url, tmp_path / "a.jsonl") == 0
    assert "the longest prompt is " in (out := capsys.readouterr().out) and "by the server's tokenizer" in out
    with ChatCompletionServer(policy_for(records)) as server:  # none: the estimate, said to be one
        assert answer(qa, [crafter_trace_dir], server.url, tmp_path / "b.jsonl") == 0
    assert "four characters a token" in capsys.readouterr().out


def test_an_out_file_that_is_not_an_answers_file_is_refused_untouched(tmp_path, crafter_db, crafter_trace_dir,
                                                                      capsys):
    records = crafter_questions(crafter_db, 1)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    for name, data in [("notes.txt", b"a\nb"), ("objects.jsonl", b'{"a": 1}\n{"b": 2}'),
                       ("qa-copy.jsonl", qa.read_bytes().rstrip(b"\n"))]:
        notes = tmp_path / name
        notes.write_bytes(data)
        assert answer(qa, [crafter_trace_dir], "http://127.0.0.1:9/v1", notes) == 2
        assert notes.read_bytes() == data, name
        assert "Traceback" not in capsys.readouterr().err


def test_a_fifo_or_a_folder_given_as_out_or_log_is_refused_without_waiting(tmp_path, crafter_db, crafter_trace_dir,
                                                                           capsys):
    records = crafter_questions(crafter_db, 1)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    unblock = threading.Timer(30, lambda: open(fifo, "wb").close())  # ends a hang only
    unblock.start()
    try:
        with ChatCompletionServer(policy_for(records)) as server:
            for out, extra in [(fifo, ()), (tmp_path, ()), (tmp_path / "answers.jsonl", ("--log-requests", str(fifo)))]:
                assert answer(qa, [crafter_trace_dir], server.url, out, *extra) == 2
                refused = fifo if extra else out
                assert capsys.readouterr().err == (f"qtc answer: error: {refused}: not a JSONL file "
                                                   "(a folder, a FIFO or a device)\n")
        assert not (tmp_path / "answers.jsonl").exists() and not server.requests
    finally:
        unblock.cancel()


# Random broken replies: a well-formed reply, cut, spliced, its values replaced.
JUNK = ["", " ", "null", "[]", "{}", '"x"', "1e999", "-0", "9" * 400, "[" * 2000, "\ud800", "\x00", "١٢",
        "true", '{"answers": null}', "\n" * 500, "```", "<html>"]


def broken_reply(chance: random.Random) -> bytes:
    good = envelope(answered("noop"), usage={"prompt_tokens": 3, "completion_tokens": 4}).decode()
    for _ in range(chance.randint(1, 4)):
        at = chance.randrange(len(good) + 1)
        edit = chance.choice(("cut", "insert", "delete", "replace_value", "bytes"))
        if edit == "cut":
            good = good[:at]
        elif edit == "insert":
            good = good[:at] + chance.choice(JUNK) + good[at:]
        elif edit == "delete":
            good = good[:at] + good[at + chance.randint(1, 20):]
        elif edit == "replace_value":
            good = good.replace(chance.choice(['"noop"', "3", "4", '"assistant"', "0"]), chance.choice(JUNK), 1)
        else:
            return good.encode("utf-8", "surrogatepass")[:at] + bytes(chance.randrange(256) for _ in range(8))
    return good.encode("utf-8", "surrogatepass")


def ask_broken_replies(count: int, seed: int) -> None:
    chance = random.Random(seed)
    bodies = [broken_reply(chance) for _ in range(count)]
    replies = iter(bodies)
    with ChatCompletionServer(lambda body: Reply(body=next(replies))) as server:
        client = ChatClient("stub", server.url, attempts=1)
        for i, body in enumerate(bodies):
            start = time.monotonic()
            try:
                completion = client.complete([{"role": "user", "content": "hi"}], 10)
            except UnusableReply:
                continue
            except UserError as error:
                pytest.fail(f"reply {i} (seed {seed}) {body[:200]!r} stopped the run: {error}")
            finally:
                assert time.monotonic() - start < REPLY_SECONDS, (i, seed, body[:200])
            assert len(parse_reply(completion.text, 3)) == 3
            assert completion.prompt_tokens >= 0 and completion.completion_tokens >= 0


def test_random_broken_replies():
    ask_broken_replies(60, seed=7)


@pytest.mark.skipif(os.environ.get("QTC_FUZZ") != "deep",
                    reason="the deep fuzz run: set QTC_FUZZ=deep (docs/testing.md)")
def test_random_broken_replies_deep():
    ask_broken_replies(int(os.environ.get("QTC_FUZZ_REPLIES", "5000")),
                       int(os.environ.get("QTC_FUZZ_SEED") or random.randrange(2**32)))


def test_answer_closes_its_store_so_a_second_run_in_the_same_process_opens_it_again(tmp_path, crafter_db,
                                                                                     crafter_trace_dir, capsys):
    # DuckDB shares a database file's instance among a process's connections: one left open kept the
    # spatial primitives registered, and the next run's registration failed (a CatalogException).
    qa = write_jsonl(tmp_path / "qa.jsonl", crafter_questions(crafter_db, 1))
    db = tmp_path / "store.duckdb"
    assert main(["load", str(crafter_trace_dir), "--db", str(db)]) == 0
    for _ in range(2):
        assert main(["answer", "--qa", str(qa), "--traces", str(db), "--model", "stub", "--dry-run",
                     "--out", str(tmp_path / "answers.jsonl")]) == 0
    assert "Traceback" not in capsys.readouterr().err
