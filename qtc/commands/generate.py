"""Generate a QA set: every template over every recorded episode, sampled, balanced and checked.

Each template runs once over all episodes of its env. Its candidates (bindings whose preconditions
hold) are sampled with the seed, spread over episodes, rendered and checked against the QA format
(docs/qa-format.md), then capped per template and per category. The same traces, templates, options
and seed give byte-identical output, whatever the order of the files.

With --horizon N every question, its parameter domains, answer and evidence use steps 1..N only.
Adversarial questions (a false premise, answered `not answerable`) make --adversarial-ratio of each
template's questions (rounded; fewer if it has too few); each one's premise is checked false on its
trace within the horizon, and candidates whose premise turns out true are dropped and counted. A
summary per category and template is printed and written as JSON beside the output (qa.jsonl ->
qa.summary.json).

With --jobs N the episodes are split into shards, each loaded and queried by a worker process of its
own (N at a time; by default this machine's cores once the episodes hold more than 30,000 steps, and
one process up to that, where starting workers costs more than they give back: the progress line
says which); with --ray the shards run as tasks on a Ray cluster (docs/scale.md). Either way the
output is the bytes of --jobs 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table

    from qtc.runtime.generate.run import Generation, Options

RATIO_TOLERANCE = 0.1  # how far the realised adversarial share may be from --adversarial-ratio unremarked
SUMMARY_WIDTH = 140  # the tables' width when the output is not a terminal (rich would use 80)
COMMAND = "generate"
HELP = "generate a QA set (JSONL or Parquet) from recorded episodes and templates"
EXAMPLES = """examples:
  qtc generate --traces traces/ --out qa.jsonl
  qtc generate --traces traces/ --templates templates/crafter --seed 7 --max-per-template 50 --per-category 120
  qtc generate --traces traces/ --horizon 100 --adversarial-ratio 0.3 --out qa-h100.parquet
  qtc generate --traces /shared/traces/ --ray auto --out qa.jsonl
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--traces", nargs="+", required=True, metavar="PATH",
                        help="trace files, folders of them, or a .duckdb database made by qtc load")
    parser.add_argument("--templates", nargs="+", type=Path, metavar="PATH",
                        help=".qtpl files or folders (default: the standard library)")
    parser.add_argument("--seed", type=int, default=42, help="sampling seed (default 42)")
    parser.add_argument("--max-per-template", type=int, metavar="N",
                        help="at most N questions per template (default 100; with --total, none but the "
                             "template's share of the total)")
    parser.add_argument("--per-category", type=int, metavar="N",
                        help="at most N questions per category, shared evenly among its templates (default: no cap)")
    parser.add_argument("--total", type=int, metavar="N",
                        help="at most N questions in the set, shared evenly among categories, envs and templates, "
                             "with --adversarial-ratio of them adversarial at set level (default: no cap)")
    parser.add_argument("--horizon", type=_horizons, metavar="N[,N...]",
                        help="use steps 1..N of every episode only; several (50,100,200) ask the set at each "
                             "checkpoint, in one file")
    parser.add_argument("--adversarial-ratio", type=float, default=0.2, metavar="R",
                        help="the share of a template's questions that are adversarial (default 0.2)")
    parser.add_argument("--sampling", choices=("domain", "compat"), default="domain",
                        help="the order bindings are drawn in: domain (default) or compat, the order of qtc 0.1, "
                             "to make a QA set made then again (docs/qa-format.md, Sampling)")
    parser.add_argument("--out", type=Path, default=Path("qa.jsonl"),
                        help="output file, .jsonl or .parquet (default qa.jsonl)")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="worker processes, each over a shard of the episodes, once the episodes hold "
                             "more than 30,000 steps (up to that one process over one store is faster); "
                             "default: this machine's cores")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="run the shards as tasks on the Ray cluster at ADDRESS (or auto: the one started "
                             "on this machine, or RAY_ADDRESS); needs pip install 'qtc[ray]'")
    parser.add_argument("--memory-limit", metavar="SIZE",
                        help="the memory DuckDB may use in each process that queries episodes (500MB, 4GB; default: "
                             "DuckDB's, 80%% of this machine's); beyond it DuckDB spills to disk where it can")
    parser.add_argument("--force", action="store_true",
                        help="replace --out even if it was generated with other options")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no tables")


