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
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help="bootstrap resamples for the 95%% intervals (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")


def _cell(metrics: dict, name: str) -> str:
    value, interval = metrics[name], metrics[f"{name}_ci"]
    if value is None:
        return "-"
    text = f"{100 * value:.1f}"
    return f"{text} [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]" if interval else text


def run(args: argparse.Namespace) -> int:
    import sys

    from rich.console import Console
    from rich.table import Table

    from qtc.errors import UserError
    from qtc.runtime.qa.answers import read_answers
    from qtc.files import write_text_atomic
    from qtc.runtime.qa.questions import read_questions
    from qtc.runtime.evaluate.report import GROUPINGS, build_report, score_run

    by = [name.strip() for name in args.by.split(",") if name.strip()]
    unknown = [name for name in by if name not in GROUPINGS]
    if unknown:
        raise UserError(f"--by: unknown grouping {unknown[0]!r} (choose from {', '.join(GROUPINGS)})")
    if args.bootstrap <= 0:
        raise UserError(f"--bootstrap must be positive, got {args.bootstrap}")
    questions = read_questions(args.qa)
    if not args.answers.is_file():
        raise UserError(f"{args.answers}: no such answers file")
    answers = read_answers(args.answers)
    if answers.partial_line:
        print(f"warning: {args.answers}:{answers.partial_line}: a half-written last line was left out",
              file=sys.stderr)
    known = {q.id for q in questions}
    strangers = [i for i in answers.answers if i not in known]
    if strangers:
        print(f"warning: {len(strangers)} answer(s) in {args.answers} are to questions not in {args.qa} "
              f"(first: {strangers[0]}); they are left out", file=sys.stderr)
    report = build_report(score_run(questions, answers), by, resamples=args.bootstrap, seed=args.seed)
    requests, prompt_tokens, completion_tokens = answers.usage()
    report = {"qa": str(args.qa), "answers": str(args.answers), "model": answers.model, "context": answers.context,
              "usage": {"requests": requests, "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens}, **report}

    table = Table(title=f"{answers.model or 'no answers'} (context {answers.context or '-'}): "
                        f"{report['answered']} of {report['questions']} questions answered")
    table.add_column("group", no_wrap=True)
    for heading in ("n", "Acc % [95% CI]", "F1 % [95% CI]"):
        table.add_column(heading, justify="right", no_wrap=True)
    table.add_row("overall", str(report["overall"]["n"]), _cell(report["overall"], "accuracy"),
                  _cell(report["overall"], "f1"), end_section=True)
    for grouping, groups in report["by"].items():
        for i, (name, metrics) in enumerate(groups.items()):
            table.add_row(f"{grouping}: {name}", str(metrics["n"]), _cell(metrics, "accuracy"),
                          _cell(metrics, "f1"), end_section=i == len(groups) - 1)
    console = Console()
    if not console.is_terminal:  # a pipe or a file: rich would squeeze the table into 80 columns
        console = Console(width=TABLE_WIDTH)
    console.print(table)
    if args.out:
        write_text_atomic(args.out, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        print(f"report written to {args.out}")
    return 0
