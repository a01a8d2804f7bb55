"""The one model client (runtime/chat.py) through the real openai client and a real HTTP server on
127.0.0.1: backoff and Retry-After, rate limits and server errors retried with a line each, a timed-out
request never sent again, a slow server waited for, and a server that cannot be reached, a URL without
a scheme or a client that cannot be made told in one line, at once."""

from __future__ import annotations

import time

import pytest

from support.answering import answer, asked_in, crafter_questions, policy_for, read_answers_file
from support.handmade_qa import write_jsonl
from support.openai_stub_server import ChatCompletionServer


@pytest.mark.parametrize("behaviour, cause", [("rate_limit", "HTTP 429"), ("server_error", "HTTP 500")])
def test_rate_limits_and_server_errors_are_retried(tmp_path, crafter_db, crafter_trace_dir, capsys, behaviour,
                                                   cause):
    records = crafter_questions(crafter_db, 3)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, {"q2": behaviour})) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    assert [asked_in(r)[0] for r in server.requests] == [records[0]["question"], records[1]["question"],
                                                         records[1]["question"], records[2]["question"]]
    assert [a["prediction"] for a in read_answers_file(out)] == [r["answer"] for r in records]
    retries = capsys.readouterr().err.strip().splitlines()  # one line per retry, with its cause
    assert len(retries) == 1 and cause in retries[0] and "retry 1 of 5" in retries[0], retries


def test_backoff_doubles_and_honours_retry_after():
    from support.openai_stub_server import Reply
    from qtc.errors import UserError
    from qtc.runtime.chat import ChatClient

    replies = iter([Reply(status=429, headers={"Retry-After": "0.5"}), Reply(status=503), Reply(status=500),
                    Reply("fine")])
    with ChatCompletionServer(lambda body: next(replies)) as server:
        waits: list[float] = []
        client = ChatClient("stub", server.url, attempts=4, backoff=0.25, sleep=waits.append)
        completion = client.complete([{"role": "user", "content": "hello there"}], 10)
    assert waits == [0.5, 0.5, 1.0]  # Retry-After, then 0.25 x 2^1 and 2^2
    assert (completion.text, completion.prompt_tokens, completion.completion_tokens) == ("fine", 2, 1)
    with ChatCompletionServer(lambda body: Reply(status=500)) as server:
        waits = []
        with pytest.raises(UserError, match=r"no answer after 3 attempts \(last: HTTP 500"):
            ChatClient("stub", server.url, attempts=3, sleep=waits.append).complete([], 10)
    assert waits == [1.0, 2.0] and len(server.requests) == 3
    with ChatCompletionServer(lambda body: Reply(status=404)) as server:  # not worth retrying
        with pytest.raises(UserError, match="the server refused the request: HTTP 404"):
            ChatClient("stub", server.url, sleep=waits.append).complete([], 10)
    assert len(server.requests) == 1


def test_a_timed_out_request_is_not_sent_again(tmp_path, crafter_db, crafter_trace_dir, capsys):
    """A single-slot local server still generating the first copy would only queue a second one."""
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    policy = policy_for(records, {"q1": "hang"})
    start = time.monotonic()
    with ChatCompletionServer(policy) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--timeout", "1", "--attempts", "6") == 2
        assert len(server.requests) == 1 and time.monotonic() - start < 15
        err = capsys.readouterr().err.strip()
        assert "no reply within 1s; the request is not sent again" in err and len(err.splitlines()) == 1
        assert "(--timeout, now 1)" in err and "(--batch, now 5)" in err and "the same command resumes" in err
        assert answer(qa, [crafter_trace_dir], server.url, out, "--timeout", "1") == 0  # the fix: a rerun
    assert [a["prediction"] for a in read_answers_file(out)] == [r["answer"] for r in records]


def test_a_slow_server_is_waited_for(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, delay=1.5)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--timeout", "10") == 0
    assert len(server.requests) == 1 and capsys.readouterr().err == ""
    assert [a["prediction"] for a in read_answers_file(out)] == [r["answer"] for r in records]


def test_an_unreachable_server_is_one_line_at_once(tmp_path, crafter_db, crafter_trace_dir, capsys):
    import socket

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    qa = write_jsonl(tmp_path / "qa.jsonl", crafter_questions(crafter_db, 1))
    start = time.monotonic()
    assert answer(qa, [crafter_trace_dir], f"http://127.0.0.1:{port}/v1", tmp_path / "a.jsonl") == 2
    assert time.monotonic() - start < 5  # checked before the first batch, not after backoffs
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"qtc answer: error: http://127.0.0.1:{port}/v1/: cannot connect (")
    assert "refused" in err and "is the server running" in err and len(err.splitlines()) == 1


def test_a_url_without_a_scheme_is_one_line_naming_the_flag(tmp_path, crafter_db, crafter_trace_dir, capsys):
    qa = write_jsonl(tmp_path / "qa.jsonl", crafter_questions(crafter_db, 1))
    assert answer(qa, [crafter_trace_dir], "127.0.0.1:8080/v1", tmp_path / "a.jsonl") == 2
    assert capsys.readouterr().err.strip() == ("qtc answer: error: --base-url '127.0.0.1:8080/v1' has no scheme: "
                                               "write it as http://127.0.0.1:8080/v1 (or https://)")


def test_a_client_that_cannot_be_made_is_one_line_naming_the_flag(tmp_path, crafter_db, crafter_trace_dir, capsys,
                                                                  monkeypatch):
    from qtc.cli import main
    from qtc.errors import InvalidOption
    from qtc.runtime.chat import ChatClient

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InvalidOption) as refused:  # OpenAI itself needs a key
        ChatClient("stub")
    assert refused.value.field == "base_url"
    for field, options in (("timeout", {"timeout": 0}), ("attempts", {"attempts": -1})):
        with pytest.raises(InvalidOption, match=f"^{field} must be positive") as refused:
            ChatClient("stub", "http://127.0.0.1:9/v1", **options)
        assert refused.value.field == field
    qa = write_jsonl(tmp_path / "qa.jsonl", crafter_questions(crafter_db, 1))
    assert main(["answer", "--qa", str(qa), "--traces", str(crafter_trace_dir), "--model", "stub",
                 "--out", str(tmp_path / "a.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("qtc answer: error: --base-url is not given and OPENAI_API_KEY is not set")
    assert len(err.strip().splitlines()) == 1
