"""Recording and loading throughput (steps per second) for both games.

    python bench/bench_record_load.py [--roms ../shared/roms] [--crafter-episodes 3]

Records scripted Crafter episodes (200 steps each) and zork1's walkthrough with and without the
valid-action finder, then loads every trace into an in-memory store.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb

from qtc.runtime.record.agents import ScriptedCrafterAgent, WalkthroughAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.jericho import JerichoSession
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.trace.store import load_traces


def timed(label: str, run) -> int:
    start = time.perf_counter()
    steps = run()
    seconds = time.perf_counter() - start
    print(f"{label:52s} {steps:6d} steps {seconds:7.2f} s {steps / seconds:9.0f} steps/s")
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roms", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "roms")
    parser.add_argument("--crafter-episodes", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        crafter_dir, jericho_dir = Path(tmp) / "crafter", Path(tmp) / "jericho"

        def record_crafter() -> int:
            return sum(read_steps(record_episode(CrafterSession(seed, "scripted", 200),
                                                 ScriptedCrafterAgent(seed), crafter_dir, 200))
                       for seed in range(args.crafter_episodes))

        def record_jericho(valid: bool, limit: int, agent: str) -> int:
            session = JerichoSession(args.roms / "zork1.z5", None, agent, record_valid_actions=valid)
            return read_steps(record_episode(session, WalkthroughAgent(session.env.get_walkthrough()),
                                             jericho_dir, limit))

        timed(f"record crafter (scripted, {args.crafter_episodes} x <=200 steps)", record_crafter)
        zork1 = (args.roms / "zork1.z5").is_file()
        if zork1:
            timed("record zork1 walkthrough, valid actions (50 steps)",
                  lambda: record_jericho(True, 50, "walkthrough"))
            timed("record zork1 walkthrough, no valid actions (whole)",
                  lambda: record_jericho(False, 1000, "walkthrough-nva"))
        timed("load crafter traces", lambda: load_traces(duckdb.connect(), [crafter_dir]).steps)
        if zork1:
            timed("load jericho traces", lambda: load_traces(duckdb.connect(), [jericho_dir]).steps)


def read_steps(path: Path) -> int:
    with path.open() as stream:
        return sum(1 for _ in stream) - 1


if __name__ == "__main__":
    main()