def run(args: argparse.Namespace) -> int:
    from qtc.runtime.generate.run import STANDARD_LIBRARY, Options, generate
    from qtc.runtime.qa.write import check_output_path, write_qa_set

    check_output_path(args.out)
    horizons = args.horizon or [None]
    options = Options(tuple(Path(p) for p in args.traces), tuple(args.templates or [STANDARD_LIBRARY]), args.seed,
                      args.max_per_template, args.per_category, horizons[0], args.adversarial_ratio,
                      sampling=args.sampling, jobs=args.jobs,
                      ray=args.ray, total=args.total, memory_limit=args.memory_limit)
    if not args.force:
        _refuse_other_options(args.out, options, horizons)
    if len(horizons) > 1:
        return _run_checkpoints(args, options, horizons)
    if args.quiet:  # without rich, whose import alone takes a tenth of a second
        generation = generate(options)
    else:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("template x episode runs"), TimeElapsedColumn())
        with Progress(*columns, console=console, disable=not console.is_terminal) as progress:
            task = progress.add_task("generating", total=None)
            generation = generate(options, lambda done, total: progress.update(task, completed=done, total=total),
                                  lambda how: progress.update(task, description=f"generating {how}"))
    start = time.perf_counter()
    summary = write_qa_set(args.out, generation.records, generation.summary())
    generation.timings["write"] = time.perf_counter() - start
    if not args.quiet:
        print_summary(generation)
    for report in generation.templates:
        if report.render_errors:
            print(f"qtc generate: warning: {report.render_errors} question(s) of {report.template_id} could not be "
                  f"rendered and were left out; the first: {report.render_error}", file=sys.stderr)
        for message in report.invalid:
            print(f"qtc generate: warning: a record broke the QA format and was dropped: {message}", file=sys.stderr)
    adversarial = sum(r["adversarial"] for r in generation.records)
    if generation.records and abs(adversarial / len(generation.records) - args.adversarial_ratio) > RATIO_TOLERANCE:
        print(f"qtc generate: warning: {adversarial} of {len(generation.records)} questions are adversarial "
              f"({adversarial / len(generation.records):.0%}), far from --adversarial-ratio "
              f"{args.adversarial_ratio:.0%}: too few templates have false-premise candidates", file=sys.stderr)
    print(f"wrote {len(generation.records)} questions ({adversarial} adversarial) to {args.out}; summary in {summary}")
    return 0


def _horizons(text: str) -> list[int]:
    """`N` or `N,N,...`: the horizons, distinct, in increasing order (each checked like --horizon N)."""
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or N,N,... (whole numbers), got {text!r}") from None
    if values != sorted(set(values)):
        raise argparse.ArgumentTypeError(f"horizons must be distinct and increasing, got {text!r}")
    return values


def _run_checkpoints(args: argparse.Namespace, options, horizons: list[int]) -> int:
    from qtc.runtime.generate.run import at_checkpoints
    from qtc.runtime.qa.write import write_qa_set

    records, summary = at_checkpoints(options, horizons)
    summary_file = write_qa_set(args.out, records, summary)
    print(f"wrote {len(records)} questions ({summary['adversarial']} adversarial) at horizons "
          f"{', '.join(map(str, horizons))} to {args.out}; summary in {summary_file}")
    return 0


def _refuse_other_options(out: Path, options: Options, horizons: list) -> None:
    """An existing --out made with other options (read from its summary), or whose options are unknown
    (no summary beside it), is not replaced without --force: it may be another experiment's set."""
    import json

    from qtc.errors import UserError
    from qtc.runtime.qa.write import made_with, summary_path

    if not out.exists():
        return
    wanted = made_with({"options": options.settings()}) | {"horizons": horizons}
    try:
        made = made_with(json.loads(summary_path(out).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        raise UserError(f"{out} exists and has no readable summary beside it, so the options it was made "
                        "with are unknown; give --force to replace it, or another --out") from None
    changed = [f"{name} {made.get(name)!r} -> {value!r}" for name, value in wanted.items() if made.get(name) != value]
    if changed:
        raise UserError(f"{out} was generated with other options ({'; '.join(changed)}); give --force to "
                        "replace it, or another --out")


def print_summary(generation: Generation) -> None:
    from rich.console import Console
    from rich.markup import escape  # ids are the traces' and templates' text: '[/]' in one is no markup

    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, SUMMARY_WIDTH)
    summary = generation.summary()
    categories = _table("questions per category", "category", "templates", "asked", "candidates", "questions",
                        "adversarial")
    for c in summary["categories"]:
        categories.add_row(c["category"], *(str("-" if c[k] is None else c[k]) for k in
                                            ("templates", "asked", "candidates", "questions", "adversarial")))
    console.print(categories)
    templates = _table("questions per template", "template", "episodes", "asked", "candidates", "false premises",
                       "dropped", "questions", "adversarial", "limited by")
    # A template of a game the traces do not hold gets no row: one line names how many there are.
    idle = [t for t in generation.templates if t.limited_by == "no episodes"]
    for t in generation.templates:
        if t not in idle:
            templates.add_row(escape(t.template_id), *map(str, (t.episodes, t.asked, t.candidates, t.adversarial_candidates,
                                                        t.adversarial_dropped, t.questions, t.adversarial_questions)),
                              t.limited_by)
    console.print(templates)
    if idle:
        games = " or ".join(sorted({t.env for t in idle}))
        console.print(f"{len(idle)} template(s) not run: the traces hold no {games} episode", soft_wrap=True)
    for t in generation.templates:
        if t.episodes_without_candidates:
            shown = ", ".join(t.episodes_without_candidates[:3])
            more = len(t.episodes_without_candidates) - 3
            console.print(f"{t.template_id}: no candidates on {len(t.episodes_without_candidates)} of {t.episodes} "
                          f"episode(s): {shown}{f' and {more} more' if more > 0 else ''}", soft_wrap=True, markup=False)
    times = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in generation.timings.items())
    console.print(f"time: {times}")


def _table(title: str, *columns: str) -> Table:
    """A table whose first column is a name (left-aligned) and the others numbers, but a last text column."""
    from rich.table import Table

    table = Table(title=title)
    for position, column in enumerate(columns):
        text = position == 0 or column == "limited by"
        table.add_column(column, justify="left" if text else "right", no_wrap=position == 0)
    return table
