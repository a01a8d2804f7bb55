"""`qtc show QA ID`: the question whole, its evidence as the prompt renders it, its template and SQL."""

from __future__ import annotations

from support.answer_files import read_qa
from qtc.cli import main
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.evaluate.context import Shown, render_context
from qtc.runtime.trace.store import open_store


def test_show_prints_the_question_its_evidence_its_template_and_its_sql(qa, traces, capsys):
    q = next(r for r in read_qa(qa) if r["template_id"] == "crafter.route_to_nearest" and not r["adversarial"])
    assert main(["show", str(qa), q["id"], "--traces", *map(str, traces)]) == 0
    out = capsys.readouterr().out
    assert q["question"] in out and f"answer            {q['answer']}" in out
    assert f"t = {q['bindings']['t']}, material = {q['bindings']['material']}" in out
    con = open_store(*traces)
    assert render_context(EpisodeRows(con), q["episode_id"], "crafter", Shown.of_steps(q["evidence"])) in out
    con.close()
    assert "template crafter.route_to_nearest {" in out and "CHANGED" not in out
    assert "qtc_nearest_routes(" in out and "-- qtc template crafter.route_to_nearest" in out


def test_a_changed_template_is_flagged(qa, tmp_path, capsys):
    from support.paths import TEMPLATES

    q = next(r for r in read_qa(qa) if r["template_id"] == "crafter.action_at")
    edited = tmp_path / "single_hop.qtpl"
    edited.write_text((TEMPLATES / "crafter" / "single_hop.qtpl").read_text().replace(
        "Which action did you take", "What did you do"))
    assert main(["show", str(qa), q["id"], "--templates", str(edited)]) == 0
    out = capsys.readouterr().out
    assert "CHANGED since this question was generated" in out and "give --traces" in out


def test_an_unknown_id_is_a_clear_error(qa, capsys):
    assert main(["show", str(qa), "no-such-id"]) == 2
    assert "has no question 'no-such-id'" in capsys.readouterr().err
