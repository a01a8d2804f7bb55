"""What the commands that score answer files share (score, report, compare): the bootstrap and grouping flags, and
reading one answers file against a QA set into its scoring report, with the warnings about it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_bootstrap_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help="bootstrap resamples for the 95%% intervals (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")


def add_traces_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--traces", type=Path, nargs="+", metavar="PATH",
                        help="trace files or folders, or a .duckdb database, holding the episodes: their "
                             "lengths group questions asked on whole episodes by episode_length and evidence_age")


def episode_lengths(traces: list[Path] | None) -> dict[str, int]:
    """Each episode's number of steps, from the traces given (none: an empty map): trace files by their
    headers alone, a database or corpus by its episodes table."""
    if not traces:
        return {}
    from qtc.runtime.trace.store import open_store, read_in_place

    if not any(read_in_place(source) for source in traces):
        from qtc.runtime.generate.shards import read_episodes

        return {eid: episode.n_steps for eid, episode in read_episodes(tuple(traces))[0].items()}
    con = open_store(*traces)
    try:
        return dict(con.sql("SELECT episode_id, n_steps FROM episodes").fetchall())
    finally:
        con.close()


def by_groupings(text: str) -> list[str]:
    """The groupings a --by value names."""
    from qtc.errors import UserError
    from qtc.runtime.evaluate.report import GROUPINGS

    by = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in by if name not in GROUPINGS]
    if unknown:
        raise UserError(f"--by: unknown grouping {unknown[0]!r} (choose from {', '.join(GROUPINGS)})")
    return by


def check_bootstrap(args: argparse.Namespace) -> None:
    from qtc.errors import UserError

    if args.bootstrap <= 0:
        raise UserError(f"--bootstrap must be positive, got {args.bootstrap}")


def read_run(qa: Path, questions: list, path: Path):
    """The answers of `path` (an AnswerSet), warning about a half-written last line and about answers
    to questions the QA set does not hold (which are left out of every score)."""
    from qtc.errors import UserError
    from qtc.runtime.qa.answers import read_answers

    if not path.is_file():
        raise UserError(f"{path}: no such answers file")
    answers = read_answers(path)
    if answers.partial_line:
        print(f"warning: {path}:{answers.partial_line}: a half-written last line was left out", file=sys.stderr)
    known = {q.id for q in questions}
    strangers = [i for i in answers.answers if i not in known]
    if strangers:
        print(f"warning: {len(strangers)} answer(s) in {path} are to questions not in {qa} "
              f"(first: {strangers[0]}); they are left out", file=sys.stderr)
    return answers


def score_file(qa: Path, questions: list, path: Path, by: list[str], args: argparse.Namespace,
               lengths: dict[str, int] | None = None):
    """(the answers of `path`, their scoring report: what it scored, the usage, then build_report's);
    `lengths` are the episodes' lengths (episode_lengths), for the questions without a horizon."""
    from qtc.runtime.evaluate.report import build_report, score_run

    answers = read_run(qa, questions, path)
    report = build_report(score_run(questions, answers, lengths), by, resamples=args.bootstrap, seed=args.seed)
    requests, prompt_tokens, completion_tokens = answers.usage()
    return answers, {"qa": str(qa), "answers": str(path), "model": answers.model, "context": answers.context,
                     "usage": {"requests": requests, "prompt_tokens": prompt_tokens,
                               "completion_tokens": completion_tokens}, **report}
