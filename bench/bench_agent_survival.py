"""How long the scripted Crafter agent lives, what ends its episodes, what it achieves, and how fast
it records.

    python bench/bench_agent_survival.py [--seeds 0-9] [--max-steps 10000] [--jobs 1] [--out DIR]

Records one scripted episode a seed (the recorder as `qtc play` runs it, traces written to --out or a
temporary folder) and prints a row a seed: steps lived, how the episode ended (the death's cause, or
the step limit), the step its home was built, the food eaten (cows, plants), the achievements reached, and steps per second; then
the median of the steps, the seeds past 2,000 steps and the achievements reached on any seed. With
--jobs N the seeds are recorded N at a time in worker processes (each row's steps/s is its own).
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from qtc.runtime.record.agents import ScriptedCrafterAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import record_episode

LONG = 2000  # the steps the agent should outlive on most seeds


def seeds(text: str) -> list[int]:
    """'0-9' or '0,3,5' (or a mix) as a list of seeds."""
    chosen = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        chosen += range(int(low), int(high or low) + 1)
    return chosen


def record(seed: int, max_steps: int, out: Path) -> dict:
    start = time.perf_counter()
    path = record_episode(CrafterSession(seed, "scripted", max_steps), ScriptedCrafterAgent(seed), out, max_steps)
    seconds = time.perf_counter() - start
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    steps = [json.loads(line) for line in lines[1:]]
    achieved = collections.Counter(name for step in steps for name in step["achievements"])
    # The home is built once the agent closes it behind it or stays in it, whichever comes first.
    home = next((step["step"] for step in steps if (step["reason"] or "").startswith("close my home")
                 or " at home" in (step["reason"] or "")), None)
    ending = header["death_cause"] if header["ended_by"] == "death" else header["ended_by"]
    return {"seed": seed, "steps": header["n_steps"], "ending": ending, "achieved": achieved,
            "home": home, "rate": header["n_steps"] / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-9", type=seeds)
    parser.add_argument("--max-steps", default=10_000, type=int)
    parser.add_argument("--jobs", default=1, type=int)
    parser.add_argument("--out", type=Path, help="keep the traces here (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        with ProcessPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(record, args.seeds, [args.max_steps] * len(args.seeds), [out] * len(args.seeds)))
    print(f"{'seed':>4} {'steps':>6} {'ending':12} {'home':>5} {'cows':>4} {'plants':>6} {'steps/s':>7}  achievements")
    for row in rows:
        achieved = row["achieved"]
        print(f"{row['seed']:4d} {row['steps']:6d} {row['ending']:12} {row['home'] or '-':>5} {achieved['eat_cow']:4d} "
              f"{achieved['eat_plant']:6d} {row['rate']:7.0f}  {len(achieved)}: {', '.join(sorted(achieved))}")
    steps = [row["steps"] for row in rows]
    reached = set().union(*(row["achieved"] for row in rows))
    print(f"median {statistics.median(steps):.0f} steps; {sum(s > LONG for s in steps)} of {len(steps)} seeds "
          f"past {LONG}; {sum(steps) / sum(row['steps'] / row['rate'] for row in rows):.0f} steps/s over all; "
          f"{len(reached)} achievements on some seed: {', '.join(sorted(reached))}")


if __name__ == "__main__":
    main()
