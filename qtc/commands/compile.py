"""Parse, check and compile question templates; print one line per template and every error.

Exits 1 if any template failed, so it can gate CI. With --emit-sql, each template's SQL is written to
DIR/<id>.sql; it runs as-is in the DuckDB CLI against a database made by `qtc load`
(set a horizon first with `SET VARIABLE qtc_horizon = 100;`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from qtc.errors import UserError

COMMAND = "compile"
HELP = "check and compile .qtpl templates to DuckDB SQL"
EXAMPLES = """examples:
  qtc compile templates/
  qtc compile templates/crafter/single_hop.qtpl --explain crafter.action_at
  qtc compile templates/ --emit-sql build/sql
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help=".qtpl files or folders holding them")
    parser.add_argument("--emit-sql", metavar="DIR", help="write each template's SQL to DIR/<id>.sql")
    parser.add_argument("--explain", metavar="ID", help="print one template's backend, IR and SQL")


def run(args: argparse.Namespace) -> int:
    from qtc.dsl.library import load_library
    from qtc.files import write_text_atomic

    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise UserError(f"no such file or folder: {', '.join(missing)}")
    library = load_library(args.paths)
    if not library.results and not library.file_diagnostics:
        raise UserError(f"no .qtpl templates found in {', '.join(args.paths)}")
    for diagnostic in library.file_diagnostics:
        print(library.render(diagnostic), file=sys.stderr)
    width = max((len(r.id) for r in library.results), default=0)
    for result in library.results:
        if result.compiled is not None:
            c = result.compiled
            print(f"OK    {c.id:<{width}}  {c.env:<8} {c.category:<11} {c.answer_type}")
        else:
            count = len(result.diagnostics)
            print(f"FAIL  {result.id:<{width}}  {count} error{'s' if count != 1 else ''}  ({result.path}:{result.line})")
            for diagnostic in result.diagnostics:
                print(library.render(diagnostic), file=sys.stderr)
    failed = sum(1 for r in library.results if r.compiled is None)
    errors = len(library.diagnostics)
    print(f"{len(library.results)} templates: {len(library.results) - failed} ok, {failed} failed"
          + (f" ({errors} errors)" if errors else ""))
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
        for compiled in library.compiled:
            write_text_atomic(out / f"{compiled.id}.sql", compiled.sql)
        print(f"wrote {len(library.compiled)} SQL files to {out}/")
    return 0 if library.ok else 1
