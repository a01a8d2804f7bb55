"""The memory driver, through `qtc answer --memory`: what a provider is fed and when it is asked, on a
checkpoint set of both games; resume; providers that raise or do not load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from qtc.cli import main
from support.answering import read_answers_file
from support.handmade_qa import question, write_jsonl
from support.paths import REPO

HORIZONS = (10, 25, 60)
RECORDER = "support.memory_providers:Recorder"


@pytest.fixture(scope="module")
def checkpoint_qa(tmp_path_factory, crafter_trace_dir, jericho_trace_dir) -> Path:
    """A checkpoint set of both games (Jericho's 30 steps end before its last horizon), and one question of
    each episode with no horizon (asked at the episode's end)."""
    root = tmp_path_factory.mktemp("checkpoints")
    generated = root / "generated.jsonl"
    assert main(["generate", "--traces", str(crafter_trace_dir), str(jericho_trace_dir),
                 "--horizon", ",".join(map(str, HORIZONS)), "--templates",
                 str(REPO / "templates" / "crafter" / "single_hop.qtpl"),
                 str(REPO / "templates" / "jericho" / "single_hop.qtpl"),
                 "--max-per-template", "1", "--out", str(generated), "--quiet"]) == 0
    records = [json.loads(line) for line in generated.read_text().splitlines()]
    episodes = {(r["episode_id"], r["env"], r["game"]) for r in records}
    records += [question(f"whole-{env}", f"How long was the {env} episode?", "1", "integer", episode_id=eid,
                         env=env, game=game) for eid, env, game in sorted(episodes)]
    return write_jsonl(root / "qa.jsonl", records)


def events(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def run_recorder(qa: Path, traces: list[Path], out: Path, log: Path, *options: str) -> int:
    return main(["answer", "--qa", str(qa), "--traces", *map(str, traces), "--memory", RECORDER,
                 "--memory-option", f"log={log}", *options, "--out", str(out), "--quiet"])


def test_each_step_arrives_once_in_order_and_never_after_a_horizon(tmp_path, checkpoint_qa, crafter_trace_dir,
                                                                    jericho_trace_dir, trace_db):
    out, log = tmp_path / "answers.jsonl", tmp_path / "fed.jsonl"
    assert run_recorder(checkpoint_qa, [crafter_trace_dir, jericho_trace_dir], out, log) == 0
    records = {r["id"]: r for r in map(json.loads, checkpoint_qa.read_text().splitlines())}
    lengths = dict(trace_db.execute("SELECT episode_id, n_steps FROM episodes").fetchall())
    seen = events(log)
    resets = [e["reset"] for e in seen if "reset" in e]
    assert sorted(r["episode_id"] for r in resets) == sorted(lengths)  # each episode once
    assert {r["env"] for r in resets} == {"crafter", "jericho"} and all({"game", "legend"} <= r.keys() for r in resets)
    for episode_id, n_steps in lengths.items():
        fed = [e["step"] for e in seen if e.get("episode") == episode_id and "step" in e]
        assert fed == list(range(n_steps + 1))  # once each, in order, from the start to the last question's
        asked = [e for e in seen if e.get("episode") == episode_id and "asked" in e]
        horizons = {min(records[e["asked"]]["horizon"] or n_steps, n_steps) for e in asked}
        assert horizons == {min(h, n_steps) for h in HORIZONS} | {n_steps}
        for e in asked:  # asked when the last step fed was the question's horizon: none after it
            assert e["horizon"] == e["last_fed"] == min(records[e["asked"]]["horizon"] or n_steps, n_steps)
    answers = read_answers_file(out)
    assert sorted(a["id"] for a in answers) == sorted(records)
    assert {a["context"] for a in answers} == {f"memory:{RECORDER} log={log}"}
    assert all(a["error"] is None and a["retrieved_steps"] == [int(a["prediction"]) - 1] for a in answers)
    # A step's text is its block of --context full's log.
    crafter = next(e for e in seen if e.get("step") == 7 and e["episode"].startswith("crafter"))
    assert crafter["text"].startswith("Step 7\n  action: ") and crafter["frame"] is None


def test_a_rerun_feeds_again_and_asks_only_what_is_missing(tmp_path, checkpoint_qa, crafter_trace_dir,
                                                          jericho_trace_dir):
    out, log = tmp_path / "answers.jsonl", tmp_path / "fed.jsonl"
    traces = [crafter_trace_dir, jericho_trace_dir]
    assert run_recorder(checkpoint_qa, traces, out, log) == 0
    answers = read_answers_file(out)
    kept = [a for a in answers if not a["id"].startswith("whole-jericho")][:3]  # all of one episode lost
    out.write_text("".join(json.dumps(a) + "\n" for a in kept))
    log.unlink()
    assert run_recorder(checkpoint_qa, traces, out, log) == 0
    seen = events(log)
    asked = [e["asked"] for e in seen if "asked" in e]
    assert sorted(asked) == sorted(a["id"] for a in answers if a["id"] not in {k["id"] for k in kept})
    for reset in (e["reset"] for e in seen if "reset" in e):  # each episode fed again from its start
        fed = [e["step"] for e in seen if e.get("episode") == reset["episode_id"] and "step" in e]
        assert fed[0] == 0 and fed == sorted(set(fed))
    assert sorted(a["id"] for a in read_answers_file(out)) == sorted(a["id"] for a in answers)


def test_a_provider_that_raises_gives_that_question_an_error_and_the_run_goes_on(tmp_path, crafter_trace_dir,
                                                                                capsys):
    records = [question(f"q{t}", f"What did you do at step {t}?", "noop", "action", episode_id="crafter-scripted-s0",
                        env="crafter", game="crafter", horizon=5) for t in (1, 2, 3)]
    qa, out, log = write_jsonl(tmp_path / "qa.jsonl", records), tmp_path / "answers.jsonl", tmp_path / "fed.jsonl"
    assert run_recorder(qa, [crafter_trace_dir], out, log, "--memory-option", "fail_on=step 2") == 0
    answers = {a["id"]: a for a in read_answers_file(out)}
    assert [answers[q]["prediction"] for q in ("q1", "q3")] == ["6", "6"]
    failed = answers["q2"]
    assert failed["prediction"] == "" and failed["error"] == (
        f"memory provider {RECORDER} failed on question q2: ValueError: cannot answer 'What did you do at step 2?'")
    assert "1 question(s) failed in the provider" in capsys.readouterr().err


def test_a_provider_that_fails_to_observe_gives_the_questions_still_to_come_an_error(tmp_path, crafter_trace_dir):
    records = [question(f"h{h}", f"What happened by step {h}?", "noop", "action", episode_id="crafter-scripted-s0",
                        env="crafter", game="crafter", horizon=h) for h in (2, 5, 9)]
    qa, out, log = write_jsonl(tmp_path / "qa.jsonl", records), tmp_path / "answers.jsonl", tmp_path / "fed.jsonl"
    assert run_recorder(qa, [crafter_trace_dir], out, log, "--memory-option", "fail_at=4") == 0
    answers = {a["id"]: a for a in read_answers_file(out)}
    assert answers["h2"]["prediction"] == "3" and answers["h2"]["error"] is None
    for late in ("h5", "h9"):
        assert answers[late]["prediction"] == "" and answers[late]["error"] == (
            f"memory provider {RECORDER} failed on question {late}: observe of step 4 of episode "
            "crafter-scripted-s0: ValueError: no room left")


@pytest.mark.parametrize("name, options, message", [
    ("no_such_module:Provider", [], "--memory no_such_module:Provider: cannot import no_such_module "
                                    "(ModuleNotFoundError: No module named 'no_such_module')"),
    ("support.memory_providers:Nothing", [], "--memory support.memory_providers:Nothing: "
                                             "support.memory_providers has no 'Nothing'"),
    ("support.memory_providers:LacksObserve", [], "--memory support.memory_providers:LacksObserve: LacksObserve "
                                                  "lacks the method(s) observe of a memory provider"),
    (RECORDER, ["size=3"], f"--memory {RECORDER}: cannot make the provider with options {{'size': '3'}}"),
    ("bm25", ["k=many"], "--memory-option k: expected a positive whole number, got 'many'"),
    ("last:0", [], "--memory 'last:0': expected last:N with N a positive whole number"),
    ("bm25", [], "--memory bm25 needs --model"),
    ("nothing_of_the_kind", [], "--memory nothing_of_the_kind: no such provider"),
])
def test_a_provider_that_cannot_be_made_is_one_line_and_exit_2(tmp_path, crafter_trace_dir, capsys, name, options,
                                                               message):
    qa = write_jsonl(tmp_path / "qa.jsonl", [question("q1", episode_id="crafter-scripted-s0", env="crafter",
                                                      game="crafter")])
    argv = ["answer", "--qa", str(qa), "--traces", str(crafter_trace_dir), "--memory", name,
            *(a for o in options for a in ("--memory-option", o)), "--out", str(tmp_path / "a.jsonl"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"qtc answer: error: {message}" in err
    assert not (tmp_path / "a.jsonl").exists()


def test_crafter_frames_are_fed_with_their_steps(tmp_path):
    traces = tmp_path / "traces"
    assert main(["play", "crafter", "--frames", "--max-steps", "6", "--out", str(traces), "--quiet"]) == 0
    episode = "crafter-scripted-s0"
    qa = write_jsonl(tmp_path / "qa.jsonl", [question("q1", episode_id=episode, env="crafter", game="crafter",
                                                      horizon=4)])
    log = tmp_path / "fed.jsonl"
    assert run_recorder(qa, [traces], tmp_path / "answers.jsonl", log) == 0
    with np.load(traces / f"{episode}.frames.npz") as archive:
        frames = archive["frames"]
    assert [e["frame"] for e in events(log) if "step" in e] == [int(frames[t].astype(np.int64).sum()) for t in range(5)]


def test_a_provider_installed_under_the_entry_points_is_found_by_name(tmp_path, monkeypatch, crafter_trace_dir):
    """A package that declares `[project.entry-points."qtc.providers"] NAME = "module:Class"`: its
    dist-info on the path, as pip would leave it."""
    dist = tmp_path / "site" / "qtc_test_memory-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: qtc-test-memory\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[qtc.providers]\ntest-recorder = {RECORDER}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    qa = write_jsonl(tmp_path / "qa.jsonl", [question("q1", episode_id="crafter-scripted-s0", env="crafter",
                                                      game="crafter", horizon=3)])
    out, log = tmp_path / "answers.jsonl", tmp_path / "fed.jsonl"
    assert main(["answer", "--qa", str(qa), "--traces", str(crafter_trace_dir), "--memory", "test-recorder",
                 "--memory-option", f"log={log}", "--out", str(out), "--quiet"]) == 0
    assert [e["step"] for e in events(log) if "step" in e] == [0, 1, 2, 3]
    assert read_answers_file(out)[0]["context"] == f"memory:test-recorder log={log}"
