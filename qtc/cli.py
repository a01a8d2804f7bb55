"""The `qtc` command line: one subcommand per module in qtc.commands, listed in workflow order.

Building the parser imports only the command modules (the command's own when the arguments begin with one),
which import what they use inside run(), so `qtc --help` and `qtc CMD --help` load no DuckDB, Arrow,
Jinja, Lark, NumPy or game. They and the rest of qtc are imported within main's `try`: Ctrl-C may come
while they load.
"""

from __future__ import annotations

import os
import sys

from .errors import InvalidOption, UserError

# qtc does no linear algebra, but NumPy's OpenBLAS starts a thread per core when it loads, and they spin:
# ~0.1 s of CPU in every process (a third of the imports qtc needs). Set here, where the `qtc` command
# starts and before anything imports NumPy (worker processes inherit it), not in the package: a program
# that imports qtc as a library keeps its own. A value the user set stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


# The command modules of qtc.commands, in workflow order: record episodes (or import another harness's),
# load them, check templates, generate questions, reword them, answer them, score the answers, compare
# two runs, see them on a page and one by one, export them to other harnesses; then the tools: the whole
# job in one checkpointed command, ad hoc SQL over any store, and the demo of it all. Each defines COMMAND
# (its name: the module's, but `import`, a keyword, whose module is import_), HELP, add_arguments(parser)
# and run(args) -> exit code.
COMMAND_MODULES = ("play", "import_", "load", "compile", "generate", "paraphrase", "answer", "score", "compare",
                   "report", "show", "export", "run", "sql", "demo")


def _commands(argv: list[str]) -> list:
    """The command modules the parser needs for `argv`: only the command's own when it begins with one (a
    command parses the same alone; importing every module and building every subparser costs ~15 ms of
    each run), else all of them (for --help's list and the error naming the choices)."""
    import importlib
    import keyword

    # Only a command named first: `qtc --help generate` lists every command.
    named = argv[0] if argv else None
    module = f"{named}_" if named and keyword.iskeyword(named) else named
    names = [module] if module in COMMAND_MODULES else COMMAND_MODULES
    return [importlib.import_module(f".commands.{name}", __package__) for name in names]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("qtc")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, dict]:
    """The parser of `argv` (its command's subparser only, when it names one) and the command modules
    by their COMMAND."""
    import argparse

    class _VersionAction(argparse.Action):
        """--version, looked up only when asked: importlib.metadata costs ~20 ms of every run's start."""

        def __call__(self, parser, namespace, values, option_string=None):
            print(f"qtc {_version()}")
            parser.exit()

    parser = argparse.ArgumentParser(
        prog="qtc", description="Question-template compiler for agent memory benchmarks.")
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="show qtc's version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = {}
    for module in _commands(argv):
        sub = subparsers.add_parser(module.COMMAND, help=module.HELP, description=module.__doc__,
                                    formatter_class=argparse.RawDescriptionHelpFormatter,
                                    epilog=getattr(module, "EXAMPLES", None))
        module.add_arguments(sub)
        modules[module.COMMAND] = module
    return parser, modules


def main(argv: list[str] | None = None) -> int:
    command = "qtc"  # until the arguments are read: Ctrl-C may come while qtc loads or builds the parser
    try:
        from .processes import interrupt_on_sigterm

        argv = sys.argv[1:] if argv is None else argv
        parser, modules = build_parser(argv)
        args = parser.parse_args(argv)
        command = f"qtc {args.command}"
        interrupt_on_sigterm()
        return modules[args.command].run(args)
    except BaseException as error:
        # Ctrl-C or SIGTERM first, which a library may have turned into its own error (DuckDB's 'Query
        # interrupted'; a KeyboardInterrupt raised in a spatial primitive, which a template's failure names)
        if isinstance(error, KeyboardInterrupt) or isinstance(error, Exception) and _stopped():
            print(f"{command}: interrupted", file=sys.stderr)
            return 130
        if isinstance(error, InvalidOption):  # the library names the option's field; the user typed its flag
            from .commands._options import flag

            print(f"{command}: error: {flag(error.field)} {error.message}", file=sys.stderr)
            return 2
        if isinstance(error, UserError):
            print(f"{command}: error: {error}", file=sys.stderr)
            return 2
        raise


def _stopped() -> bool:
    """Whether SIGTERM or Ctrl-C asked qtc to stop (qtc.processes, imported first in main's try)."""
    from .processes import interrupted

    return interrupted()


if __name__ == "__main__":
    sys.exit(main())
