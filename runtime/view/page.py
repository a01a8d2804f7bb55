"""The HTML report: one self-contained page of a QA set and the answers of several models.

It shows the scoring report's numbers as they are (`runtime/evaluate/report.py`: Accuracy and F1 with
their bootstrap intervals, overall, per category and per template, one bar per model), and a table of
every question and model that filters by category, template, game, model and result. A question's
row opens on its details: the accepted answers, bindings, each model's prediction and score, its
evidence steps as the answering prompt renders them (evidence blocks highlighted), the screens of a
Crafter question's evidence steps when its episode was recorded with frames (labelled as a model is shown
them, at most MAX_SCREENS, evenly chosen), and for a spatial question the Crafter map or the Jericho room
graph it asks about. Details that questions share (the same evidence of one episode, the same map) are
written once and copied in by the page's script when opened, which keeps the file small. Nothing is
fetched when the page is viewed.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Callable

import duckdb

from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.evaluate.context import ContextMode, context_blocks, crafter_legend, shown_steps
from qtc.runtime.evaluate.frames import screen_url, thinned
from qtc.runtime.evaluate.report import ADVERSARIAL, percent_cell
from qtc.runtime.qa.answers import AnswerSet
from qtc.runtime.qa.questions import Question
from qtc.runtime.spatial.udf import SpatialData
from qtc.runtime.trace.frames import episode_frames, frames_file

from .charts import bar_chart, legend
from .maps import crafter_map, room_graph

EVIDENCE = ContextMode.parse("evidence")
GROUPINGS = ("category", "template")  # the groupings the page charts; the report must hold them
FILTERS = ("category", "template", "game", "model", "result")
# A question's screens: few, since each is a data URL in the page (about 3 KB at 128 pixels).
MAX_SCREENS = 8
SCREEN_CELL = 128  # pixels a side: the 64-pixel screen at twice its size, its step in the corner


@dataclass(frozen=True)
class Run:
    """One model's answers to the QA set, with their scoring report (`build_report`'s)."""
    name: str
    answers: AnswerSet
    report: dict


def result_of(score: float | None) -> str:
    return "unanswered" if score is None else "right" if score >= 1 else "partly right" if score > 0 else "wrong"


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


class Episodes:
    """What the details read from the trace store: episode lengths, rendered evidence, maps, graphs."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.lengths = dict(con.execute("SELECT episode_id, n_steps FROM episodes").fetchall())
        self.spatial = SpatialData(con)
        self.rows = EpisodeRows(con)

    def horizon(self, q: Question) -> int:
        n = self.lengths[q.episode_id]
        return n if q.horizon is None else min(q.horizon, n)

    def evidence_html(self, q: Question) -> str:
        shown = shown_steps(EVIDENCE, self.horizon(q), q.evidence)
        blocks = context_blocks(self.rows, q.episode_id, q.env, shown)
        evidence = set(q.evidence)
        parts = [f'<pre class="legend">{escape(crafter_legend())}</pre>'] if q.env == "crafter" else []
        for block in blocks:
            marked = block.step in evidence and (block.action or block.step == 0)
            parts.append(f'<pre class="block{" evidence" if marked else ""}">{escape(block.text)}</pre>')
        return "".join(parts) or '<p class="none">(no steps are shown)</p>'

    def screen_evidence(self, q: Question) -> tuple[int, ...]:
        """A Crafter question's evidence steps up to its horizon, whose screens the page shows; none when
        its episode was recorded without frames."""
        if q.env != "crafter" or frames_file(self.con, q.episode_id) is None:
            return ()
        return tuple(sorted({s for s in q.evidence if 0 <= s <= self.horizon(q)}))

    def screen_figure(self, episode_id: str, step: int) -> str:
        url = screen_url(episode_frames(self.con, episode_id)[step], step, SCREEN_CELL)
        return (f'<figure class="screen"><img src="{url}" width="{SCREEN_CELL}" height="{SCREEN_CELL}" '
                f'alt="{_screen_name(step)}"><figcaption>{_screen_name(step)}</figcaption></figure>')

    def room_names(self, episode_id: str) -> dict[int, str]:
        return dict(self.rows.execute("SELECT room, coalesce(display_name, name) FROM {jericho_rooms}",
                                      episode_id).fetchall())

    def room_before(self, episode_id: str, step: int) -> int | None:
        row = self.rows.execute("SELECT room_before FROM {jericho_steps} WHERE step = $step", episode_id,
                                step=step).fetchone()
        return row[0] if row else None

    def figure(self, q: Question) -> tuple[object, Callable[[], str]] | None:
        """(what the figure depends on, a function drawing it) for a spatial question, else None."""
        if q.category != "spatial":
            return None
        step = _step_binding(q, ("t", "j", "R", "L")) or min((s for s in q.evidence if s >= 1), default=None)
        if step is None:
            return None
        if q.env == "crafter":
            material = q.bindings.get("material")
            maps = self.spatial.episode("crafter", q.episode_id).state
            return (q.episode_id, step, material), lambda: crafter_map(maps, step, material) if maps else ""
        history = self.spatial.episode("jericho", q.episode_id).state
        names = self.room_names(q.episode_id)
        here = self.room_before(q.episode_id, _step_binding(q, ("i",)) or step)
        if here is None:
            return None
        # A room parameter is bound to the room's number; a location answer names the room.
        by_name = {name: room for room, name in names.items()}
        bound = _step_binding(q, ("target",))
        named = q.answer if q.answer_type == "location" and not q.adversarial else None
        target = bound if bound is not None else by_name.get(named)
        if "j" in q.bindings and "i" in q.bindings:  # a path between where you were at steps i and j
            target = self.room_before(q.episode_id, step)
        return ((q.episode_id, step, here, target),
                lambda: room_graph(history.graph_before(step), names, here, target))


