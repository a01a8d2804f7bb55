"""The HTML report: one self-contained page of a QA set and the answers of several models.

It shows the scoring report's numbers as they are (`runtime/evaluate/report.py`: Accuracy and F1 with
their bootstrap intervals, overall, per category, per template, per horizon and per evidence age, one bar
per model; evidence recall@k where a run's answers carry retrieved steps; a mark on intervals over few
questions), each run's failed and unasked questions, and the table of every question with the models side
by side (`questions.py`), which searches, filters, sorts and links to one question. Nothing is fetched
when the page is viewed.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

import duckdb

from qtc.runtime.evaluate.report import RECALL_KS, failures_line, group_key, percent_cell, recall_name
from qtc.runtime.qa.answers import AnswerSet
from qtc.runtime.qa.questions import Question

from .assets import SCRIPT, STYLE
from .charts import bar_chart, legend
from .episodes import Episodes
from .questions import questions_section

# The groupings the page charts (the report must hold them): where a model is right, and where its
# memory decays (by the question's horizon, and by how long before it the evidence lies).
GROUPINGS = ("category", "template", "horizon", "evidence_age")
SMALL_N = 30  # a group of fewer questions has its intervals marked: a percentile bootstrap over so few is rough
SMALL_N_NOTE = (f"fewer than {SMALL_N} questions: the interval is wide, and a percentile bootstrap over so few "
                "questions is itself rough")


@dataclass(frozen=True)
class Run:
    """One model's answers to the QA set, with their scoring report (`build_report`'s)."""
    name: str
    answers: AnswerSet
    report: dict


def _small(m: dict) -> str:
    return f' <span class="small-n" title="{escape(SMALL_N_NOTE)}">†</span>' if m["n"] < SMALL_N else ""


def _recall_cell(m: dict) -> str:
    if not m["n_retrieved"]:
        return "-"
    return " · ".join(percent_cell(m, recall_name(k)) for k in RECALL_KS) + f' (n={m["n_retrieved"]})'


def _metrics_table(runs: list[Run], rows: list[tuple[str, list[dict | None]]]) -> str:
    """Each row's metrics per run: n, Accuracy and F1 with their intervals, and evidence recall@k where a
    run's answers carry retrieved steps."""
    recall = any(run.report["overall"]["n_retrieved"] for run in runs)
    columns = 3 if recall else 2
    head = "".join(f'<th colspan="{columns}">{escape(run.name)}</th>' for run in runs)
    recall_heading = f"<th>evidence recall@{', '.join(map(str, RECALL_KS))} % [95% CI]</th>" if recall else ""
    sub = "".join(f"<th>n</th><th>Acc % [95% CI] · F1 % [95% CI]</th>{recall_heading}" for _ in runs)
    body = []
    for label, cells in rows:
        tds = "".join(f'<td class="n">{m["n"]}</td><td class="num">{percent_cell(m, "accuracy")} · '
                      f'{percent_cell(m, "f1")}{_small(m)}</td>'
                      + (f'<td class="num">{_recall_cell(m)}</td>' if recall else "")
                      if m else '<td class="n">-</td>' + "<td>-</td>" * (columns - 1) for m in cells)
        body.append(f"<tr><th>{escape(label)}</th>{tds}</tr>")
    small = any(m and m["n"] < SMALL_N for _, cells in rows for m in cells)
    note = f'<p class="none">† {escape(SMALL_N_NOTE)}.</p>' if small else ""
    return (f'<table class="metrics"><thead><tr><th></th>{head}</tr><tr><th></th>{sub}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>{note}")


def _grouping_section(runs: list[Run], grouping: str) -> str:
    groups = sorted(dict.fromkeys(name for run in runs for name in run.report["by"][grouping]), key=group_key)
    values = [[run.report["by"][grouping].get(name) for name in groups] for run in runs]
    series = [(run.name, v) for run, v in zip(runs, values)]
    charts = "".join(f'<figure><figcaption>{title} % per {grouping}</figcaption>'
                     f'{bar_chart(f"{title} per {grouping}", groups, series, metric)}</figure>'
                     for metric, title in (("accuracy", "Accuracy"), ("f1", "F1")))
    table = _metrics_table(runs, [(name, [v[i] for v in values]) for i, name in enumerate(groups)])
    return (f'<section id="by-{grouping}"><h2>Per {grouping}</h2>{legend([r.name for r in runs])}'
            f'<div class="charts">{charts}</div>{table}</section>')


def build_page(title: str, questions: list[Question], runs: list[Run], con: duckdb.DuckDBPyConnection | None,
               requests: dict[str, dict] | None = None) -> str:
    """The report page. Each run's report must group by GROUPINGS; `con` (the trace store
    of the questions' episodes) gives the evidence and maps, which are left out without it; `requests`
    (logged requests by id) show what each model was sent as it was sent."""
    episodes = Episodes(con) if con is not None else None
    overview = _metrics_table(runs, [("overall", [run.report["overall"] for run in runs])])
    models = "".join(
        f"<li><b>{escape(run.name)}</b>: model {escape(run.answers.model or '-')}, context "
        f"{escape(run.answers.context or '-')}, {run.report['answered']} of {run.report['questions']} answered, "
        f"{run.report['usage']['prompt_tokens']} prompt and {run.report['usage']['completion_tokens']} "
        f"completion tokens in {run.report['usage']['requests']} requests"
        + (f'<br><span class="failures">{escape(failures_line(run.report))}</span>' if failures_line(run.report) else "")
        + "</li>" for run in runs)
    bootstrap = runs[0].report["bootstrap"] if runs else {}
    questions_html, templates = questions_section(questions, [run.name for run in runs],
                                                  [run.answers for run in runs], [run.report for run in runs],
                                                  episodes, requests or {})
    body = (f"<h1>{escape(title)}</h1><p>{len(questions)} questions; intervals are {bootstrap.get('level', 0.95):.0%} "
            f"percentile bootstraps ({bootstrap.get('resamples')} resamples, seed {bootstrap.get('seed')}).</p>"
            f"<ul>{models}</ul><section id=\"overall\"><h2>Overall</h2>{overview}</section>"
            + "".join(_grouping_section(runs, grouping) for grouping in GROUPINGS) + questions_html + templates)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<meta name=\"generator\" content=\"qtc report\"><style>{STYLE}</style></head><body>{body}"
            f"<script>{SCRIPT}</script></body></html>\n")
