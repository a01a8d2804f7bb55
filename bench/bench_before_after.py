"""`qtc generate` as it was at an earlier revision beside the working tree's, on the same traces:

    python bench/bench_before_after.py --before REV --traces PATH... [--rounds 3] [--no-warm-up] [-- options]

CPU seconds (user + system) and peak memory (the child's maximum resident set) of each, fresh
processes taken in turn round by round (before, now, before, now, ...), medians of the rounds and the
ratio now / before: the machine's load weighs on both alike. Both sides read their own templates and
compiled-library cache (a first run of each fills it, untimed, unless --no-warm-up says it is full
already). Reports only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench_targets import measured
from code_before import tree_before

QTC = [sys.executable, "-m", "qtc.cli"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the git revision to compare with")
    parser.add_argument("--traces", nargs="+", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-warm-up", action="store_true", help="no untimed first run (the caches are full)")
    parser.add_argument("options", nargs="*", help="more options of qtc generate (after --)")
    args = parser.parse_args()
    sides = {"before": str(tree_before(args.before)), "now": None}
    found: dict[str, list[tuple[float, int]]] = {side: [] for side in sides}
    inherited = os.environ.get("PYTHONPATH")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "qa.jsonl"
        first = 1 if args.no_warm_up else 0
        for number in range(first, args.rounds + 1):  # round 0 fills each side's cache
            for side, path in sides.items():
                # In the output's folder: `python -m` puts the current folder first on sys.path.
                os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [path, inherited]))
                cpu, _wall, peak = measured([*QTC, "generate", "--traces", *args.traces, "--out", str(out), "--quiet",
                                             "--force", *args.options], out.parent)
                if number:
                    found[side].append((cpu, peak))
    medians = {side: (statistics.median(c for c, _ in values), statistics.median(p for _, p in values))
               for side, values in found.items()}
    for side, (cpu, peak) in medians.items():
        print(f"{side:7s} CPU {cpu:7.2f} s   peak {peak / 2**20:6.0f} MB")
    (cpu_before, peak_before), (cpu_now, peak_now) = medians["before"], medians["now"]
    print(f"now / before: CPU {cpu_now / cpu_before:.2f}, peak memory {peak_now / peak_before:.2f} "
          f"(medians of {args.rounds} round(s), {args.before} against the working tree)")


if __name__ == "__main__":
    main()
