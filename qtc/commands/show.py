"""Show one question of a QA set whole: what an author runs first when an answer looks wrong.

Prints the question, its accepted answers, bindings, horizon and evidence steps; with --traces, the
evidence steps as the answering prompt renders them (`--context evidence`); then the template's source
and the SQL it compiles to (every binding; `qtc sql` runs it over a store). The template is looked up
by the question's template id in --templates (default: the standard library), and a template whose
source changed since the question was generated is flagged.
"""

from __future__ import annotations

import argparse
from pathlib import Path

COMMAND = "show"
HELP = "show one question: answers, bindings, evidence as the model sees it, template source and SQL"
EXAMPLES = """examples:
  qtc show qa.jsonl 1f64566761e6a0ac --traces traces/
  qtc show qa.jsonl 1f64566761e6a0ac --templates my_templates/
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qa", type=Path, help="QA set (.jsonl or .parquet)")
    parser.add_argument("id", help="the question's id")
    parser.add_argument("--traces", type=Path, nargs="+", metavar="PATH",
                        help="trace files or folders, or one .duckdb database, holding the question's episode "
                             "(to show its evidence steps)")
    parser.add_argument("--templates", type=Path, nargs="+", metavar="PATH",
                        help="the templates the QA set was generated from (default: the standard library)")


def _section(title: str, body: str) -> str:
    return f"== {title}\n{body.rstrip()}\n"


def run(args: argparse.Namespace) -> int:
    from qtc.dsl.library import load_library
    from qtc.errors import UserError
    from qtc.runtime.episode_rows import EpisodeRows
    from qtc.runtime.evaluate.context import ContextMode, render_context, shown_steps
    from qtc.runtime.generate.records import short_hash
    from qtc.runtime.generate.run import STANDARD_LIBRARY
    from qtc.runtime.qa.questions import read_questions
    from qtc.runtime.trace.store import open_store

    questions = {q.id: q for q in read_questions(args.qa)}
    q = questions.get(args.id)
    if q is None:
        raise UserError(f"{args.qa} has no question {args.id!r} ({len(questions)} questions; ids as in its 'id' field)")
    facts = [("id", q.id), ("template", q.template_id), ("episode", f"{q.episode_id} ({q.env}, {q.game})"),
             ("category", q.category + (" (adversarial: a false premise)" if q.adversarial else "")),
             ("answer type", q.answer_type), ("difficulty", q.difficulty or "-"),
             ("answer", q.answer), ("accepted answers", " | ".join(q.references)),
             ("bindings", ", ".join(f"{k} = {v}" for k, v in q.bindings.items()) or "-"),
             ("horizon", "the episode's end" if q.horizon is None else str(q.horizon)),
             ("evidence steps", ", ".join(map(str, q.evidence)) or "none"), ("seed", str(q.seed))]
    width = max(len(name) for name, _ in facts)
    print(_section("question", q.question + "\n" + "\n".join(f"{n:<{width}}  {v}" for n, v in facts)))
    if args.traces:
        con = open_store(*args.traces)
        try:
            found = con.execute("SELECT n_steps FROM episodes WHERE episode_id = ?", [q.episode_id]).fetchone()
            if found is None:
                raise UserError(f"question {q.id}: episode {q.episode_id!r} is not in the traces given")
            horizon = found[0] if q.horizon is None else min(q.horizon, found[0])
            shown = shown_steps(ContextMode.parse("evidence"), horizon, q.evidence)
            print(_section("evidence, as the model is shown it (--context evidence)",
                           render_context(EpisodeRows(con), q.episode_id, q.env, shown)))
        finally:
            con.close()
    else:
        print(_section("evidence", "(give --traces to see the evidence steps as the model sees them)"))
    library = load_library(args.templates or [STANDARD_LIBRARY])
    result = next((r for r in library.results if r.id == q.template_id), None)
    if result is None or result.compiled is None:
        where = ", ".join(map(str, args.templates or [STANDARD_LIBRARY]))
        print(_section("template", f"{q.template_id} is not a compiled template in {where}"
                       + (" (it has errors: qtc compile shows them)" if result else "")))
        return 1
    source = result.compiled.checked.template.source
    changed = short_hash(source) != q.template_hash
    print(_section(f"template source ({result.path}:{result.line})"
                   + (": CHANGED since this question was generated" if changed else ""), source))
    print(_section("compiled SQL (every binding; run it with qtc sql)", result.compiled.sql))
    return 0
