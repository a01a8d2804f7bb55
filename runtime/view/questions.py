"""The report's table of questions: one row per question with every model's prediction and score side by
side, and each question's details, opened by its `+` or by a link to it (`#q-<id>`).

The details show the accepted answers, bindings, each model's prediction, score and (for a failed answer)
its error, with the traces: the screens of the evidence steps, the map of a spatial question, the
evidence steps as the answering prompt renders them, and for each model the steps it was actually sent
(from the request as logged by `qtc answer --log-requests` where given, else its answers' retrieved
steps or its context mode at the question's horizon), its evidence steps outside them flagged. Details that questions share (the same evidence of one episode, the same map, the
same sent log) are written once and copied in by the page's script when opened.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from qtc.runtime.evaluate.frames import thinned
from qtc.runtime.evaluate.report import ADVERSARIAL
from qtc.runtime.qa.answers import Answer
from qtc.runtime.qa.questions import Question

from .episodes import Episodes, in_context, step_ranges
from .requests import logged_steps, user_text

FILTERS = ("category", "template", "game", "model", "result")
RESULTS = ("right", "partly right", "wrong", "failed", "not asked")
# A question's screens: few, since each is a data URL in the page (about 3 KB at 128 pixels).
MAX_SCREENS = 8
MAX_SENT_STEPS = 40  # a sent log of more steps is described, not shown


def result_of(score: dict) -> str:
    """A model's result on a question, from its per-question score."""
    if score["prediction"] is None:
        return "not asked"
    if score["error"] is not None:
        return "failed"
    return "right" if score["score"] >= 1 else "partly right" if score["score"] > 0 else "wrong"


def anchor(q: Question) -> str:
    return f"q-{q.id}"


class Fragments:
    """Pieces of HTML shared by several questions' details, each written once under an id."""

    def __init__(self):
        self._ids: dict[object, str] = {}
        self.html: list[str] = []

    def placeholder(self, key, make) -> str:
        if key not in self._ids:
            self._ids[key] = f"f{len(self._ids)}"
            self.html.append(f'<template id="{self._ids[key]}">{make()}</template>')
        return f'<div class="fragment" data-fragment="{self._ids[key]}"></div>'


def _prediction_text(score: dict) -> str:
    if score["prediction"] is None:
        return "(not asked)"
    if score["error"] is not None:
        return f"(failed: {score['error']})"
    return score["prediction"]


def _sent_html(q: Question, name: str, answer: Answer | None, episodes: Episodes, fragments: Fragments,
               requests: dict[str, dict]) -> str:
    """What one model was sent for `q`: the steps (from the request as logged where the log holds it),
    the evidence outside them flagged, and the log itself (the logged request, or the rendered log when
    it is short)."""
    logged = requests.get(answer.request) if answer is not None else None
    shown = logged_steps(logged) if logged is not None else episodes.sent(q, answer)
    if shown is None:
        why = "not asked" if answer is None else f"context {answer.context}: the steps sent are not known"
        return f'<details class="sent"><summary>{escape(name)}: {escape(why)}</summary></details>'
    source = ("the request as logged" if logged is not None else "retrieved by its memory"
              if answer.retrieved_steps is not None else f"context {answer.context}")
    outside = [s for s in q.evidence if not in_context(s, shown)]
    flag = (f' <span class="outside">evidence step{"s" if len(outside) > 1 else ""} {step_ranges(outside)} '
            "not in it</span>" if outside else "")
    summary = f"{escape(name)} ({escape(source)}): steps {step_ranges(shown.actions)}{flag}"
    if logged is not None:
        body = fragments.placeholder(("request", answer.request), lambda: (
            f'<pre class="request">{escape(user_text(logged))}</pre><h4>Reply</h4>'
            f'<pre class="request">{escape(logged.get("reply") or logged.get("error") or "")}</pre>'))
    elif len(shown.actions) > MAX_SENT_STEPS:
        body = f'<p class="none">{len(shown.actions)} steps: too many to show here.</p>'
    else:
        body = fragments.placeholder(("log", q.episode_id, shown, tuple(q.evidence)),
                                     lambda: episodes.log_html(q, shown))
    return f'<details class="sent{" flagged" if outside else ""}"><summary>{summary}</summary>{body}</details>'


