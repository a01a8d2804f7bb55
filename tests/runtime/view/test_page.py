"""The report page read as HTML: self-contained, the scorer's own numbers, the evidence as the prompt
renders it, maps whose routes and paths are the spatial primitives' shortest ones, and the screens of the
evidence steps where the episode was recorded with frames."""

from __future__ import annotations

import base64
import io
import json
import re
from html import escape, unescape

import numpy as np
import pytest
from PIL import Image

from support.answer_files import read_qa, write_answers
from support.paths import TEMPLATES
from qtc.cli import main
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.evaluate.context import Shown, render_context
from qtc.runtime.evaluate.frames import labelled_cell
from qtc.runtime.evaluate.report import percent_cell
from qtc.runtime.spatial.udf import SpatialData
from qtc.runtime.trace.frames import frames_path
from qtc.runtime.trace.store import open_store
from qtc.runtime.view.maps import CELL, room_path
from qtc.runtime.view.episodes import SCREEN_CELL
from qtc.runtime.view.page import SMALL_N_NOTE
from qtc.runtime.view.questions import MAX_SCREENS


def test_the_page_fetches_nothing(page):
    html = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html


def test_the_page_shows_the_scorers_numbers(page, qa, answer_files, tmp_path):
    html = unescape(page.read_text())
    for answers in answer_files:
        out = tmp_path / f"{answers.stem}.json"
        assert main(["score", "--qa", str(qa), "--answers", str(answers), "--by", "category,template",
                     "--bootstrap", "200", "--out", str(out)]) == 0
        report = json.loads(out.read_text())
        cells = [report["overall"], *report["by"]["category"].values(), *report["by"]["template"].values()]
        for metrics in cells:
            assert f"{percent_cell(metrics, 'accuracy')} · {percent_cell(metrics, 'f1')}" in html


def test_a_row_per_question_with_the_models_side_by_side(page, qa):
    html = page.read_text()
    assert html.count('<tr class="question"') == len(read_qa(qa))
    assert len(re.findall(r'<td class="prediction [^"]*" data-run=', html)) == 2 * len(read_qa(qa))
    # accuracy and F1, per category, template, horizon and evidence age
    assert html.count('<svg class="chart"') == 8
    assert '<section id="by-horizon">' in html and '<section id="by-evidence_age">' in html
    horizons = {q["horizon"] for q in read_qa(qa)}
    assert all(f"Accuracy per horizon: {h if h else 'whole episode'}" in unescape(html) or
               f"<th>{h if h else 'whole episode'}</th>" in html for h in horizons)
    for q in read_qa(qa):
        assert f'<tr class="question" id="q-{escape(q["id"])}"' in html
    # per-template groups hold fewer than SMALL_N questions: their intervals are marked, the mark explained
    assert '<span class="small-n" title="fewer than 30 questions' in html and f"† {SMALL_N_NOTE}." in html


def _templates(html: str) -> dict[str, str]:
    return dict(re.findall(r'<template id="(\w+)">(.*?)</template>', html, re.S))


def _figures(html: str, qa, template_id: str) -> list[tuple[dict, str]]:
    """Each question of the template with a true premise, and its figure on the page."""
    templates = _templates(html)
    return [(q, templates[re.findall(r'data-fragment="(\w+)"', templates[f"q{n}"])[0]])
            for n, q in enumerate(read_qa(qa)) if q["template_id"] == template_id and not q["adversarial"]]


def test_the_evidence_is_the_prompts_rendering_with_the_evidence_marked(page, qa, traces):
    templates = _templates(page.read_text())
    con = open_store(*traces)
    for n, q in enumerate(read_qa(qa)):
        if not q["evidence"]:
            assert "evidence steps</th><td>none" in templates[f"q{n}"]
            continue
        details = templates[f"q{n}"]
        evidence = templates[re.search(r'<h4>Evidence steps[^<]*</h4><div class="fragment" data-fragment="(\w+)"',
                                       details).group(1)]
        blocks = [unescape(b) for b in re.findall(r'<pre class="block[^"]*">(.*?)</pre>', evidence, re.S)]
        expected = render_context(EpisodeRows(con), q["episode_id"], q["env"], Shown.of_steps(q["evidence"]))
        assert expected.endswith("\n".join(blocks))
        marked = re.findall(r'<pre class="block evidence">(?:Step|Before step) (\d+)', evidence)
        assert sorted(map(int, marked)) == sorted(s for s in q["evidence"] if s >= 1)
    con.close()


def test_crafter_routes_are_the_primitives_shortest_routes(page, qa, traces):
    checked = 0
    for q, figure in _figures(page.read_text(), qa, "crafter.route_to_nearest"):
        points = re.search(r'<polyline class="route" points="([^"]+)"', figure).group(1).split()
        (x0, y0), (x1, y1) = (tuple(map(float, p.split(","))) for p in (points[0], points[-1]))
        dx, dy = round((x1 - x0) / CELL), round((y1 - y0) / CELL)
        con = open_store(*traces)
        routes, distance = con.execute(
            "SELECT qtc_nearest_routes($1, $2, $3, 'seen'), qtc_nearest_distance($1, $2, $3, 'seen')",
            [q["episode_id"], int(q["bindings"]["t"]), q["bindings"]["material"]]).fetchone()
        con.close()
        assert {"dx": dx, "dy": dy} in routes and len(points) - 1 == distance
        assert '<circle class="player"' in figure and 'class="target"' in figure
        checked += 1
    assert checked


