"""Ask a model the questions of a QA set about the recorded episodes, and record its answers.

The model sees each episode only as the agent observed it, cut at the question's horizon
(docs/evaluation.md): `--context full` the whole history, `last:N` the last N steps, `evidence` only the
steps the answer rests on (an oracle upper bound), `budget:B` the evidence steps and then the latest steps
within about B tokens, `none` no log at all (the no-memory control). Crafter episodes recorded with `qtc play --frames`
can be shown as screens too, beside the log: `--context frames` (one image each) or `mosaic` (EMemBench's
tiled images, --mosaic-*), alone (every step) or after a selection (`last:50+mosaic`, `evidence+frames`).
Questions with the same context are sent together,
up to --batch per request, to any OpenAI-compatible endpoint (the key is read from OPENAI_API_KEY).
Answers are appended to --out as they arrive (format: docs/qa-format.md); a rerun after a crash or
Ctrl-C asks only the questions not answered yet.

`--memory` asks a memory provider instead (docs/memory.md): fed each episode step by step and asked at
each question's horizon; a built-in (none, last:N, full, bm25, embed), `package.module:Class`, or a
provider installed under the entry points `qtc.providers`, with `--memory-option key=value`.
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
  qtc answer --qa qa.jsonl --traces traces/ --model gpt-4o-mini --context none --out no-memory.jsonl
  qtc answer --qa qa.jsonl --traces traces/ --model gpt-4o-mini --context budget:4000 --out budget4k.jsonl
  qtc answer --qa qa.jsonl --traces traces/ --model qwen-vl --base-url http://127.0.0.1:8000/v1 \
      --context mosaic --out qwen-vl-mosaic.jsonl
  qtc answer --qa qa.jsonl --traces traces/ --model qwen --base-url http://127.0.0.1:8000/v1 \
      --memory bm25 --memory-option k=20 --out qwen-bm25.jsonl
  qtc answer --qa qa.jsonl --traces traces/ --memory mymemory:Provider --out mine.jsonl
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qa", type=Path, required=True, help="QA set (.jsonl or .parquet)")
    parser.add_argument("--traces", type=Path, nargs="+", required=True, metavar="PATH",
                        help="trace files or folders, or one .duckdb database, holding the questions' episodes")
    add_endpoint_arguments(parser, model_required=False)
    parser.add_argument("--context", metavar="full|last:N|evidence|budget:B|none|frames|mosaic",
                        help="what the model sees of each episode (default full); budget:B the evidence steps, "
                             "then the latest, within about B tokens; none no log; frames or mosaic add the "
                             "screens of a Crafter episode recorded with --frames, joined by + to a selection "
                             "of steps (last:50+mosaic)")
    parser.add_argument("--memory", metavar="NAME|package.module:Class",
                        help="a memory provider fed each episode step by step and asked at each question's "
                             "horizon (docs/memory.md): none, last:N, full, bm25, embed, a class of your own, "
                             "or one installed under the entry points qtc.providers; instead of --context")
    parser.add_argument("--memory-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option of the memory provider, passed to it as text (repeatable): "
                             "k=20 for bm25 or embed, model=NAME for embed's embedding model")
    layout = parser.add_argument_group("screens (--context frames or mosaic)")
    layout.add_argument("--mosaic-cols", type=int, default=10, metavar="N", help="cells a mosaic row (default 10)")
    layout.add_argument("--mosaic-cell", type=int, default=160, metavar="PX",
                        help="pixels a side of a screen's cell, in a mosaic or alone (default 160)")
    layout.add_argument("--mosaic-per-image", type=int, default=200, metavar="N",
                        help="screens a mosaic image at most (default 200)")
    layout.add_argument("--mosaic-per-batch", type=int, default=10, metavar="N",
                        help="mosaic images a request at most (default 10); more screens are thinned evenly")
    parser.add_argument("--batch", type=int, default=5, metavar="N",
                        help="questions per request at most (default 5, for a local model on a CPU; a hosted "
                             "API takes more)")
    parser.add_argument("--max-tokens", type=int, metavar="N",
                        help="completion tokens per request at most (default: room for each question's "
                             "answer and the JSON around them)")
    parser.add_argument("--json-mode", default="schema", metavar="schema|object|off",
                        help="response_format sent: the answers' JSON schema (default; the shortest replies; "
                             "in the first dialect the server takes: OpenAI's and vLLM's json_schema, then "
                             "llama-cpp-python's), any JSON object, or off; replies are read as free text "
                             "whatever it is")
    parser.add_argument("--max-connections", type=int, default=1, metavar="N",
                        help="requests under way at once (default 1; more for a hosted API; a local server "
                             "answering one at a time gains nothing)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the first prompt and its token estimate; send nothing")
    parser.add_argument("--log-requests", type=Path, metavar="FILE",
                        help="append each request's prompt and raw reply (or error) to this JSONL file")
    parser.add_argument("--out", type=Path, default=Path("answers.jsonl"),
                        help="answers file, appended to and resumed (default answers.jsonl)")


def run(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from qtc.errors import UserError
    from qtc.runtime.chat import RequestTimedOut
    from qtc.runtime.evaluate.ask import (Answerer, AskOptions, counted_tokens, estimate_tokens, pending_questions,
                                          plan_batches, prepare_requests)
    from qtc.runtime.qa.appendlog import AppendLog
    from qtc.runtime.evaluate.frames import Mosaic, VisualMode, describe, image_cost, with_screens
    from qtc.runtime.qa.questions import read_questions
    from qtc.runtime.trace.store import open_store

    if args.batch <= 0:
        raise UserError(f"--batch must be positive, got {args.batch}")
    if args.memory is not None:
        if args.context is not None:
            raise UserError("--context and --memory exclude each other: --memory full asks a provider what "
                            "--context full shows")
        return run_memory(args)
    if args.model is None:
        raise UserError("the following arguments are required: --model")
    mode = VisualMode.parse(args.context or "full")
    layout = Mosaic(args.mosaic_cols, args.mosaic_cell, args.mosaic_per_image, args.mosaic_per_batch)
    options = AskOptions(args.max_tokens, args.json_mode, args.max_connections)
    client = None if args.dry_run else client_from_args(args)
    questions = read_questions(args.qa)
    pending, already = pending_questions(questions, args.out, args.model, mode)
    with open_store(*args.traces) as con:  # closed: a second run in this process opens it again
        requests = prepare_requests(con, plan_batches(con, pending, mode, args.batch))
        if isinstance(mode, VisualMode):
            requests = with_screens(con, requests, mode, layout)
        counted = None
        if requests:
            if client is not None:
                client.check()
            sizes = [estimate_tokens(r.messages()) for r in requests]
            longest = requests[sizes.index(max(sizes))]
            counted = counted_tokens(client, longest.messages()) if client is not None else None
            size = (f"{counted} tokens by the server's tokenizer" if counted is not None else
                    f"about {max(sizes)} tokens (four characters a token; a model's tokenizer may count more)")
            print(f"{len(pending)} question(s) to ask in {len(requests)} request(s); the longest prompt is {size}, "
                  f"and its reply may take {options.tokens(len(longest.batch.questions))} more "
                  f"(episode {longest.batch.episode_id}, {longest.batch.description})")
            if isinstance(mode, VisualMode):
                costs = [image_cost(r.messages()) for r in requests]
                most = max(costs, key=lambda cost: cost.tokens)
                print(f"screens: {sum(c.images for c in costs)} image(s) in all, "
                      f"{sum(c.bytes for c in costs) / 1e6:.2f} MB as sent; the most in one request: {most}")
        if args.dry_run:
            if requests:
                messages = requests[0].messages()
                print("\n\n".join(f"--- {m['role']} ---\n{describe(m['content'])}" for m in messages))
                print(f"--- about {estimate_tokens(messages)} tokens; at most {options.tokens(len(requests[0].batch.questions))} "
                      "in reply; nothing was sent ---")
            return 0

        def calibrated(estimated: int, prompt_tokens: int) -> None:
            """Where no tokenizer counted the longest prompt: its size by the first reply's count."""
            if counted is None and prompt_tokens > estimated * 1.05:
                print(f"the server counted {prompt_tokens} prompt tokens where about {estimated} were estimated: "
                      f"the longest prompt is about {max(sizes) * prompt_tokens // estimated} tokens by its count",
                      file=sys.stderr)

        progress = request_progress("answering", "questions", args.quiet)
        log = AppendLog(args.log_requests) if args.log_requests else nullcontext()
        with progress, AppendLog(args.out) as out, log:
            task = progress.add_task("answering", total=len(pending))
            answerer = Answerer(client, mode, out, options, lambda n: progress.advance(task, n),
                                log=log if args.log_requests else None, on_usage=calibrated)
            try:
                summary = answerer.run(requests)
            except RequestTimedOut as error:
                raise timed_out(error, args, answerer.summary.asked) from None
        print_summary(summary, already, args.out)
        return 0


