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

from qtc.runtime.record.jericho import changed_world

from bench_object_tree import compare_traces, record_round, recorders
from code_before import ROOT


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
    sessions = recorders(args.before)
    tests = {"none": lambda env, reward, done: None, "flag": changed_world,
             "hashes": lambda env, reward, done: env.get_world_state_hash()}
    best: dict[str, float] = {}
    paths: dict[str, Path] = {}
    for _ in range(args.rounds):
        record_round(sessions, rom, False, best, paths)
        for label, test in tests.items():
            seconds = bare_steps(rom, test)
            best[label] = min(best.get(label, seconds), seconds)
    lines, sizes = compare_traces(sessions, best, paths)
    unchanged = json.loads(lines["after"][0])["unchanged_steps"]
    print(f"time ratio after/before {best['after'] / best['before']:.2f}; the field adds "
          f"{sizes['after'] - sizes['before']} bytes; {len(unchanged)} steps changed nothing: {unchanged}")
    print(f"bare game: steps alone {best['none']:.3f} s, with the flag {best['flag']:.3f} s, "
          f"with a world-state hash a step {best['hashes']:.3f} s")


if __name__ == "__main__":
    main()
