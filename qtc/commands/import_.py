"""Import episodes another harness recorded, as qtc traces: today EMemBench's (InternLM/EMemBench) Jericho
and Crafter logs.

`qtc import emembench DIR` finds every log under DIR (Jericho runs' `<run>_logs.jsonl`, Crafter runs'
`seed<N>/<run>/logs.jsonl`), re-plays each logged action in the real game (Crafter from the logged seed;
Jericho from the story file the log names, found with --rom or in $QTC_ROMS, ./roms and ../shared/roms,
and with --seed, else a `seed<N>` folder holding the log, else EMemBench's default 43, since its Jericho
logs do not record the seed), checks at every step that the game's text (Jericho) or state and screen
(Crafter) matches the log, and writes OUT/<game>-<run>-s<seed>.jsonl as `qtc play` would for those
actions, the logged reasoning as each step's reason. EMemBench ran unmodified Crafter, which despawns
creatures by memory address: a Crafter replay that leaves its log is tried again despawning others
(the episode then says ordered_objects: false). A divergence stops the import naming the file, the
line and the step (exit status 2); the episodes imported before it are kept, nothing of the one under way
is written. Episodes already in OUT are skipped, so a rerun resumes. Formats: docs/trace-format.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from qtc.errors import UserError

from ._roms import find_rom, rom_folders

COMMAND = "import"
HELP = "import episodes EMemBench's agent loop logged, re-played and checked, as trace files"
EXAMPLES = """examples:
  qtc import emembench EMemBench/text_game/logs --out traces/
  qtc import emembench EMemBench/visual_game/log --out traces/ --quiet
  qtc import emembench logs/ --rom EMemBench/text_game/game_envs --seed 43 --no-valid-actions
"""

SOURCES = ("emembench",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", choices=SOURCES, help="who wrote the logs: emembench")
    parser.add_argument("dir", type=Path, help="folder holding the logs (searched at any depth)")
    parser.add_argument("--out", type=Path, default=Path("traces"), help="output folder (default traces/)")
    parser.add_argument("--rom", type=Path, action="append", default=[], metavar="PATH",
                        help="Jericho story file, or folder of them, matched to a log by file name (the "
                             "log's game.rom); repeatable; then $QTC_ROMS, ./roms and ../shared/roms")
    parser.add_argument("--seed", type=int, help="seed of the Jericho runs (default: a seed<N> folder holding "
                                                 "the log, else 43, EMemBench's default)")
    parser.add_argument("--no-valid-actions", action="store_true",
                        help="Jericho: do not run the valid-action finder (the column is null); faster")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def story_finder(given: list[Path]):
    """find_rom for the import: a story file of that name among --rom, else in the usual folders."""
    for path in given:
        if not path.exists():
            raise UserError(f"--rom {path}: no such file or folder")

    def find(name: str) -> Path:
        for path in given:
            if path.is_dir() and (path / name).is_file():
                return path / name
            if path.is_file() and path.name == name:
                return path
        found = find_rom(name)
        if found is None:
            places = ", ".join(str(place) for place in [*given, *rom_folders()])
            raise UserError(f"no story file {name} found (looked in {places}); give --rom PATH")
        return found
    return find


def run(args: argparse.Namespace) -> int:
    from qtc.runtime.record.emembench import find_logs
    from qtc.runtime.record.emembench_import import import_logs, plan

    items = plan(find_logs(args.dir), story_finder(args.rom), args.seed)
    imported, skipped = import_logs(items, args.out, not args.no_valid_actions, show_progress=not args.quiet)
    print(f"imported {len(imported)} episode(s), skipped {len(skipped)} already in {args.out}")
    return 0
