"""The `qtc` command line: one subcommand per module in qtc.commands."""

from __future__ import annotations

import argparse
import importlib
import sys

from .errors import UserError

# Each module defines COMMAND (its name), add_arguments(parser) and run(args) -> exit code.
COMMAND_MODULES = ("compile", "play", "load", "sql")


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser(
        prog="qtc", description="Question-template compiler for agent memory benchmarks.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = {}
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"qtc.commands.{name}")
        sub = commands.add_parser(module.COMMAND, help=module.HELP, description=module.__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter,
                                  epilog=getattr(module, "EXAMPLES", None))
        module.add_arguments(sub)
        modules[module.COMMAND] = module
    return parser, modules


def main(argv: list[str] | None = None) -> int:
    parser, modules = build_parser()
    args = parser.parse_args(argv)
    try:
        return modules[args.command].run(args)
    except UserError as error:
        print(f"qtc {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"qtc {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
