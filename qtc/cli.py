"""The `qtc` command line: one subcommand per module in qtc.commands."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from .errors import UserError

from . import commands


def command_modules() -> list:
    """Every module of qtc.commands, each a subcommand: it defines COMMAND (its name), HELP,
    add_arguments(parser) and run(args) -> exit code. Found, not listed, so adding a command is one file."""
    names = sorted(info.name for info in pkgutil.iter_modules(commands.__path__) if not info.name.startswith("_"))
    return [importlib.import_module(f"qtc.commands.{name}") for name in names]


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser(
        prog="qtc", description="Question-template compiler for agent memory benchmarks.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = {}
    for module in command_modules():
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