def test_room_paths_are_shortest(trace_db):
    spatial = SpatialData(trace_db)
    (episode,) = trace_db.execute("SELECT episode_id FROM episodes WHERE env = 'jericho' LIMIT 1").fetchone()
    graph = spatial.episode(episode).state.graph_before(10 ** 6)
    rooms = [room for room in graph.rooms if graph.has(room)]
    source = rooms[0]
    for target in rooms:
        path = room_path(graph, source, target)
        distance = graph.path_length(source, target)
        if distance is None:
            assert path == []
        else:
            assert len(path) == distance + 1 and path[0] == source and path[-1] == target
            assert all(after in graph.successors[before] for before, after in zip(path, path[1:]))


def test_without_traces_the_page_has_scores_only(qa, answer_files, tmp_path, capsys):
    html = tmp_path / "scores.html"
    assert main(["report", str(qa), str(answer_files[0]), "--html", str(html), "--bootstrap", "50"]) == 0
    assert "without --traces" in capsys.readouterr().out
    assert "Evidence and maps need the traces" in html.read_text()


def test_a_missing_answers_file_is_a_clear_error(qa, tmp_path, capsys):
    assert main(["report", str(qa), str(tmp_path / "nope.jsonl"), "--html", str(tmp_path / "r.html")]) == 2
    assert "no such answers file" in capsys.readouterr().err


def _screens(templates: dict[str, str], details: str) -> list[tuple[str, np.ndarray]]:
    """The screens a question's details show, in order: each one's caption and picture."""
    screens = re.search(r'<div class="screens">(.*?)<h4>', details, re.S)  # the evidence's heading follows
    if screens is None:
        return []
    shown = []
    for fragment in re.findall(r'data-fragment="(\w+)"', screens.group(1)):
        url, alt, caption = re.fullmatch(r'<figure class="screen"><img src="data:image/png;base64,([^"]+)" '
                                         rf'width="{SCREEN_CELL}" height="{SCREEN_CELL}" alt="([^"]+)">'
                                         r"<figcaption>(.*?)</figcaption></figure>", templates[fragment]).groups()
        assert alt == caption
        with Image.open(io.BytesIO(base64.b64decode(url, validate=True))) as image:
            assert image.format == "PNG"
            shown.append((caption, np.asarray(image)))
    return shown


def test_the_evidence_steps_screens_are_the_stored_frames(screens_page):
    html = screens_page.html.read_text()
    templates = _templates(html)
    with np.load(frames_path(screens_page.trace)) as archive:
        frames = archive["frames"]
    shown_anywhere, capped = set(), 0
    for n, q in enumerate(read_qa(screens_page.qa)):
        shown = _screens(templates, templates[f"q{n}"])
        steps = [0 if caption == "the start" else int(caption.removeprefix("after step ")) for caption, _ in shown]
        evidence = sorted(s for s in set(q["evidence"]) if s <= (q["horizon"] or len(frames) - 1))
        if len(evidence) > MAX_SCREENS:  # the cap: evenly chosen, the first and last kept
            assert len(steps) == MAX_SCREENS and set(steps) <= set(evidence)
            assert steps[0] == evidence[0] and steps[-1] == evidence[-1] and steps == sorted(steps)
            assert f"{MAX_SCREENS} of the {len(evidence)} evidence steps, evenly chosen." in templates[f"q{n}"]
            capped += 1
        else:
            assert steps == evidence, q["id"]
        for step, (_, picture) in zip(steps, shown):
            assert np.array_equal(picture, labelled_cell(frames[step], step, SCREEN_CELL))
        shown_anywhere.update(steps)
    assert shown_anywhere and capped
    assert html.count('<figure class="screen">') == len(shown_anywhere)  # each screen written once


def test_without_frames_the_page_shows_no_screens(page):
    html = page.read_text()
    assert "<img" not in html and 'class="screens"' not in html


