"""Resuming qtc answer: a run stopped by a dead endpoint, a kill (with or without a torn last line) or
Ctrl-C keeps every answer written, and the rerun asks only what is missing; answers of another model or
context are never mixed into one file."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.answering import answer, asked_in, crafter_questions, policy_for, read_answers_file
from support.handmade_qa import write_jsonl
from support.openai_stub_server import ChatCompletionServer


def test_an_endpoint_that_never_answers_stops_the_run_and_keeps_the_answers(tmp_path, crafter_db,
                                                                          crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 4)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, {"q3": "hang_always"})) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1", "--timeout", "1",
                      "--attempts", "2") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("qtc answer: error: http://127.0.0.1:") and "no reply within 1s" in err
    assert "the 2 answer(s) received are kept" in err and len(err.splitlines()) == 1
    assert [a["id"] for a in read_answers_file(out)] == ["q1", "q2"]
    # The rerun asks only what is missing.
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    assert [asked_in(r) for r in server.requests] == [[records[2]["question"]], [records[3]["question"]]]
    assert [a["id"] for a in read_answers_file(out)] == ["q1", "q2", "q3", "q4"]
    assert "2 were already answered" in capsys.readouterr().out


def test_resume_refuses_another_model_or_context(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
        assert answer(qa, [crafter_trace_dir], server.url, out, "--context", "last:5") == 2
    assert (f"qtc answer: error: --out {out} holds answers of model stub with context full; name another file "
            "for stub with context last:5") in capsys.readouterr().err


# The child sets Ctrl-C's handling itself: a suite started in the background inherits SIGINT ignored, and
# Python does not raise KeyboardInterrupt for a signal ignored at its start.
ANSWER_PROCESS = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                  "from qtc.cli import main; sys.exit(main())")


def start_answer_process(qa: Path, traces: Path, url: str, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", ANSWER_PROCESS, "answer", "--qa", str(qa), "--traces", str(traces),
                             "--model", "stub", "--base-url", url, "--out", str(out), "--batch", "1", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_lines(path: Path, count: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and path.read_text().count("\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} did not reach {count} lines; process returned {process.poll()}")


def stop_when_stalled(qa: Path, traces: Path, records: list[dict], out: Path, stall: int, stop) -> tuple[int, str]:
    """Run qtc answer (one question per request) in a subprocess whose request number `stall` hangs; once the
    answers before it are on disk, `stop(process)`. Returns the exit code and the standard error."""
    hanging = {records[stall - 1]["id"]: "hang_always"}
    with ChatCompletionServer(policy_for(records, hanging, hang_seconds=60)) as server:
        process = start_answer_process(qa, traces, server.url, out)
        wait_for_lines(out, stall - 1, process)
        while len(server.requests) < stall:
            time.sleep(0.05)
        stop(process)
        _, err = process.communicate(timeout=30)
    return process.returncode, err


@pytest.mark.parametrize("torn_line", [False, True])
def test_a_killed_run_resumes_without_losing_or_duplicating(tmp_path, crafter_db, crafter_trace_dir, torn_line):
    records = crafter_questions(crafter_db, 5)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    returncode, _ = stop_when_stalled(qa, crafter_trace_dir, records, out, 3, lambda process: process.kill())
    assert returncode == -signal.SIGKILL
    if torn_line:  # as if the process had died in the middle of writing an answer
        with out.open("a") as stream:
            stream.write('{"id":"q3","model":"stub","context":"full","predic')
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    assert [asked_in(r)[0] for r in server.requests] == [r["question"] for r in records[2:]]
    answers = read_answers_file(out)
    assert [a["id"] for a in answers] == ["q1", "q2", "q3", "q4", "q5"]
    assert [a["prediction"] for a in answers] == [r["answer"] for r in records]


def test_a_whole_last_line_without_its_newline_is_kept(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    out.write_text(out.read_text().rstrip("\n"))
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
    assert server.requests == [] and out.read_text().endswith("}\n")
    assert [a["id"] for a in read_answers_file(out)] == ["q1", "q2"]


def test_ctrl_c_stops_cleanly_and_the_rerun_finishes(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 4)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    returncode, err = stop_when_stalled(qa, crafter_trace_dir, records, out, 2,
                                        lambda process: process.send_signal(signal.SIGINT))
    assert returncode == 130 and err.strip() == "qtc answer: interrupted"
    assert [a["id"] for a in read_answers_file(out)] == ["q1"]
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
    assert [a["id"] for a in read_answers_file(out)] == ["q1", "q2", "q3", "q4"]
