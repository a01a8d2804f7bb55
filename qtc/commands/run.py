"""The whole job in one command, checkpointed per stage: record episodes (or take --traces), generate a
QA set, answer it with each memory given, score each run, and write one HTML report of them all.

Every stage is a qtc command, printed as you would type it, writing into OUT: `traces/<play>/` for each
--play, `qa.jsonl`, `answers-<memory>.jsonl` and `score-<memory>.json` for each --memory, and
`report.html`. OUT/run.json records what each stage ran with and whether it finished, so a rerun reuses
the stages done with the same options on the same inputs (the QA set is not generated again), and
resumes at the first stage not done: an interrupted recording or answering run goes on where it
stopped. A stage whose inputs changed runs again, after its earlier outputs are moved to OUT/previous/;
one asked with other options than the finished run in OUT does so only with --force. Adding a --memory
to a finished run asks only that memory's questions. --dry-run lists the stages, whether each would be
reused or run and why, and its command; it runs nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shlex
from pathlib import Path

COMMAND = "run"
HELP = "the whole job, checkpointed: record, generate, answer with each memory, score, report"
EXAMPLES = """examples:
  qtc run out/run1 --play "crafter --agent scripted --episodes 3 --max-steps 200" \\
      --generate "--horizon 50,100,200 --total 300" --memory none --memory last:50 --memory bm25 \\
      --model gemma-3-270m --base-url http://127.0.0.1:8000/v1 --answer "--batch 5 --timeout 600"
  qtc run out/run1 ... --dry-run             # what a rerun would reuse and what it would run
  qtc run out/run2 --traces traces/ --memory "mymemory:Provider path=/tmp/m" --memory "bm25 k=20" --model m
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="OUT", help="the run's folder: every stage's output and run.json")
    source = parser.add_argument_group("episodes (one of)")
    source.add_argument("--play", action="append", default=[], metavar="ARGS",
                        help="record episodes: the arguments of `qtc play` but --out, quoted (repeat for more "
                             "games or agents); each into OUT/traces/<its name>/")
    source.add_argument("--traces", nargs="+", metavar="PATH",
                        help="use these trace files or folders (or one .duckdb store) instead of recording")
    parser.add_argument("--generate", default="", metavar="ARGS",
                        help="further arguments of `qtc generate`, quoted (e.g. \"--horizon 50,100,200 --total 300\")")
    parser.add_argument("--memory", action="append", default=[], metavar="SPEC",
                        help="a memory to answer with, as `qtc answer --memory` takes it (none, last:N, full, bm25, "
                             "embed, package.module:Class), then its options if any, quoted: \"bm25 k=20\" "
                             "(`--memory-option k=20`); repeat to compare several on the same set")
    parser.add_argument("--model", help="the chat model the memories answer with (`qtc answer --model`)")
    parser.add_argument("--base-url", help="its OpenAI-compatible endpoint (`qtc answer --base-url`)")
    parser.add_argument("--answer", default="", metavar="ARGS",
                        help="further arguments of `qtc answer`, quoted (e.g. \"--batch 5 --timeout 600\"; one option alone "
                             "is written --answer=--quiet)")
    parser.add_argument("--score", default="--by category", metavar="ARGS",
                        help="arguments of `qtc score` but --qa, --answers and --out (default \"--by category\")")
    parser.add_argument("--force", action="store_true",
                        help="run again, from the first stage asked with other options than the run in OUT; "
                             "earlier outputs are moved to OUT/previous/")
    parser.add_argument("--dry-run", action="store_true", help="list the stages and what each would do; run nothing")


def name_of(text: str) -> str:
    """A file name for a memory spec or a --play's arguments: its words joined by '-', and a digest of the
    whole unless it is only letters, digits and colons (where two texts could give the same words).

    >>> name_of("last:50"), name_of("bm25")
    ('last-50', 'bm25')
    >>> name_of("crafter --agent scripted --episodes 3")
    'crafter-agent-scripted-episodes-3-975345fe'
    >>> name_of("my.module:Provider") != name_of("my_module:Provider")
    True
    """
    words = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"
    if len(words) > 60 or re.fullmatch(r"[A-Za-z0-9:]+", text) is None:
        words = f"{words[:50]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return words