@pytest.fixture(scope="module")
def sent_page(qa, traces, tmp_path_factory):
    """The page of three runs: model-a under last:3 with its first answer failed, model-b a memory whose
    retrieved steps are each question's evidence, and `stub`'s real answers with its request log."""
    from support.answering import answer, policy_for
    from support.openai_stub_server import ChatCompletionServer
    from qtc.runtime.qa.answers import Answer

    root = tmp_path_factory.mktemp("sent")
    questions = read_qa(qa)
    usage = {"prompt_tokens": 10, "completion_tokens": 1}

    def run(path, model, context, answer):
        path.write_text("".join(json.dumps(Answer(q["id"], model, context, *answer(n, q), f"r{n}", 1, usage, 0.1,
                                                  retrieved_steps=None if context != "memory" else q["evidence"]
                                                  ).record()) + "\n" for n, q in enumerate(questions)))
        return path

    windowed = run(root / "a.jsonl", "model-a", "last:3",
                   lambda n, q: ("", "context too long: about 9000 tokens") if n == 0 else (q["answer"], None))
    memory = run(root / "b.jsonl", "model-b", "memory", lambda n, q: (q["answer"], None))
    logged, log = root / "c.jsonl", root / "requests.jsonl"
    with ChatCompletionServer(policy_for(questions)) as server:
        assert answer(qa, traces, server.url, logged, "--context", "last:3", "--batch", "20", "--log-requests",
                      str(log)) == 0
    html = root / "report.html"
    assert main(["report", str(qa), str(windowed), str(memory), str(logged), "--traces", *map(str, traces),
                 "--requests", str(log), "--html", str(html), "--bootstrap", "20"]) == 0
    sent = {json.dumps(r["messages"][-1]["content"]) for r in server.requests}
    return html, sent


def test_failures_what_each_model_was_sent_and_recall(sent_page, qa, traces):
    from qtc.runtime.view.episodes import step_ranges

    questions = read_qa(qa)
    html_path, _ = sent_page
    html = unescape(html_path.read_text())
    assert f"{len(questions) - 1} of {len(questions)} answered" in html
    assert f"1 of {len(questions)} asked failed (context too long 1)" in html
    assert 'data-results="failed|' in html and "(failed: context too long: about 9000 tokens)" in html
    assert "evidence recall@1, 5, 10 % [95% CI]" in html and "100.0 [100.0, 100.0] · 100.0 [100.0, 100.0]" in html
    templates = _templates(html_path.read_text())
    lengths = dict(open_store(*traces).execute("SELECT episode_id, n_steps FROM episodes").fetchall())
    flagged = 0
    for n, q in enumerate(questions):
        details = unescape(templates[f"q{n}"])
        horizon = min(q["horizon"] or lengths[q["episode_id"]], lengths[q["episode_id"]])
        sent = range(horizon - 2, horizon + 1)
        outside = [s for s in q["evidence"] if s not in sent]
        summary = re.search(r"<summary>model-a \(context last:3\): (.*?)</summary>", details).group(1)
        assert summary.startswith(f"steps {horizon - 2}-{horizon}")
        if outside:
            assert f"{step_ranges(outside)} not in it" in summary
            flagged += 1
        else:
            assert "not in it" not in summary
        memory_summary = re.search(r"<summary>model-b \(retrieved by its memory\): (.*?)</summary>", details).group(1)
        assert "not in it" not in memory_summary
    assert flagged


def test_with_the_request_log_each_question_shows_the_request_as_sent(sent_page, qa):
    html_path, sent = sent_page
    templates = _templates(html_path.read_text())
    flagged = 0
    for n, q in enumerate(read_qa(qa)):
        details = unescape(templates[f"q{n}"])
        summary = re.search(r"<summary>stub \(the request as logged\): steps (\d+)-(\d+)(.*?)</summary>", details)
        first, last = int(summary.group(1)), int(summary.group(2))
        assert last - first == 2  # last:3, read from the logged prompt's blocks
        outside = [s for s in q["evidence"] if not first <= s <= last]
        assert ("not in it" in summary.group(3)) == bool(outside)
        flagged += bool(outside)
        fragment = re.search(r'the request as logged.*?data-fragment="(\w+)"', templates[f"q{n}"], re.S).group(1)
        request_text = unescape(re.search(r'<pre class="request">(.*?)</pre>', templates[fragment], re.S).group(1))
        assert json.dumps(request_text) in sent  # the user message exactly as it was sent
    assert flagged


def test_a_request_log_that_is_not_one_is_a_clear_error(qa, answer_files, tmp_path, capsys):
    assert main(["report", str(qa), str(answer_files[0]), "--requests", str(qa), "--html",
                 str(tmp_path / "r.html")]) == 2
    assert "not a request of qtc answer --log-requests" in capsys.readouterr().err


def test_a_textworld_room_question_shows_the_graph_of_the_moves_made(textworld_trace_dir, tmp_path):
    """TextWorld's figure is Jericho's (runtime/view/text_games.py): the rooms and moves known before the
    step, the path between where the player was at steps i and j drawn, as long as the answer."""
    qa = tmp_path / "qa.jsonl"
    assert main(["generate", "--traces", str(textworld_trace_dir), "--templates", str(TEMPLATES / "jericho/spatial.qtpl"),
                 "--max-per-template", "2", "--out", str(qa), "--quiet"]) == 0
    answers = write_answers(tmp_path / "a.jsonl", read_qa(qa), "model-a", lambda n, q: True)
    html = tmp_path / "report.html"
    assert main(["report", str(qa), str(answers), "--traces", str(textworld_trace_dir), "--html", str(html)]) == 0
    figures = _figures(html.read_text(), qa, "textworld.path_length_between_steps")
    for q, figure in figures:
        assert '<svg class="map rooms"' in figure and '<g class="room here">' in figure
        assert '<g class="room target">' in figure
        assert figure.count('<line class="edge path"') == int(q["answer"])
    assert figures
