"""Rewrite the wording of a share of a QA set's questions through a model, keeping their meaning.

A seeded share (--ratio) of the questions is sent to the model, one distinct text per request. A
rewrite is rejected, and the original text kept, if it is no longer a question, is far longer, or
changes any number, quoted value, name or word of order and quantity (docs/evaluation.md). Rewrites are
cached by model and text in --cache, so a rerun (or another ratio or seed) asks only for new texts.
The result is a QA set with the same records and ids, written to --out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._options import add_endpoint_arguments, client_from_args, request_progress

COMMAND = "paraphrase"
HELP = "paraphrase question wording through a model, keeping the meaning"
EXAMPLES = """examples:
  qtc paraphrase --qa qa.jsonl --model gpt-4o-mini
  qtc paraphrase --qa qa.jsonl --model qwen --base-url http://127.0.0.1:8000/v1 --ratio 1 --out qa-para.jsonl
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qa", type=Path, required=True, help="QA set (.jsonl or .parquet)")
    add_endpoint_arguments(parser)
    parser.add_argument("--ratio", type=float, default=0.5, help="share of the questions to paraphrase (default 0.5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the choice of questions (default 0)")
    parser.add_argument("--out", type=Path, help="paraphrased QA set, .jsonl or .parquet "
                                                 "(default: beside --qa, qa.jsonl -> qa.paraphrased.jsonl)")
    parser.add_argument("--cache", type=Path, help="rewrites cache (default: beside --qa, "
                                                   "qa.jsonl -> qa.paraphrase-cache.jsonl)")


def run(args: argparse.Namespace) -> int:
    from qtc.errors import UserError
    from qtc.runtime.generate.paraphrase import paraphrase_questions
    from qtc.runtime.qa.questions import read_questions
    from qtc.runtime.qa.write import check_output_path, write_qa

    out = args.out or args.qa.with_name(f"{args.qa.stem}.paraphrased{args.qa.suffix}")
    cache = args.cache or args.qa.with_name(f"{args.qa.stem}.paraphrase-cache.jsonl")
    check_output_path(out)
    if out.resolve() == args.qa.resolve():
        raise UserError(f"--out {out} is the QA set itself; name another file")
    client = client_from_args(args)
    questions = read_questions(args.qa)
    progress = request_progress("paraphrasing", "texts", args.quiet)
    with progress:
        task = progress.add_task("paraphrasing", total=None)
        result, summary = paraphrase_questions(
            questions, client, cache, args.ratio, args.seed, on_text=lambda: progress.advance(task),
            on_total=lambda total: progress.update(task, total=total))
    write_qa(out, [q.record() for q in result])
    rejected = ", ".join(f"{count} {kind}" for kind, count in summary.rejected.most_common()) or "none"
    print(f"paraphrased {summary.accepted} of {summary.selected} chosen question(s) "
          f"({summary.asked} text(s) asked, the others cached in {cache}); rejected: {rejected}; wrote {out}")
    return 0
