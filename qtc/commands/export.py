"""Export a QA set to another evaluation harness: each question with the context `qtc answer` would send
it in (docs/evaluation.md, Exports), scored there by qtc's own scorer.

`--to inspect DIR` writes samples.jsonl and an inspect_ai task (task.py); `--to lm-eval DIR` samples.jsonl,
a task YAML and its utils.py; `--to hf DIR` a folder `datasets.load_dataset(DIR)` reads (Parquet). Each
folder has a dataset card (README.md) with the features, the provenance (qtc version, SHA-256 of the QA
set and the trace files, games, generation options) and the counts per category and answer type.
"""

from __future__ import annotations

import argparse
from pathlib import Path

COMMAND = "export"
HELP = "write a QA set with its contexts for inspect_ai, lm-eval or Hugging Face datasets"
EXAMPLES = """examples:
  qtc export qa.jsonl --traces traces/ --context last:50 --to inspect out/inspect
  qtc export qa.jsonl --traces traces.duckdb --context budget:4000 --to lm-eval out/lm-eval --name crafter_memory
  qtc export qa.parquet --traces traces/ --to hf out/hf
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qa", type=Path, help="QA set (.jsonl or .parquet)")
    parser.add_argument("--traces", type=Path, nargs="+", required=True, metavar="PATH",
                        help="trace files or folders, or one .duckdb database, holding the questions' episodes")
    parser.add_argument("--context", default="full", metavar="full|last:N|evidence|budget:B|none",
                        help="what each sample shows of its episode, as qtc answer --context (default full; "
                             "text only)")
    parser.add_argument("--to", nargs=2, required=True, metavar=("inspect|lm-eval|hf", "DIR"),
                        help="the harness and the folder to write")
    parser.add_argument("--name", help="the task's name (default: the QA file's name, as an identifier)")


def run(args: argparse.Namespace) -> int:
    from qtc import __version__
    from qtc.runtime.evaluate.ask import AskOptions
    from qtc.runtime.evaluate.context import ContextMode
    from qtc.runtime.export.samples import sample_records
    from qtc.runtime.export.write import Provenance, check_target, task_name, write_export
    from qtc.runtime.qa.questions import read_questions
    from qtc.runtime.trace.store import open_store

    target, out = args.to[0], Path(args.to[1])
    check_target(target)
    mode = ContextMode.parse(args.context)
    questions = read_questions(args.qa)
    con = open_store(*args.traces)
    try:
        samples = sample_records(con, questions, mode)
    finally:
        con.close()
    name = task_name(args.name or args.qa.name.split(".")[0])
    provenance = Provenance(args.qa, tuple(args.traces), str(mode), __version__)
    written = write_export(target, out, samples, questions, provenance, name, AskOptions().tokens(1))
    print(f"exported {len(samples)} question(s) with context {mode} for {target} to {out}: "
          f"{', '.join(str(p.relative_to(out)) for p in written)}")
    return 0
