"""`qtc run`: the whole job in one command, each stage checkpointed. A rerun reuses what is done (no
request sent, no file rewritten), resumes a stage that stopped, runs only what a new memory adds, and
never replaces a costly output made with other options unless forced (then keeps it under previous/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.answering import read_answers_file
from support.openai_stub_server import ChatCompletionServer, Reply, _QUESTION_LINE, message_text
from qtc.cli import main
from qtc.commands.run import name_of

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "crafter" / "single_hop.qtpl"
PLAY = "crafter --agent scripted --seed 3 --max-steps 25"
GENERATE = f"--templates {TEMPLATES} --total 8 --seed 1"


def not_answerable(body: dict) -> Reply:
    """Answers every question of a prompt 'not answerable'."""
    count = len(_QUESTION_LINE.findall(message_text(body["messages"][-1])))
    return Reply(json.dumps({"answers": [{"question": n, "answer": "not answerable"}
                                         for n in range(1, count + 1)]}))


def qtc_run(out: Path, url: str, *extra: str) -> int:
    return main(["run", str(out), "--play", PLAY, "--generate", GENERATE, "--model", "stub", "--base-url", url,
                 "--answer=--quiet", *extra])


def finished(out: Path) -> dict[str, bool]:
    return {name: record["finished"] for name, record in json.loads((out / "run.json").read_text())["stages"].items()}


@pytest.fixture(scope="module")
def server():
    with ChatCompletionServer(not_answerable) as server:
        yield server


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, server) -> Path:
    out = tmp_path_factory.mktemp("run") / "out"
    assert qtc_run(out, server.url, "--memory", "none") == 0
    return out


def test_a_run_makes_every_stage_and_records_each_finished(first_run):
    out = first_run
    assert finished(out) == {f"record {PLAY}": True, "generate": True, "answer none": True, "score none": True,
                             "report": True}
    questions = (out / "qa.jsonl").read_text().splitlines()
    assert 0 < len(questions) <= 8
    assert len(read_answers_file(out / "answers-none.jsonl")) == len(questions)
    assert json.loads((out / "score-none.json").read_text())["questions"] == len(questions)
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_a_rerun_reuses_every_stage_done(first_run, server, capsys):
    before = {path: path.stat().st_mtime_ns for path in first_run.rglob("*") if path.is_file()}
    asked = len(server.requests)
    assert qtc_run(first_run, server.url, "--memory", "none") == 0
    assert capsys.readouterr().out.count(": reused (done with the same options and inputs)") == 5
    assert len(server.requests) == asked
    after = {path: path.stat().st_mtime_ns for path in first_run.rglob("*") if path.is_file()}
    assert {p: t for p, t in after.items() if p.name != "run.json"} == \
        {p: t for p, t in before.items() if p.name != "run.json"}


def copy_run(run: Path, out: Path) -> dict:
    """A copy of a finished run in `out`, its state naming its own files; the state, to change."""
    shutil.copytree(run, out)
    state = json.loads((run / "run.json").read_text().replace(str(run), str(out)))
    (out / "run.json").write_text(json.dumps(state))
    return state


def test_a_new_memory_runs_only_its_stages_and_the_report(tmp_path, first_run, server, capsys):
    out = tmp_path / "out"
    copy_run(first_run, out)
    assert qtc_run(out, server.url, "--memory", "none", "--memory", "bm25 k=2") == 0
    printed = capsys.readouterr().out
    assert "[1/7] record" in printed and ": reused" in printed.split("[3/7]")[0]
    assert "[3/7] answer none: reused" in printed and "[4/7] score none: reused" in printed
    assert "[5/7] answer bm25 k=2: not run yet" in printed and "[7/7] report: asked with other options" in printed
    answers = read_answers_file(out / f"answers-{name_of('bm25 k=2')}.jsonl")
    assert len(answers) == len((out / "qa.jsonl").read_text().splitlines())
    assert {a["context"] for a in answers} == {"memory:bm25 k=2"} and all(len(a["retrieved_steps"]) <= 2 for a in answers)


def test_a_stage_that_stopped_resumes_and_asks_only_what_is_missing(tmp_path, first_run, server):
    out = tmp_path / "out"
    state = copy_run(first_run, out)
    state["stages"]["answer none"]["finished"] = False
    (out / "run.json").write_text(json.dumps(state))
    answers = out / "answers-none.jsonl"
    lines = answers.read_text().splitlines(keepends=True)
    answers.write_text("".join(lines[:1]))  # stopped after its first answer
    asked = len(server.requests)
    assert qtc_run(out, server.url, "--memory", "none") == 0
    assert [a["id"] for a in read_answers_file(answers)] == [json.loads(line)["id"] for line in lines]
    assert len(server.requests) > asked
    assert all(finished(out).values())


def test_other_options_stop_the_run_unless_forced_and_the_old_outputs_are_kept(tmp_path, server, capsys):
    out = tmp_path / "out"
    assert qtc_run(out, server.url, "--memory", "none") == 0
    first_qa = (out / "qa.jsonl").read_text()
    assert main(["run", str(out), "--play", PLAY, "--generate", GENERATE + " --adversarial-ratio 0.5",
                 "--memory", "none", "--model", "stub", "--base-url", server.url, "--answer=--quiet"]) == 2
    err = capsys.readouterr().err
    assert "stage 'generate' run with other options" in err and "--force" in err and len(err.splitlines()) == 1
    assert (out / "qa.jsonl").read_text() == first_qa
    assert main(["run", str(out), "--play", PLAY, "--generate", GENERATE + " --adversarial-ratio 0.5",
                 "--memory", "none", "--model", "stub", "--base-url", server.url, "--answer=--quiet",
                 "--force"]) == 0
    kept = list((out / "previous").rglob("qa.jsonl"))
    assert [path.read_text() for path in kept] == [first_qa]
    assert list((out / "previous").rglob("answers-none.jsonl"))  # the answers to the old set, kept too
    assert all(finished(out).values())


def test_dry_run_lists_the_stages_and_runs_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(out), "--play", PLAY, "--generate", GENERATE, "--memory", "bm25", "--memory", "none",
                 "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[::2]] == [
        f"[1/7] record {PLAY}", "[2/7] generate", "[3/7] answer bm25", "[4/7] score bm25", "[5/7] answer none",
        "[6/7] score none", "[7/7] report"]
    assert lines[1].strip().startswith("qtc play crafter --agent scripted")
    assert not out.exists()


@pytest.mark.parametrize("argv, message", [
    ([], "give the episodes"),
    (["--traces", "t", "--play", PLAY], "give the episodes"),
    (["--play", PLAY], "give at least one --memory"),
    (["--play", PLAY, "--memory", "none", "--generate", "--out x.jsonl"], "--generate '--out x.jsonl': --out is set by qtc run itself"),
    (["--play", "crafter 'unclosed", "--memory", "none"], "--play \"crafter 'unclosed\": No closing quotation"),
    (["--play", PLAY, "--memory", "bm25 20"], "--memory 'bm25 20': a memory's options are KEY=VALUE after its name"),
])
def test_bad_arguments_are_one_line(tmp_path, capsys, argv, message):
    assert main(["run", str(tmp_path / "out"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