def _screen_name(step: int) -> str:
    return "the start" if step == 0 else f"after step {step}"


def _step_binding(q: Question, names: tuple[str, ...]) -> int | None:
    """The first of the bindings `names` that the question binds to a number (a step or a room)."""
    for name in names:
        value = q.bindings.get(name)
        if value is not None and str(value).isdigit():
            return int(value)
    return None


def _metrics_table(runs: list[Run], rows: list[tuple[str, list[dict | None]]]) -> str:
    head = "".join(f'<th colspan="2">{escape(run.name)}</th>' for run in runs)
    sub = "".join("<th>n</th><th>Acc % [95% CI] · F1 % [95% CI]</th>" for _ in runs)
    body = []
    for label, cells in rows:
        tds = "".join(f'<td class="n">{m["n"]}</td><td class="num">{percent_cell(m, "accuracy")} · '
                      f'{percent_cell(m, "f1")}</td>' if m else '<td class="n">-</td><td>-</td>' for m in cells)
        body.append(f"<tr><th>{escape(label)}</th>{tds}</tr>")
    return (f'<table class="metrics"><thead><tr><th></th>{head}</tr><tr><th></th>{sub}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def _grouping_section(runs: list[Run], grouping: str) -> str:
    groups = list(dict.fromkeys(name for run in runs for name in run.report["by"][grouping]))
    values = [[run.report["by"][grouping].get(name) for name in groups] for run in runs]
    series = [(run.name, v) for run, v in zip(runs, values)]
    charts = "".join(f'<figure><figcaption>{title} % per {grouping}</figcaption>'
                     f'{bar_chart(f"{title} per {grouping}", groups, series, metric)}</figure>'
                     for metric, title in (("accuracy", "Accuracy"), ("f1", "F1")))
    table = _metrics_table(runs, [(name, [v[i] for v in values]) for i, name in enumerate(groups)])
    return (f'<section id="by-{grouping}"><h2>Per {grouping}</h2>{legend([r.name for r in runs])}'
            f'<div class="charts">{charts}</div>{table}</section>')


def _select(name: str, values: list[str]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return f'<label>{name} <select data-filter="{name}"><option value="">all</option>{options}</select></label>'


def _question_details(q: Question, runs: list[Run], scores: list[dict], episodes: Episodes | None,
                      fragments: Fragments) -> str:
    facts = [("question", q.question), ("answer", q.answer),
             ("accepted answers", ", ".join(q.references)),
             ("bindings", ", ".join(f"{k} = {v}" for k, v in q.bindings.items()) or "-"),
             ("episode", q.episode_id), ("horizon", "end of episode" if q.horizon is None else str(q.horizon)),
             ("evidence steps", ", ".join(map(str, q.evidence)) or "none (a false premise)"),
             ("answer type", q.answer_type), ("difficulty", q.difficulty or "-")]
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in facts)
    for run, score in zip(runs, scores):
        shown = "(no answer)" if score["prediction"] is None else score["prediction"]
        rows += (f'<tr><th>{escape(run.name)}</th><td>{escape(shown)} '
                 f'<span class="score">score {score["score"]}</span></td></tr>')
    parts = [f'<table class="facts">{rows}</table>']
    if episodes is None:
        parts.append('<p class="none">Evidence and maps need the traces (--traces).</p>')
        return "".join(parts)
    figure = episodes.figure(q)
    if figure is not None:
        key, draw = figure
        parts.append("<h4>Map</h4>" + fragments.placeholder(("figure", key), draw))
    evidence = episodes.screen_evidence(q)
    if evidence:
        shown = thinned(list(evidence), MAX_SCREENS)
        # Each screen is written once, however many questions show it.
        figures = "".join(fragments.placeholder(("screen", q.episode_id, step),
                                                lambda step=step: episodes.screen_figure(q.episode_id, step))
                          for step in shown)
        note = (f'<p class="none">{len(shown)} of the {len(evidence)} evidence steps, evenly chosen.</p>'
                if len(shown) < len(evidence) else "")
        parts.append(f'<h4>Screens of the evidence steps</h4><div class="screens">{figures}</div>{note}')
    parts.append("<h4>Evidence, as the model is shown it</h4>" + fragments.placeholder(
        ("evidence", q.episode_id, shown_steps(EVIDENCE, episodes.horizon(q), q.evidence), tuple(q.evidence)),
        lambda: episodes.evidence_html(q)))
    return "".join(parts)


def _questions_section(questions: list[Question], runs: list[Run], episodes: Episodes | None) -> tuple[str, str]:
    per_question = [{s["id"]: s for s in run.report["per_question"]} for run in runs]
    fragments = Fragments()
    rows, details = [], []
    for n, q in enumerate(questions):
        category = ADVERSARIAL if q.adversarial else q.category
        scores = [pq[q.id] for pq in per_question]
        details.append(f'<template id="q{n}">{_question_details(q, runs, scores, episodes, fragments)}</template>')
        for run, score in zip(runs, scores):
            result = result_of(None if score["prediction"] is None else score["score"])
            data = {"category": category, "template": q.template_id, "game": q.game, "model": run.name,
                    "result": result}
            attributes = " ".join(f'data-{k}="{escape(v)}"' for k, v in data.items())
            prediction = "" if score["prediction"] is None else score["prediction"]
            rows.append(f'<tr class="question {result.replace(" ", "-")}" {attributes} data-details="q{n}">'
                        f'<td><button class="open" aria-expanded="false">+</button></td>'
                        f"<td>{escape(q.id)}</td><td>{escape(q.game)}</td><td>{escape(category)}</td>"
                        f"<td>{escape(q.template_id)}</td><td>{escape(run.name)}</td>"
                        f'<td class="text">{escape(q.question)}</td><td>{escape(q.answer)}</td>'
                        f"<td>{escape(prediction)}</td><td class=\"num\">{score['score']}</td></tr>")
    values = {"category": sorted({r for r in (ADVERSARIAL if q.adversarial else q.category for q in questions)}),
              "template": sorted({q.template_id for q in questions}), "game": sorted({q.game for q in questions}),
              "model": [run.name for run in runs], "result": ["right", "partly right", "wrong", "unanswered"]}
    filters = "".join(_select(name, values[name]) for name in FILTERS)
    head = "".join(f"<th>{h}</th>" for h in ("", "id", "game", "category", "template", "model", "question",
                                             "answer", "prediction", "score"))
    section = (f'<section id="questions"><h2>Questions</h2><div class="filters">{filters} '
               f'<span id="shown"></span></div><table id="question-table"><thead><tr>{head}</tr></thead>'
               f"<tbody>{''.join(rows)}</tbody></table></section>")
    return section, "".join(details) + "".join(fragments.html)


STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}h4{margin:.8em 0 .3em}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 6px;border-bottom:1px solid #eee;text-align:left;
vertical-align:top}.num,.n{text-align:right;white-space:nowrap}.charts{display:flex;flex-wrap:wrap;gap:1em}
svg.chart .grid{stroke:#ddd}svg.chart .tick,svg.chart .group{font-size:10px;fill:#444}svg.chart .ci{stroke:#000;
stroke-width:1.2;fill:none}.legend span{margin-right:1em}.filters{margin:.5em 0;display:flex;gap:1em;flex-wrap:wrap}
tr.question.right td:last-child{background:#d8f0d8}tr.question.wrong td:last-child{background:#f6d5d5}
tr.question.partly-right td:last-child{background:#fbeec8}tr.question.unanswered td:last-child{background:#eee}
td.text{max-width:420px}button.open{width:2em}tr.details>td{background:#fafafa;padding:.5em 1em}
pre{margin:2px 0;padding:3px 6px;font-size:12px;white-space:pre-wrap}pre.block{border-left:3px solid #ddd}
pre.evidence{background:#fff6c4;border-left-color:#e0a800}pre.legend{color:#666}.score{color:#666;margin-left:1em}
svg.rooms line.edge{stroke:#999;stroke-width:1.2}svg.rooms line.path{stroke:#d81b60;stroke-width:3}
svg.rooms rect{fill:#fff;stroke:#666}svg.rooms .here rect{fill:#bbdefb;stroke:#0d47a1}
svg.rooms .target rect{fill:#ffe082;stroke:#b28900}svg.rooms .on-path rect{stroke:#d81b60}
svg.rooms text{font-size:11px}.screens{display:flex;flex-wrap:wrap;gap:6px}
figure.screen img{image-rendering:pixelated;display:block}figure.screen figcaption{font-weight:400;font-size:12px}
figure{margin:0}figcaption{font-size:13px;font-weight:600}.none{color:#777;font-style:italic}
"""

SCRIPT = """
(function () {
  const rows = Array.from(document.querySelectorAll('#question-table tr.question'));
  const selects = Array.from(document.querySelectorAll('select[data-filter]'));
  function fill(root) {
    root.querySelectorAll('div.fragment').forEach(function (slot) {
      const source = document.getElementById(slot.dataset.fragment);
      slot.replaceWith(source.content.cloneNode(true));
    });
  }
  function applyFilters() {
    let shown = 0;
    rows.forEach(function (row) {
      const keep = selects.every(function (s) { return !s.value || row.dataset[s.dataset.filter] === s.value; });
      row.hidden = !keep;
      if (row.nextElementSibling && row.nextElementSibling.classList.contains('details')) {
        row.nextElementSibling.hidden = !keep;
      }
      if (keep) { shown += 1; }
    });
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' rows';
  }
  rows.forEach(function (row) {
    row.querySelector('button.open').addEventListener('click', function (event) {
      const button = event.currentTarget;
      const open = row.nextElementSibling && row.nextElementSibling.classList.contains('details');
      if (open) {
        row.nextElementSibling.remove();
        button.textContent = '+';
        button.setAttribute('aria-expanded', 'false');
        return;
      }
      const details = document.createElement('tr');
      details.className = 'details';
      const cell = document.createElement('td');
      cell.colSpan = row.children.length;
      cell.appendChild(document.getElementById(row.dataset.details).content.cloneNode(true));
      fill(cell);
      details.appendChild(cell);
      row.after(details);
      button.textContent = '\u2212';
      button.setAttribute('aria-expanded', 'true');
    });
  });
  selects.forEach(function (s) { s.addEventListener('change', applyFilters); });
  applyFilters();
})();
"""


def build_page(title: str, questions: list[Question], runs: list[Run], con: duckdb.DuckDBPyConnection | None) -> str:
    """The report page. Each run's report must group by category and template; `con` (the trace store
    of the questions' episodes) gives the evidence and maps, which are left out without it."""
    episodes = Episodes(con) if con is not None else None
    overview = _metrics_table(runs, [("overall", [run.report["overall"] for run in runs])])
    models = "".join(
        f"<li><b>{escape(run.name)}</b>: model {escape(run.answers.model or '-')}, context "
        f"{escape(run.answers.context or '-')}, {run.report['answered']} of {run.report['questions']} answered, "
        f"{run.report['usage']['prompt_tokens']} prompt and {run.report['usage']['completion_tokens']} "
        f"completion tokens in {run.report['usage']['requests']} requests</li>" for run in runs)
    bootstrap = runs[0].report["bootstrap"] if runs else {}
    questions_html, templates = _questions_section(questions, runs, episodes)
    body = (f"<h1>{escape(title)}</h1><p>{len(questions)} questions; intervals are {bootstrap.get('level', 0.95):.0%} "
            f"percentile bootstraps ({bootstrap.get('resamples')} resamples, seed {bootstrap.get('seed')}).</p>"
            f"<ul>{models}</ul><section id=\"overall\"><h2>Overall</h2>{overview}</section>"
            + "".join(_grouping_section(runs, grouping) for grouping in GROUPINGS) + questions_html + templates)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<meta name=\"generator\" content=\"qtc report\"><style>{STYLE}</style></head><body>{body}"
            f"<script>{SCRIPT}</script></body></html>\n")
