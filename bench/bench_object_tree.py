"""What recording Jericho's object tree costs: zork1's whole walkthrough recorded with the recorder
before object trees (REV) and with the working tree's, alternately, side by side; recording time and
trace size.

    python bench/bench_object_tree.py [--roms ../shared/roms] [--game zork1.z5] [--rounds 3] [--before REV]
                                      [--valid-actions]

Without --valid-actions the finder (most of a step's time when on) is left out of both, so the ratio
shows the tree's own cost. The best round of each counts. Both recorders must write the same steps.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from qtc.runtime.record.agents import WalkthroughAgent
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.record.jericho import JerichoSession

from code_before import ROOT, import_before


def record(session_class, rom: Path, valid_actions: bool) -> tuple[float, Path]:
    directory = Path(tempfile.mkdtemp())
    start = time.perf_counter()
    session = session_class(rom, None, "walkthrough", record_valid_actions=valid_actions)
    path = record_episode(session, WalkthroughAgent(session.env.get_walkthrough()), directory, 10_000)
    return time.perf_counter() - start, path


def recorders(before: str) -> dict:
    """The Jericho recorder at REV `before` and the working tree's, by label."""
    return {"before": import_before(before, "runtime/record", "jericho").JerichoSession, "after": JerichoSession}


def record_round(sessions: dict, rom: Path, valid_actions: bool, best: dict[str, float], paths: dict[str, Path]) -> None:
    """One recording with each recorder in turn: its best time so far in `best`, its trace in `paths`."""
    for label, session_class in sessions.items():
        seconds, paths[label] = record(session_class, rom, valid_actions)
        best[label] = min(best.get(label, seconds), seconds)


def compare_traces(sessions: dict, best: dict[str, float], paths: dict[str, Path]) -> tuple[dict, dict]:
    """Each recorder's trace lines (both must write the same steps) and size, each printed with its best time."""
    lines = {label: paths[label].read_text().splitlines() for label in sessions}
    assert lines["before"][1:] == lines["after"][1:], "the recorders wrote different steps"
    sizes = {label: paths[label].stat().st_size for label in sessions}
    for label in sessions:
        print(f"{label:7s} {len(lines[label]) - 1} steps {best[label]:7.2f} s  {sizes[label]:9d} bytes")
    return lines, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roms", type=Path, default=ROOT.parent / "shared" / "roms")
    parser.add_argument("--game", default="zork1.z5")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default="f5a9000")
    parser.add_argument("--valid-actions", action="store_true")
    args = parser.parse_args()
    sessions = recorders(args.before)
    best: dict[str, float] = {}
    paths: dict[str, Path] = {}
    for _ in range(args.rounds):
        record_round(sessions, args.roms / args.game, args.valid_actions, best, paths)
    lines, sizes = compare_traces(sessions, best, paths)
    header = json.loads(lines["after"][0])
    objects = json.dumps(header["objects"], separators=(",", ":"))
    print(f"time ratio after/before {best['after'] / best['before']:.2f}; the tree adds "
          f"{sizes['after'] - sizes['before']} bytes ({(sizes['after'] / sizes['before'] - 1) * 100:.1f}%): "
          f"{len(header['objects']['tree'])} objects ({sum(e['name'] is not None for e in header['objects']['tree'])} "
          f"named), {len(header['objects']['moves'])} moves, objects field {len(objects)} bytes")


if __name__ == "__main__":
    main()
