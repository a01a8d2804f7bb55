"""`qtc score --format` and `qtc compare`: the same numbers in every format, and paired differences
that are the two runs' own scores subtracted, with paired bootstrap intervals."""

from __future__ import annotations

import csv
import io
import json

import pytest

from support.answer_files import write_answers
from support.handmade_qa import question, write_jsonl
from qtc.cli import main


@pytest.fixture
def qa(tmp_path):
    records = [question(f"q{i}", answer=str(i), answer_type="integer",
                        category=("single_hop", "temporal")[i % 2]) for i in range(40)]
    records += [question("fp", answer="not answerable")]
    return write_jsonl(tmp_path / "qa.jsonl", records), records


def score(qa_path, answers, tmp_path, *extra) -> dict:
    out = tmp_path / f"{answers.stem}.json"
    assert main(["score", "--qa", str(qa_path), "--answers", str(answers), "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_csv_and_markdown_hold_the_reports_numbers(qa, tmp_path, capsys):
    path, records = qa
    answers = write_answers(tmp_path / "a.jsonl", records, "a", lambda n, q: n % 3 != 0)
    report = score(path, answers, tmp_path)
    capsys.readouterr()
    assert main(["score", "--qa", str(path), "--answers", str(answers), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["grouping"], r["group"]) for r in rows][:2] == [("overall", "overall"), ("category", "single_hop")]
    overall = rows[0]
    assert float(overall["accuracy"]) == report["overall"]["accuracy"]
    assert [float(overall["f1_low"]), float(overall["f1_high"])] == report["overall"]["f1_ci"]
    adversarial = next(r for r in rows if r["group"] == "adversarial")
    assert adversarial["f1"] == "" and adversarial["f1_low"] == ""
    assert main(["score", "--qa", str(path), "--answers", str(answers), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "| group | n | Acc % [95% CI] | F1 % [95% CI] |" in markdown
    assert f"| overall | 41 | {100 * report['overall']['accuracy']:.1f} [" in markdown


def test_compare_subtracts_the_runs_scores_with_paired_intervals(qa, tmp_path, capsys):
    path, records = qa
    first = write_answers(tmp_path / "a.jsonl", records, "a", lambda n, q: n % 3 != 0)
    second = write_answers(tmp_path / "b.jsonl", records, "b", lambda n, q: n % 2 == 0, skip=lambda n, q: n == 5)
    a, b = score(path, first, tmp_path), score(path, second, tmp_path)
    out = tmp_path / "diff.json"
    assert main(["compare", str(first), str(second), "--qa", str(path), "--out", str(out)]) == 0
    diff = json.loads(out.read_text())
    assert diff["bootstrap"]["paired"] and diff["questions"] == 41
    for metric in ("accuracy", "f1"):
        assert diff["overall"][metric] == pytest.approx(b["overall"][metric] - a["overall"][metric], abs=2e-4)
        for group, metrics in diff["by"]["category"].items():
            if metrics[metric] is not None:
                expected = b["by"]["category"][group][metric] - a["by"]["category"][group][metric]
                assert metrics[metric] == pytest.approx(expected, abs=2e-4)
        low, high = diff["overall"][f"{metric}_ci"]
        assert low <= diff["overall"][metric] <= high
    assert "b (full) minus a (full)" in capsys.readouterr().out


def test_a_run_compared_with_its_copy_differs_by_nothing(qa, tmp_path):
    path, records = qa
    first = write_answers(tmp_path / "a.jsonl", records, "a", lambda n, q: n % 3 != 0)
    copy = tmp_path / "copy.jsonl"
    copy.write_text(first.read_text())
    out = tmp_path / "diff.json"
    assert main(["compare", str(first), str(copy), "--qa", str(path), "--out", str(out)]) == 0
    overall = json.loads(out.read_text())["overall"]
    assert overall["accuracy"] == 0 and overall["accuracy_ci"] == [0, 0]


def test_the_same_file_twice_is_refused(qa, tmp_path, capsys):
    path, records = qa
    first = write_answers(tmp_path / "a.jsonl", records, "a", lambda n, q: True)
    assert main(["compare", str(first), str(first), "--qa", str(path)]) == 2
    assert "the same file" in capsys.readouterr().err
