"""TextWorld beside Jericho: generating a game, and recording episodes of the same length, side by side.

    python bench/bench_textworld.py [--roms ../shared/roms] [--steps 100] [--rounds 3] [--challenge cooking]

Makes a TextWorld game (--challenge at seed 1, qtc's default settings; the generator and the Inform 7
compile, timed), then records --steps steps of the random agent in it (over TextWorld's admissible
commands, with the world's facts read at every step) and --steps steps of zork1's walkthrough in Jericho
(without the valid-action finder, which would dominate), alternately, --rounds times; the best round of
each counts. Prints seconds and steps per second of each and their ratio, and the trace's bytes per step.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from qtc.runtime.record.agents import RandomAgent, WalkthroughAgent
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.record.jericho import JerichoSession
from qtc.runtime.record.textworld import TextWorldSession, make_game

from code_before import ROOT


def record_textworld(game: Path, steps: int, out: Path) -> Path:
    session = TextWorldSession(game, 1, "random")
    return record_episode(session, RandomAgent(1), out, steps)


def record_jericho(rom: Path, steps: int, out: Path) -> Path:
    session = JerichoSession(rom, None, "walkthrough", record_valid_actions=False)
    return record_episode(session, WalkthroughAgent(session.env.get_walkthrough()), out, steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roms", type=Path, default=ROOT.parent / "shared" / "roms")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--challenge", default="cooking")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        start = time.perf_counter()
        game, _ = make_game(args.challenge, 1, {}, folder / "games")
        print(f"generating the {args.challenge} game (seed 1) and compiling it: {time.perf_counter() - start:.2f} s")
        runs = {"textworld": lambda out: record_textworld(game, args.steps, out),
                "jericho (zork1)": lambda out: record_jericho(args.roms / "zork1.z5", args.steps, out)}
        best: dict[str, tuple[float, int, int]] = {}
        for round_number in range(args.rounds):
            for name, run in runs.items():
                out = folder / f"{name.split()[0]}-{round_number}"
                start = time.perf_counter()
                path = run(out)
                seconds = time.perf_counter() - start
                steps = sum(1 for _ in path.open(encoding="utf-8")) - 1
                if name not in best or seconds < best[name][0]:
                    best[name] = (seconds, steps, path.stat().st_size)
        for name, (seconds, steps, size) in best.items():
            print(f"{name:18s} {steps:5d} steps {seconds:7.2f} s {steps / seconds:8.1f} steps/s "
                  f"{size / steps:8.0f} bytes/step")
        (tw_seconds, tw_steps, _), (j_seconds, j_steps, _) = best["textworld"], best["jericho (zork1)"]
        print(f"TextWorld records at {(tw_steps / tw_seconds) / (j_steps / j_seconds):.2f} times Jericho's steps/s "
              f"(best of {args.rounds})")


if __name__ == "__main__":
    main()
