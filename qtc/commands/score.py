"""Score a model's answers against a QA set: per question, then Accuracy and F1 overall and per group.

Each question is scored by the rules of docs/evaluation.md (normalization, `not answerable` forms, a
typed scorer per answer type, the best of its accepted answers). Accuracy is the mean score; F1 takes
`not answerable` as the negative class. 95% confidence intervals are seeded bootstraps. A question whose
answer failed, or that the answers file does not answer, scores 0 and is counted, and a line under the
table counts them apart (failures by kind, with the Accuracy over the answered). Answers that carry the
steps a memory provider retrieved add evidence recall@k columns. The table is printed; --out writes the
report (with every question's score) as JSON, atomically.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._scoring import (add_bootstrap_arguments, add_traces_argument, by_groupings, check_bootstrap, episode_lengths,
                       score_file)

TABLE_WIDTH = 140
COMMAND = "score"
HELP = "score answers against a QA set (Acc, F1, bootstrap CIs)"
EXAMPLES = """examples:
  qtc score --qa qa.jsonl --answers answers.jsonl
  qtc score --qa qa.jsonl --answers answers.jsonl --by category,template,game --out report.json
  qtc score --qa qa.jsonl --answers answers.jsonl --by agent,episode_length,evidence_age --traces traces/
  qtc score --qa qa.jsonl --answers bm25.jsonl --by category,horizon,evidence_age --traces traces/   # where memory decays
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qa", type=Path, required=True, help="QA set (.jsonl or .parquet)")
    parser.add_argument("--answers", type=Path, required=True, help="answers file written by qtc answer")
    parser.add_argument("--by", default="category", metavar="GROUPINGS",
                        help="comma-separated groupings: category, template, game, env, answer_type, "
                             "difficulty, agent, seed, episode_length, evidence_depth, evidence_age, horizon "
                             "(default category)")
    add_traces_argument(parser)
    parser.add_argument("--out", type=Path, help="write the report as JSON here")
    parser.add_argument("--format", choices=tuple(FORMATS), default="table",
                        help="how the scores are printed: a table for the terminal (default), a Markdown "
                             "table, or CSV with the values and interval ends as fractions")
    add_bootstrap_arguments(parser)


def _title(report: dict) -> str:
    failed = f", {report['failed']} failed" if report["failed"] else ""
    return (f"{report['model'] or 'no answers'} (context {report['context'] or '-'}): "
            f"{report['answered']} of {report['questions']} questions answered{failed}")


def _label(grouping: str, name: str) -> str:
    return name if grouping == "overall" else f"{grouping}: {name}"


def _ordered(report: dict) -> bool:
    """Whether the run has ordered questions, whose order credit then gets a column."""
    return report["overall"]["n_ordered"] > 0


def _recall_columns(report: dict) -> list[tuple[str, str]]:
    """(heading, metric) of the evidence recall@k columns: one per k when the run's answers carry the
    steps a memory provider retrieved, none otherwise."""
    from qtc.runtime.evaluate.report import RECALL_KS, recall_name

    if not report["overall"]["n_retrieved"]:
        return []
    return [(f"R@{k} % [95% CI]", recall_name(k)) for k in RECALL_KS]


def _recall_cells(report: dict, metrics: dict) -> list[str]:
    """The group's count of questions with retrieved steps and evidence, then its recall@k cells."""
    from qtc.runtime.evaluate.report import percent_cell

    return [str(metrics["n_retrieved"]), *(percent_cell(metrics, name) for _, name in _recall_columns(report))]


def notes(report: dict) -> str:
    """The lines under the table: the failed and unasked questions, the spread across seeds, what recall@k is."""
    from qtc.runtime.evaluate.report import failures_line

    lines = [failures_line(report)]
    if _recall_columns(report):
        lines.append("R@k: evidence recall@k, the share of a question's evidence steps among the first k steps the "
                     "memory retrieved, over the n questions with retrieved steps and evidence")
    return "".join(f"{line}\n" for line in lines if line) + seeds_line(report)


def _order_cell(metrics: dict) -> str:
    """A group's mean order credit as a percentage, with how many ordered questions it is over."""
    credit = metrics["order_credit"]
    return "-" if credit is None else f"{100 * credit:.1f} (n={metrics['n_ordered']})"


def seeds_line(report: dict) -> str:
    """The spread of Accuracy across episode seeds, a line under the table ('' with fewer than two)."""
    spread = report["seeds"]
    if spread is None:
        return ""
    return (f"Accuracy across {spread['n']} episode seeds: mean {100 * spread['accuracy_mean']:.1f}, "
            f"std {100 * spread['accuracy_std']:.1f}, min {100 * spread['accuracy_min']:.1f}, "
            f"max {100 * spread['accuracy_max']:.1f}\n")


