"""What recording Jericho's `unchanged_steps` costs: a game's whole walkthrough recorded with the recorder
before the flag (REV) and with the working tree's, alternately, side by side; then the interpreter's
flag beside the one other way Jericho offers to tell a change (two world-state hashes a step), on the
bare game.

    python bench/bench_changes.py [--roms ../shared/roms] [--game zork1.z5] [--rounds 3] [--before REV]

The valid-action finder is left out of both recordings, so the ratio shows the flag's own cost. The
best round of each counts. Both recorders must write the same steps.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jericho

from qtc.runtime.record.jericho import JerichoSession, changed_world

from bench_object_tree import record
from code_before import ROOT, import_before


def bare_steps(rom: Path, test) -> float:
    """Seconds to play the walkthrough on the bare game, calling `test(env, reward, done)` after each step."""
    env = jericho.FrotzEnv(str(rom))
    env.reset()
    start = time.perf_counter()
    for action in env.get_walkthrough():
        _, reward, done, _ = env.step(action)
        test(env, reward, done)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roms", type=Path, default=ROOT.parent / "shared" / "roms")
    parser.add_argument("--game", default="zork1.z5")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default="6bb3d3a")
    args = parser.parse_args()
    rom = args.roms / args.game
    sessions = {"before": import_before(args.before, "runtime/record", "jericho").JerichoSession,
                "after": JerichoSession}
    tests = {"none": lambda env, reward, done: None, "flag": changed_world,
             "hashes": lambda env, reward, done: env.get_world_state_hash()}
    best: dict[str, float] = {}
    paths: dict[str, Path] = {}
    for _ in range(args.rounds):
        for label, session_class in sessions.items():
            seconds, paths[label] = record(session_class, rom, False)
            best[label] = min(best.get(label, seconds), seconds)
        for label, test in tests.items():
            seconds = bare_steps(rom, test)
            best[label] = min(best.get(label, seconds), seconds)
    lines = {label: path.read_text().splitlines() for label, path in paths.items()}
    assert lines["before"][1:] == lines["after"][1:], "the recorders wrote different steps"
    unchanged = json.loads(lines["after"][0])["unchanged_steps"]
    sizes = {label: paths[label].stat().st_size for label in paths}
    steps = len(lines["after"]) - 1
    for label in sessions:
        print(f"{label:7s} {steps} steps {best[label]:7.2f} s  {sizes[label]:9d} bytes")
    print(f"time ratio after/before {best['after'] / best['before']:.2f}; the field adds "
          f"{sizes['after'] - sizes['before']} bytes; {len(unchanged)} steps changed nothing: {unchanged}")
    print(f"bare game: steps alone {best['none']:.3f} s, with the flag {best['flag']:.3f} s, "
          f"with a world-state hash a step {best['hashes']:.3f} s")


if __name__ == "__main__":
    main()
