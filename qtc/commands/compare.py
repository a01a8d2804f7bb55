"""Compare two models' answers to one QA set: the second's Accuracy and F1 minus the first's, overall
and per group, with paired bootstrap 95% intervals (each resample draws the same questions for both,
so the spread of the questions' difficulty cancels out). An interval that excludes 0 is a difference
the question sample supports. Each run's own scores are `qtc score`'s.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._scoring import (add_bootstrap_arguments, add_traces_argument, by_groupings, check_bootstrap, episode_lengths,
                       read_run)

COMMAND = "compare"
HELP = "paired differences of two answer files on one QA set, with paired bootstrap intervals"
EXAMPLES = """examples:
  qtc compare gpt-4o-mini.jsonl qwen.jsonl --qa qa.jsonl
  qtc compare full.jsonl last50.jsonl --qa qa.jsonl --by category,template --format markdown --out diff.json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("first", type=Path, metavar="ANSWERS_A", help="answers file of the baseline")
    parser.add_argument("second", type=Path, metavar="ANSWERS_B", help="answers file compared with it (B - A)")
    parser.add_argument("--qa", type=Path, required=True, help="QA set both answer (.jsonl or .parquet)")
    parser.add_argument("--by", default="category", metavar="GROUPINGS",
                        help="comma-separated groupings, as for qtc score (default category)")
    parser.add_argument("--format", choices=("table", "markdown", "csv"), default="table",
                        help="how the differences are printed (default table)")
    parser.add_argument("--out", type=Path, help="write the comparison as JSON here")
    add_traces_argument(parser)
    add_bootstrap_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import csv
    import io

    from qtc.errors import UserError
    from qtc.files import write_text_atomic
    from qtc.runtime.evaluate.report import build_comparison, percent_cell, report_rows, score_run
    from qtc.runtime.qa.questions import read_questions

    by = by_groupings(args.by)
    check_bootstrap(args)
    questions = read_questions(args.qa)
    if args.first.resolve() == args.second.resolve():
        raise UserError("ANSWERS_A and ANSWERS_B are the same file")
    first, second = (read_run(args.qa, questions, path) for path in (args.first, args.second))
    lengths = episode_lengths(args.traces)
    comparison = build_comparison(score_run(questions, first, lengths), score_run(questions, second, lengths), by,
                                  resamples=args.bootstrap, seed=args.seed)
    names = [f"{a.model or p.stem} ({a.context or '-'})" for a, p in ((first, args.first), (second, args.second))]
    comparison = {"qa": str(args.qa), "a": {"answers": str(args.first), "model": first.model, "context": first.context},
                  "b": {"answers": str(args.second), "model": second.model, "context": second.context}, **comparison}
    rows = [(("overall" if g == "overall" else f"{g}: {n}"), m) for g, n, m in report_rows(comparison)]
    title = f"{names[1]} minus {names[0]}, {comparison['questions']} questions (paired bootstrap 95% CI)"
    if args.format == "csv":
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["group", "n", "accuracy_diff", "accuracy_low", "accuracy_high",
                         "f1_diff", "f1_low", "f1_high"])
        for label, m in rows:
            ends = [(m[f"{k}_ci"] or [None, None]) for k in ("accuracy", "f1")]
            writer.writerow(["" if v is None else v
                             for v in (label, m["n"], m["accuracy"], *ends[0], m["f1"], *ends[1])])
        print(text.getvalue(), end="")
    else:
        lines = [title, "", "| group | n | Acc B-A, points [95% CI] | F1 B-A, points [95% CI] |", "|---|---:|---:|---:|"]
        if args.format == "table":
            width = max(len(label) for label, _ in rows)
            lines = [title, f"{'group':<{width}}  {'n':>5}  {'Acc B-A [95% CI]':>24}  {'F1 B-A [95% CI]':>24}"]
            lines += [f"{label:<{width}}  {m['n']:>5}  {percent_cell(m, 'accuracy', signed=True):>24}  {percent_cell(m, 'f1', signed=True):>24}"
                      for label, m in rows]
        else:
            lines += [f"| {label} | {m['n']} | {percent_cell(m, 'accuracy', signed=True)} | {percent_cell(m, 'f1', signed=True)} |" for label, m in rows]
        print("\n".join(lines))
    if args.out:
        write_text_atomic(args.out, json.dumps(comparison, indent=1, ensure_ascii=False) + "\n")
        print(f"comparison written to {args.out}")
    return 0
