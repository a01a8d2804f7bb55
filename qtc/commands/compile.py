"""Parse, check and compile question templates; print one line per template and every error.

Exits 1 if any template failed, so it can gate CI. With --emit-sql, each template's SQL is written to
DIR/<id>.sql; it runs as-is in the DuckDB CLI against a database made by `qtc load`
(set a horizon first with `SET VARIABLE qtc_horizon = 100;`). With --explain, stdout holds only the
template's SQL (its IR as SQL comments), so it pipes into a file or the DuckDB CLI; the status lines go
to stderr. --select picks templates by id, with shell-style wildcards, as dbt's --select does.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from pathlib import Path

from qtc.errors import UserError

COMMAND = "compile"
HELP = "check and compile .qtpl templates to DuckDB SQL"
EXAMPLES = """examples:
  qtc compile templates/
  qtc compile templates/crafter/single_hop.qtpl --explain crafter.action_at
  qtc compile templates/ --emit-sql build/sql
  qtc compile templates/ --select 'crafter.*' --emit-sql build/sql
  qtc compile templates/ --explain crafter.action_at > action_at.sql
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help=".qtpl files or folders holding them")
    parser.add_argument("--emit-sql", metavar="DIR", help="write each template's SQL to DIR/<id>.sql")
    parser.add_argument("--explain", metavar="ID", help="print one template's SQL (its IR as SQL comments) "
                                                         "alone on stdout")
    parser.add_argument("--select", metavar="PATTERN", action="append",
                        help="only the templates whose id matches (wildcards: 'crafter.*'); may be repeated")


def run(args: argparse.Namespace) -> int:
    from qtc.dsl.library import load_library
    from qtc.files import write_text_atomic

    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise UserError(f"no such file or folder: {', '.join(missing)}")
    library = load_library(args.paths)
    if not library.results and not library.file_diagnostics:
        raise UserError(f"no .qtpl templates found in {', '.join(args.paths)}")
    results = [r for r in library.results if _selected(r.id, args.select)]
    if args.select and not results:
        raise UserError(f"no template id matches --select {' '.join(args.select)}")
    status = sys.stderr if args.explain else sys.stdout  # --explain: stdout holds the SQL alone
    for diagnostic in library.file_diagnostics:
        print(library.render(diagnostic), file=sys.stderr)
    width = max((len(r.id) for r in results), default=0)
    printed = set()  # an error every instance of a template of several envs finds is printed once
    for result in results:
        if result.compiled is not None:
            c = result.compiled
            print(f"OK    {c.id:<{width}}  {c.env:<8} {c.category:<11} {c.answer_type}", file=status)
        else:
            count = len(result.diagnostics)
            print(f"FAIL  {result.id:<{width}}  {count} error{'s' if count != 1 else ''}  ({result.path}:{result.line})",
                  file=status)
            for diagnostic in result.diagnostics:
                if diagnostic not in printed:
                    print(library.render(diagnostic), file=sys.stderr)
                printed.add(diagnostic)
    failed = sum(1 for r in results if r.compiled is None)
    errors = sum(len(r.diagnostics) for r in results) + len(library.file_diagnostics)
    print(f"{len(results)} templates: {len(results) - failed} ok, {failed} failed"
          + (f" ({errors} errors)" if errors else ""), file=status)
    if args.explain:
        chosen = [c for c in library.compiled if c.id == args.explain]
        if not chosen:
            known = [r.id for r in library.results]
            raise UserError(f"no compiled template '{args.explain}'"
                            + (" (it has errors)" if args.explain in known else f"; templates: {', '.join(known)}"))
        from qtc.dsl.ir.explain import explain
        print(explain(chosen[0]))
    if args.emit_sql:
        out = Path(args.emit_sql)
        out.mkdir(parents=True, exist_ok=True)
        compiled = [r.compiled for r in results if r.compiled is not None]
        for template in compiled:
            write_text_atomic(out / f"{template.id}.sql", template.sql)
        print(f"wrote {len(compiled)} SQL files to {out}/", file=status)
    return 0 if failed == 0 and not library.file_diagnostics else 1


def _selected(template_id: str, patterns: list[str] | None) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(template_id, pattern) for pattern in patterns)
