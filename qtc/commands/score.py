"""Score a model's answers against a QA set: per question, then Accuracy and F1 overall and per group.

Each question is scored by the rules of docs/evaluation.md (normalization, `not answerable` forms, a
typed scorer per answer type, the best of its accepted answers). Accuracy is the mean score; F1 takes
`not answerable` as the negative class. 95% confidence intervals are seeded bootstraps. A question the
answers file does not answer scores 0 and is counted. The table is printed; --out writes the report
(with every question's score) as JSON, atomically.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._scoring import add_bootstrap_arguments, by_groupings, check_bootstrap, score_file

TABLE_WIDTH = 140
COMMAND = "score"
HELP = "score answers against a QA set (Acc, F1, bootstrap CIs)"
EXAMPLES = """examples:
  qtc score --qa qa.jsonl --answers answers.jsonl
  qtc score --qa qa.jsonl --answers answers.jsonl --by category,template,game --out report.json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qa", type=Path, required=True, help="QA set (.jsonl or .parquet)")
    parser.add_argument("--answers", type=Path, required=True, help="answers file written by qtc answer")
    parser.add_argument("--by", default="category", metavar="GROUPINGS",
                        help="comma-separated groupings: category, template, game, env, answer_type, "
                             "difficulty (default category)")
    parser.add_argument("--out", type=Path, help="write the report as JSON here")
    parser.add_argument("--format", choices=tuple(FORMATS), default="table",
                        help="how the scores are printed: a table for the terminal (default), a Markdown "
                             "table, or CSV with the values and interval ends as fractions")
    add_bootstrap_arguments(parser)


def _title(report: dict) -> str:
    return (f"{report['model'] or 'no answers'} (context {report['context'] or '-'}): "
            f"{report['answered']} of {report['questions']} questions answered")


def _label(grouping: str, name: str) -> str:
    return name if grouping == "overall" else f"{grouping}: {name}"


def _ordered(report: dict) -> bool:
    """Whether the run has ordered questions, whose order credit then gets a column."""
    return report["overall"]["n_ordered"] > 0


def _order_cell(metrics: dict) -> str:
    """A group's mean order credit as a percentage, with how many ordered questions it is over."""
    credit = metrics["order_credit"]
    return "-" if credit is None else f"{100 * credit:.1f} (n={metrics['n_ordered']})"


def terminal_table(report: dict) -> str:
    from rich.console import Console
    from rich.table import Table

    from qtc.runtime.evaluate.report import percent_cell, report_rows

    table = Table(title=_title(report))
    table.add_column("group", no_wrap=True)
    ordered = _ordered(report)
    for heading in ("n", "Acc % [95% CI]", "F1 % [95% CI]", *(("Order %",) if ordered else ())):
        table.add_column(heading, justify="right", no_wrap=True)
    rows = report_rows(report)
    for i, (grouping, name, metrics) in enumerate(rows):
        last = i + 1 == len(rows) or rows[i + 1][0] != grouping
        table.add_row(_label(grouping, name), str(metrics["n"]), percent_cell(metrics, "accuracy"),
                      percent_cell(metrics, "f1"), *((_order_cell(metrics),) if ordered else ()), end_section=last)
    console = Console()
    if not console.is_terminal:  # a pipe or a file: rich would squeeze the table into 80 columns
        console = Console(width=TABLE_WIDTH)
    with console.capture() as captured:
        console.print(table)
    return captured.get()


def markdown_table(report: dict) -> str:
    from qtc.runtime.evaluate.report import percent_cell, report_rows

    ordered = _ordered(report)
    lines = [f"**{_title(report)}**", "", "| group | n | Acc % [95% CI] | F1 % [95% CI] |" + (" Order % |" if ordered else ""),
             "|---|---:|---:|---:|" + ("---:|" if ordered else "")]
    lines += [f"| {_label(grouping, name).replace('|', '/')} | {m['n']} | {percent_cell(m, 'accuracy')} | "
              f"{percent_cell(m, 'f1')} |" + (f" {_order_cell(m)} |" if ordered else "")
              for grouping, name, m in report_rows(report)]
    return "\n".join(lines) + "\n"


def csv_table(report: dict) -> str:
    import csv
    import io

    from qtc.runtime.evaluate.report import report_rows

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["grouping", "group", "n", "accuracy", "accuracy_low", "accuracy_high",
                     "f1", "f1_low", "f1_high", "n_ordered", "order_credit"])
    for grouping, name, m in report_rows(report):
        ends = [(m[f"{k}_ci"] or [None, None]) for k in ("accuracy", "f1")]
        writer.writerow(["" if v is None else v for v in (grouping, name, m["n"], m["accuracy"], *ends[0],
                                                             m["f1"], *ends[1], m["n_ordered"], m["order_credit"])])
    return text.getvalue()


FORMATS = {"table": terminal_table, "markdown": markdown_table, "csv": csv_table}


def run(args: argparse.Namespace) -> int:
    from qtc.files import write_text_atomic
    from qtc.runtime.qa.questions import read_questions

    by = by_groupings(args.by)
    check_bootstrap(args)
    questions = read_questions(args.qa)
    answers, report = score_file(args.qa, questions, args.answers, by, args)

    print(FORMATS[args.format](report), end="")
    if args.out:
        write_text_atomic(args.out, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        print(f"report written to {args.out}")
    return 0
