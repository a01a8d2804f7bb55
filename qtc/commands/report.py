"""Write one self-contained HTML page of a QA set and the answers of one or more models.

The page shows the scoring report of each answers file (the numbers `qtc score` gives: Accuracy and F1
with 95% bootstrap intervals, evidence recall@k where answers carry retrieved steps) overall, per
category, template, horizon and evidence age, as charts and tables with the models side by side, each
run's failed answers, and a table of every question with the models side by side that searches, sorts,
links to one question and filters by category, template, game, model and result. A question opens on its
evidence steps as the answering prompt renders them, what each model was sent (evidence outside it
flagged), and, for a spatial question, the Crafter map or the Jericho room graph it asks about; those
need the traces (--traces, as `qtc answer` takes them). Nothing on the page is fetched when it is viewed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._scoring import add_bootstrap_arguments, check_bootstrap, score_file

COMMAND = "report"
HELP = "write an HTML page of the scores of one or more answer files, with every question's evidence"
EXAMPLES = """examples:
  qtc report qa.jsonl gpt-4o-mini.jsonl qwen-last50.jsonl --traces traces/ --html report.html
  qtc report qa.jsonl answers.jsonl --html report.html       # scores only: no evidence or maps
  qtc report qa.jsonl answers.jsonl --traces traces/ --requests requests.jsonl --html report.html
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qa", type=Path, help="QA set (.jsonl or .parquet)")
    parser.add_argument("answers", type=Path, nargs="+", metavar="ANSWERS",
                        help="answers files written by qtc answer, one per model (or context)")
    parser.add_argument("--traces", type=Path, nargs="+", metavar="PATH",
                        help="trace files or folders, or one .duckdb database, holding the questions' "
                             "episodes (for the evidence and the maps)")
    parser.add_argument("--requests", type=Path, nargs="+", metavar="LOG",
                        help="request logs of the runs (qtc answer --log-requests): each question then shows "
                             "the request its answer came from, as it was sent, and the steps it showed")
    parser.add_argument("--html", type=Path, required=True, metavar="FILE", help="the page to write")
    parser.add_argument("--title", help="the page's title (default: the QA set's file name)")
    add_bootstrap_arguments(parser)


def run_names(answers: list, paths: list[Path]) -> list[str]:
    """A name per run: its model, with its context where runs share a model, and its file where even
    that repeats."""
    names = [a.model or p.stem for a, p in zip(answers, paths)]
    if len(set(names)) < len(names):
        names = [f"{n} ({a.context})" if a.context else n for n, a in zip(names, answers)]
    if len(set(names)) < len(names):
        names = [f"{n} [{p.name}]" for n, p in zip(names, paths)]
    return names


def run(args: argparse.Namespace) -> int:
    from qtc.files import write_text_atomic
    from qtc.runtime.qa.questions import read_questions
    from qtc.runtime.trace.store import open_store
    from qtc.runtime.view.page import GROUPINGS, Run, build_page
    from qtc.runtime.view.requests import read_requests

    check_bootstrap(args)
    questions = read_questions(args.qa)
    con = open_store(*args.traces) if args.traces else None
    try:
        # The episodes' lengths place the evidence of questions asked on whole episodes by its age.
        lengths = dict(con.sql("SELECT episode_id, n_steps FROM episodes").fetchall()) if con is not None else {}
        scored = [score_file(args.qa, questions, path, list(GROUPINGS), args, lengths) for path in args.answers]
        names = run_names([answers for answers, _ in scored], args.answers)
        runs = [Run(name, answers, report) for name, (answers, report) in zip(names, scored)]
        requests = read_requests(args.requests) if args.requests else {}
        page = build_page(args.title or args.qa.name, questions, runs, con, requests)
    finally:
        if con is not None:
            con.close()
    write_text_atomic(args.html, page)
    print(f"report written to {args.html} ({len(page) // 1024} kB, {len(questions)} questions, {len(runs)} "
          f"model(s)){'' if args.traces else '; without --traces it shows no evidence or maps'}")
    return 0