def _split(flag: str, text: str, forbidden: tuple[str, ...]) -> list[str]:
    from qtc.errors import InvalidOption

    try:
        argv = shlex.split(text)
    except ValueError as error:
        raise InvalidOption(flag, f"{text!r}: {error}") from None
    for option in forbidden:
        if any(arg == option or arg.startswith(option + "=") for arg in argv):
            raise InvalidOption(flag, f"{text!r}: {option} is set by qtc run itself")
    return argv


def stages(args: argparse.Namespace) -> list:
    from qtc.errors import InvalidOption, UserError

    from . import answer, generate, play, report, score
    from ._stages import Stage

    if bool(args.play) == bool(args.traces):
        raise UserError("give the episodes: --play ARGS to record them, or --traces PATH to use recorded ones")
    if not args.memory:
        raise UserError("give at least one --memory to answer with (none, last:N, full, bm25, embed or "
                        "package.module:Class)")
    out: Path = args.out
    result = []
    if args.play:
        traces = []
        for spec in args.play:
            folder = out / "traces" / name_of(spec)
            result.append(Stage(f"record {spec}", play, [*_split("play", spec, ("--out",)), "--out", str(folder)],
                                outputs=(folder,)))
            traces.append(folder)
    else:
        traces = [Path(path) for path in args.traces]
    trace_args = [str(path) for path in traces]
    qa = out / "qa.jsonl"
    from qtc.runtime.qa.write import summary_path

    result.append(Stage("generate", generate,
                        ["--traces", *trace_args, *_split("generate", args.generate, ("--traces", "--out")),
                         "--out", str(qa)],
                        inputs=tuple(traces), outputs=(qa, summary_path(qa))))
    endpoint = [*(["--model", args.model] if args.model else []),
                *(["--base-url", args.base_url] if args.base_url else [])]
    extra = _split("answer", args.answer, ("--qa", "--traces", "--out", "--memory", "--context"))
    score_args = _split("score", args.score, ("--qa", "--answers", "--out"))
    answers = []
    for memory in dict.fromkeys(args.memory):
        provider, *options = _split("memory", memory, ())
        if not all("=" in option for option in options):
            raise InvalidOption("memory", f"{memory!r}: a memory's options are KEY=VALUE after its name")
        name = name_of(memory)
        answered, scored = out / f"answers-{name}.jsonl", out / f"score-{name}.json"
        result.append(Stage(f"answer {memory}", answer,
                            ["--qa", str(qa), "--traces", *trace_args, "--memory", provider,
                             *(arg for option in options for arg in ("--memory-option", option)), *endpoint,
                             *extra, "--out", str(answered)],
                            inputs=(qa,), outputs=(answered,)))
        result.append(Stage(f"score {memory}", score,
                            ["--qa", str(qa), "--answers", str(answered), *score_args, "--out", str(scored)],
                            inputs=(qa, answered), outputs=(scored,), guarded=False))
        answers.append(answered)
    page = out / "report.html"
    result.append(Stage("report", report,
                        [str(qa), *map(str, answers), "--traces", *trace_args, "--html", str(page)],
                        inputs=(qa, *answers), outputs=(page,), guarded=False))
    return result


def run(args: argparse.Namespace) -> int:
    from ._stages import Pipeline, command_line

    pipeline = Pipeline(args.out, stages(args))
    if args.dry_run:
        for number, (stage, action, why) in enumerate(pipeline.plan().actions, start=1):
            verb = {"reuse": "reuse", "run": "run", "redo": "run again",
                    "redo-options": "run again with --force" if args.force else "STOP (give --force)"}[action]
            print(f"[{number}/{len(pipeline.stages)}] {stage.name}: {verb} ({why})\n    "
                  f"{command_line(stage.module, stage.argv)}")
        return 0
    pipeline.run(args.force)
    print(f"\nthe run is in {args.out}/: open {args.out / 'report.html'}; a rerun reuses what is done")
    return 0