def timed_out(error, args: argparse.Namespace, asked: int):
    """The error that ends a run whose request timed out: what to change, and that the rerun resumes."""
    from qtc.errors import UserError

    return UserError(f"{error}. Give it longer (--timeout, now {args.timeout:g}) or ask fewer questions "
                     f"per request (--batch, now {args.batch}); the {asked} answer(s) "
                     f"received are kept in {args.out} and the same command resumes")


def print_summary(summary, already: int, out: Path) -> None:
    import sys

    print(f"answered {summary.asked} question(s) in {summary.requests} request(s), {summary.seconds:.1f}s; "
          f"{already} were already answered in {out}; tokens: {summary.prompt_tokens} prompt, "
          f"{summary.completion_tokens} completion")
    if summary.too_long:
        print(f"{summary.too_long} question(s) had a prompt longer than the model's context window; their "
              "answers are empty, with the error 'context too long' (a shorter --context, e.g. last:N, fits)",
              file=sys.stderr)
    if summary.failed:
        print(f"{summary.failed} question(s) got no answer (the first: {summary.first_failure}); they are "
              f"recorded with that error, and the same command asks them again", file=sys.stderr)


def run_memory(args: argparse.Namespace) -> int:
    """--memory: feed the provider each episode with questions left and ask it at the checkpoints."""
    import sys
    from contextlib import nullcontext

    from qtc.errors import UserError
    from qtc.runtime.chat import RequestTimedOut
    from qtc.runtime.evaluate.ask import Answerer, AskOptions, pending_questions
    from qtc.runtime.memory.driver import MemoryDriver, plan_episodes
    from qtc.runtime.memory.load import Endpoint, MemorySpec, load_provider
    from qtc.runtime.qa.appendlog import AppendLog
    from qtc.runtime.qa.questions import read_questions
    from qtc.runtime.trace.store import open_store

    spec = MemorySpec.parse(args.memory, args.memory_option)
    provider = load_provider(spec, Endpoint(args.base_url, args.timeout, args.attempts))
    if provider.retrieval and args.model is None:
        raise UserError(f"--memory {spec.name} needs --model (and --base-url for a local server): it retrieves "
                        "steps and qtc's chat model answers from them")
    options = AskOptions(args.max_tokens, args.json_mode, args.max_connections)
    model = args.model or spec.name
    questions = read_questions(args.qa)
    pending, already = pending_questions(questions, args.out, model, spec)
    with open_store(*args.traces) as con:  # closed: a second run in this process opens it again
        plans = plan_episodes(con, pending)
        checkpoints = sum(len(plan.checkpoints) for plan in plans)
        print(f"{len(pending)} question(s) to ask {spec} of {len(plans)} episode(s) at {checkpoints} checkpoint(s), "
              f"feeding it {sum(plan.steps for plan in plans)} step(s)")
        if args.dry_run:
            return 0
        client = client_from_args(args) if provider.retrieval else None
        if client is not None and pending:
            client.check()
        progress = request_progress("answering", "questions", args.quiet)
        log = AppendLog(args.log_requests) if args.log_requests else nullcontext()
        with progress, AppendLog(args.out) as out, log:
            task = progress.add_task("answering", total=len(pending))
            advance = lambda n: progress.advance(task, n)  # noqa: E731
            answerer = (Answerer(client, spec, out, options, advance, log=log if args.log_requests else None)
                        if client is not None else None)
            driver = MemoryDriver(con, provider, out, model, args.batch, answerer, advance)
            try:
                stats = driver.run(plans)
            except RequestTimedOut as error:
                raise timed_out(error, args, answerer.summary.asked + driver.stats.written) from None
        if answerer is not None:
            answerer.summary.asked += stats.written  # the provider's failures, written by the driver
            print_summary(answerer.summary, already, args.out)
        else:
            print(f"answered {stats.written} question(s); {already} were already answered in {args.out}")
        print(f"memory {spec.name}: fed {stats.steps} step(s) in {stats.feed_seconds:.1f}s; "
              f"{stats.provider_seconds:.1f}s in {'retrieve' if provider.retrieval else 'answer'}")
        if stats.failed:
            print(f"{stats.failed} question(s) failed in the provider; their answers are empty with the error "
                  f"(the first: {stats.first_error})", file=sys.stderr)
        return 0