def _rich_table(title: str, headings: list[str], rows: list[tuple[str, list[str]]]) -> object:
    """A terminal table: the group column, then right-aligned cells, a rule under each grouping."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("group", no_wrap=True)
    for heading in headings:
        table.add_column(heading, justify="right", no_wrap=True)
    for i, (grouping, cells) in enumerate(rows):
        table.add_row(grouping[1], *cells, end_section=i + 1 == len(rows) or rows[i + 1][0][0] != grouping[0])
    return table


def terminal_table(report: dict) -> str:
    from rich.console import Console

    from qtc.runtime.evaluate.report import percent_cell, report_rows

    ordered = _ordered(report)
    rows = report_rows(report)
    tables = [_rich_table(_title(report), ["n", "Acc % [95% CI]", "F1 % [95% CI]", *(["Order %"] if ordered else [])],
                          [((grouping, _label(grouping, name)),
                            [str(m["n"]), percent_cell(m, "accuracy"), percent_cell(m, "f1"),
                             *([_order_cell(m)] if ordered else [])]) for grouping, name, m in rows])]
    recall = _recall_columns(report)
    if recall:  # a table of its own: beside the others it would not fit a terminal's width
        tables.append(_rich_table("Evidence recall@k of the retrieved steps", ["n", *(h for h, _ in recall)],
                                  [((grouping, _label(grouping, name)), _recall_cells(report, m))
                                   for grouping, name, m in rows]))
    console = Console()
    if not console.is_terminal:  # a pipe or a file: rich would squeeze the table into 80 columns
        console = Console(width=TABLE_WIDTH)
    with console.capture() as captured:
        for table in tables:
            console.print(table)
    return captured.get() + notes(report)


def markdown_table(report: dict) -> str:
    from qtc.runtime.evaluate.report import percent_cell, report_rows

    ordered = _ordered(report)
    recall = _recall_columns(report)
    lines = [f"**{_title(report)}**", "",
             "| group | n | Acc % [95% CI] | F1 % [95% CI] |" + (" Order % |" if ordered else "")
             + ("".join(f" {heading} |" for heading in ["n retrieved", *(h for h, _ in recall)]) if recall else ""),
             "|---|---:|---:|---:|" + ("---:|" if ordered else "") + "---:|" * (len(recall) + bool(recall))]
    lines += [f"| {_label(grouping, name).replace('|', '/')} | {m['n']} | {percent_cell(m, 'accuracy')} | "
              f"{percent_cell(m, 'f1')} |" + (f" {_order_cell(m)} |" if ordered else "")
              + ("".join(f" {cell} |" for cell in _recall_cells(report, m)) if recall else "")
              for grouping, name, m in report_rows(report)]
    below = notes(report)
    return "\n".join(lines) + "\n" + (f"\n{below}" if below else "")


def csv_table(report: dict) -> str:
    import csv
    import io

    from qtc.runtime.evaluate.report import RECALL_KS, recall_name, report_rows

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    recalls = [recall_name(k) for k in RECALL_KS]
    writer.writerow(["grouping", "group", "n", "accuracy", "accuracy_low", "accuracy_high",
                     "f1", "f1_low", "f1_high", "n_ordered", "order_credit", "n_retrieved",
                     *(f"{name}{end}" for name in recalls for end in ("", "_low", "_high"))])
    for grouping, name, m in report_rows(report):
        ends = [(m[f"{k}_ci"] or [None, None]) for k in ("accuracy", "f1", *recalls)]
        recall_values = [v for r, (low, high) in zip(recalls, ends[2:]) for v in (m[r], low, high)]
        writer.writerow(["" if v is None else v for v in (grouping, name, m["n"], m["accuracy"], *ends[0],
                                                             m["f1"], *ends[1], m["n_ordered"], m["order_credit"],
                                                             m["n_retrieved"], *recall_values)])
    return text.getvalue()


FORMATS = {"table": terminal_table, "markdown": markdown_table, "csv": csv_table}


def run(args: argparse.Namespace) -> int:
    from qtc.files import write_text_atomic
    from qtc.runtime.qa.questions import read_questions

    by = by_groupings(args.by)
    check_bootstrap(args)
    questions = read_questions(args.qa)
    lengths = episode_lengths(args.traces)
    answers, report = score_file(args.qa, questions, args.answers, by, args, lengths)
    unseen = sum(q.horizon is None and q.episode_id not in lengths for q in questions)
    if unseen and {"episode_length", "evidence_age"} & set(by):
        print(f"warning: {unseen} question(s) have no horizon and no episode length: they are grouped as "
              "'unknown' by episode_length and evidence_age (give the traces with --traces)", file=sys.stderr)

    print(FORMATS[args.format](report), end="")
    if args.out:
        write_text_atomic(args.out, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        print(f"report written to {args.out}")
    return 0
