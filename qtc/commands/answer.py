"""Ask a model the questions of a QA set about the recorded episodes, and record its answers.

The model sees each episode only as the agent observed it, cut at the question's horizon
(docs/evaluation.md): `--context full` the whole history, `last:N` the last N steps, `evidence` only the
steps the answer rests on (an oracle upper bound). Questions with the same context are sent together,
up to --batch per request, to any OpenAI-compatible endpoint (the key is read from OPENAI_API_KEY).
Answers are appended to --out as they arrive (format: docs/qa-format.md); a rerun after a crash or
Ctrl-C asks only the questions not answered yet.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._options import add_endpoint_arguments, client_from_args, request_progress

COMMAND = "answer"
HELP = "ask a model the questions of a QA set (resumable)"
EXAMPLES = """examples:
  qtc answer --qa qa.jsonl --traces traces/ --model gpt-4o-mini --out answers.jsonl
  qtc answer --qa qa.jsonl --traces traces.duckdb --model qwen --base-url http://127.0.0.1:8000/v1 \\
      --context last:50 --batch 20 --out qwen-last50.jsonl
  qtc answer --qa qa.jsonl --traces traces/ --model gpt-4o-mini --context evidence --out oracle.jsonl
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qa", type=Path, required=True, help="QA set (.jsonl or .parquet)")
    parser.add_argument("--traces", type=Path, nargs="+", required=True, metavar="PATH",
                        help="trace files or folders, or one .duckdb database, holding the questions' episodes")
    add_endpoint_arguments(parser)
    parser.add_argument("--context", default="full", metavar="full|last:N|evidence",
                        help="what the model sees of each episode (default full)")
    parser.add_argument("--batch", type=int, default=10, metavar="N",
                        help="questions per request at most (default 10)")
    parser.add_argument("--out", type=Path, default=Path("answers.jsonl"),
                        help="answers file, appended to and resumed (default answers.jsonl)")


def run(args: argparse.Namespace) -> int:
    from qtc.errors import UserError
    from qtc.runtime.evaluate.ask import Answerer, pending_questions, plan_batches
    from qtc.runtime.qa.appendlog import AppendLog
    from qtc.runtime.evaluate.context import ContextMode
    from qtc.runtime.qa.questions import read_questions
    from qtc.runtime.trace.store import open_store

    mode = ContextMode.parse(args.context)
    if args.batch <= 0:
        raise UserError(f"--batch must be positive, got {args.batch}")
    client = client_from_args(args)
    questions = read_questions(args.qa)
    pending, already = pending_questions(questions, args.out, args.model, mode)
    con = open_store(*args.traces)
    batches = plan_batches(con, pending, mode, args.batch)
    progress = request_progress("answering", "questions", args.quiet)
    with progress, AppendLog(args.out) as out:
        task = progress.add_task("answering", total=len(pending))
        summary = Answerer(con, client, mode, out, lambda n: progress.advance(task, n)).run(batches)
    print(f"answered {summary.asked} question(s) in {summary.requests} request(s), {summary.seconds:.1f}s; "
          f"{already} were already answered in {args.out}; tokens: {summary.prompt_tokens} prompt, "
          f"{summary.completion_tokens} completion")
    return 0