def _details(q: Question, names: list[str], answers: list[Answer | None], scores: list[dict],
             episodes: Episodes | None, fragments: Fragments, requests: dict[str, dict]) -> str:
    facts = [("question", q.question), ("answer", q.answer),
             ("accepted answers", ", ".join(q.references)),
             ("bindings", ", ".join(f"{k} = {v}" for k, v in q.bindings.items()) or "-"),
             ("episode", q.episode_id), ("horizon", "end of episode" if q.horizon is None else str(q.horizon)),
             ("evidence steps", ", ".join(map(str, q.evidence)) or "none (a false premise)"),
             ("answer type", q.answer_type), ("difficulty", q.difficulty or "-")]
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in facts)
    for name, answer, score in zip(names, answers, scores):
        note = "" if answer is None or answer.error is None or score["error"] is not None else \
            f'<span class="note">({escape(answer.error)})</span>'
        retrieved = "" if score["retrieved_steps"] is None else \
            f'<span class="note">retrieved steps {escape(", ".join(map(str, score["retrieved_steps"])))}</span>'
        kind = " failed" if score["error"] is not None else ""
        rows += (f'<tr><th>{escape(name)}</th><td class="prediction{kind}">{escape(_prediction_text(score))} '
                 f'<span class="score">score {score["score"]}</span>{note}{retrieved}</td></tr>')
    parts = [f'<table class="facts">{rows}</table>']
    if episodes is None:
        parts.append('<p class="none">Evidence and maps need the traces (--traces).</p>')
        return "".join(parts)
    figure = episodes.figure(q)
    if figure is not None:
        key, draw = figure
        parts.append('<h4>Map</h4><div class="figure-scroll">' + fragments.placeholder(("figure", key), draw) + "</div>")
    evidence = episodes.screen_evidence(q)
    if evidence:
        chosen = thinned(list(evidence), MAX_SCREENS)
        # Each screen is written once, however many questions show it.
        figures = "".join(fragments.placeholder(("screen", q.episode_id, step),
                                                lambda step=step: episodes.screen_figure(q.episode_id, step))
                          for step in chosen)
        note = (f'<p class="none">{len(chosen)} of the {len(evidence)} evidence steps, evenly chosen.</p>'
                if len(chosen) < len(evidence) else "")
        parts.append(f'<h4>Screens of the evidence steps</h4><div class="screens">{figures}</div>{note}')
    shown = episodes.evidence_shown(q)
    parts.append("<h4>Evidence steps, as a model is shown them</h4>" + fragments.placeholder(
        ("log", q.episode_id, shown, tuple(q.evidence)), lambda: episodes.log_html(q, shown)))
    parts.append("<h4>What each model was sent</h4>" + "".join(
        _sent_html(q, name, answer, episodes, fragments, requests) for name, answer in zip(names, answers)))
    return "".join(parts)


def _select(name: str, values: list[tuple[str, str]]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(label)}</option>' for v, label in values)
    return f'<label>{name} <select data-filter="{name}"><option value="">all</option>{options}</select></label>'


def questions_section(questions: list[Question], names: list[str], answer_sets: list, reports: list[dict],
                      episodes: Episodes | None, requests: dict[str, dict]) -> tuple[str, str]:
    """(the questions' section, the templates of their details and shared fragments); `requests` are the
    logged requests by id (requests.read_requests)."""
    per_question = [{s["id"]: s for s in report["per_question"]} for report in reports]
    fragments = Fragments()
    rows, details = [], []
    for n, q in enumerate(questions):
        category = ADVERSARIAL if q.adversarial else q.category
        scores = [pq[q.id] for pq in per_question]
        answers = [answer_set.answers.get(q.id) for answer_set in answer_sets]
        details.append(f'<template id="q{n}">{_details(q, names, answers, scores, episodes, fragments, requests)}</template>')
        results = [result_of(score) for score in scores]
        data = {"category": category, "template": q.template_id, "game": q.game, "results": "|".join(results)}
        attributes = " ".join(f'data-{k}="{escape(v)}"' for k, v in data.items())
        cells = "".join(f'<td class="prediction {result.replace(" ", "-")}" data-run="{i}">'
                        f'{escape(_prediction_text(score))}</td><td class="num {result.replace(" ", "-")}" '
                        f'data-run="{i}">{score["score"]}</td>'
                        for i, (score, result) in enumerate(zip(scores, results)))
        rows.append(f'<tr class="question" id="{escape(anchor(q))}" {attributes} data-details="q{n}">'
                    f'<td><button class="open" aria-expanded="false">+</button></td>'
                    f'<td><a class="link" href="#{escape(quote(anchor(q), safe=""))}">{escape(q.id)}</a></td>'
                    f"<td>{escape(q.game)}</td><td>{escape(category)}</td><td>{escape(q.template_id)}</td>"
                    f'<td class="text">{escape(q.question)}</td><td>{escape(q.answer)}</td>{cells}</tr>')
    values = {"category": sorted({ADVERSARIAL if q.adversarial else q.category for q in questions}),
              "template": sorted({q.template_id for q in questions}), "game": sorted({q.game for q in questions}),
              "result": list(RESULTS)}
    filters = "".join(_select(name, [(str(i), run) for i, run in enumerate(names)] if name == "model"
                              else [(v, v) for v in values[name]]) for name in FILTERS)
    fixed = ("", "id", "game", "category", "template", "question", "answer")
    head = "".join(f'<th{"" if not h else " class=sortable"}>{h}</th>' for h in fixed) + "".join(
        f'<th class="sortable" data-run="{i}">{escape(name)}</th><th class="sortable" data-run="{i}">score</th>'
        for i, name in enumerate(names))
    section = (f'<section id="questions"><h2>Questions</h2><div class="filters">'
               f'<label>search <input type="search" id="search" placeholder="any text of a row"></label>{filters} '
               f'<span id="shown"></span></div><p class="none">The result filter keeps a question when the chosen '
               f"model (or any model) has that result; a model chosen hides the others' columns. Click a heading "
               f'to sort.</p><table id="question-table"><thead><tr>{head}</tr></thead>'
               f"<tbody>{''.join(rows)}</tbody></table></section>")
    return section, "".join(details) + "".join(fragments.html)
