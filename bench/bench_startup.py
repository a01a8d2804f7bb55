"""Start-up of `qtc generate`: the CPU seconds a fresh process spends before its first statement runs
(imports, the compiled library, loading the traces), qtc at --before and the working tree side by side;
with --whole, the CPU seconds of the whole run too.

    python bench/bench_startup.py --traces TRACES... [--before REV] [--rounds 5] [--whole]

Each round runs both sides in turn, each in a fresh process (`--jobs 1`) that stops at its first
statement, then with --whole each runs to the end; the medians of the rounds and their ratio are
printed, with the load average (CPU seconds, so that other work on the machine counts less than in
wall time). Both sides run with their compiled-library cache and their modules' bytecode warm (a first
run of each fills them), as a second `qtc generate` over the same templates finds them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_compiler import bytecode_kept
from code_before import tree_before

# Run in the child: `qtc generate` that (unless QTC_BENCH_WHOLE) exits at its first statement, printing
# its CPU and wall seconds.
PROBE = """
import os, sys, time
import qtc.cli  # first, as the `qtc` command imports it (where it exists, it sets what the process starts with)
import qtc.runtime.generate.runners as runners
import qtc.runtime.generate.shards as shards
def first_statement(con, request):
    print(time.process_time(), time.perf_counter() - float(os.environ["QTC_BENCH_STARTED"]), flush=True)
    os._exit(0)
if not os.environ.get("QTC_BENCH_WHOLE"):
    # Where the first statement runs, in either revision: the probe of empty templates (since 0.10.0),
    # else a template's statement (shards' since 0.10.0, runners' before).
    for module, name in ((shards, "_without_rows"), (shards, "candidate_rows"), (runners, "candidate_rows")):
        if hasattr(module, name):
            setattr(module, name, first_statement)
from qtc.cli import main
main(["generate", "--traces", *sys.argv[1:], "--out", os.environ["QTC_BENCH_OUT"], "--quiet", "--jobs", "1",
      "--force"])
print(time.process_time(), time.perf_counter() - float(os.environ["QTC_BENCH_STARTED"]), flush=True)
"""


def until_first_statement(path: Path | None, traces: list[str], out: Path, whole: bool = False) -> tuple[float, float]:
    env = {**bytecode_kept(out.parent / "bytecode"),
           "QTC_BENCH_OUT": str(out), "QTC_BENCH_WHOLE": "1" if whole else "", "PYTHONPATH": os.pathsep.join(
        filter(None, [str(path) if path else None, os.environ.get("PYTHONPATH")]))}
    code = f"import time, os; os.environ['QTC_BENCH_STARTED'] = repr(time.perf_counter()); exec({PROBE!r})"
    # perf_counter is per process: the child's wall time is measured from its own first line.
    # In the output's folder: `python -c` puts the current folder first on sys.path, and in the
    # repository's root that is the working tree's `qtc` package, whatever PYTHONPATH says.
    out_text = subprocess.run([sys.executable, "-c", code, *map(os.path.abspath, traces)], check=True,
                              capture_output=True, text=True, env=env, cwd=out.parent).stdout
    cpu, wall = out_text.split("\n")[-2].split()
    return float(cpu), float(wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="+", required=True)
    parser.add_argument("--before", default="HEAD")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--whole", action="store_true", help="also time whole runs")
    args = parser.parse_args()
    sides = {"before": tree_before(args.before), "now": None}
    measures = ["to the first statement"] + (["whole run"] if args.whole else [])
    seconds = {(measure, side): [] for measure in measures for side in sides}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "qa.jsonl"
        for path in sides.values():  # fills each side's compiled-library cache and bytecode
            until_first_statement(path, args.traces, out)
        for _ in range(args.rounds):
            for measure in measures:
                for side, path in sides.items():
                    seconds[measure, side].append(until_first_statement(path, args.traces, out,
                                                                        measure == "whole run"))
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; medians of {args.rounds} rounds")
    for measure in measures:
        cpu = {side: statistics.median(c for c, _ in seconds[measure, side]) for side in sides}
        wall = {side: statistics.median(w for _, w in seconds[measure, side]) for side in sides}
        for side in sides:
            print(f"{measure}, {side} ({args.before if side == 'before' else 'working tree'}): "
                  f"{cpu[side]:.2f} s CPU, {wall[side]:.2f} s wall")
        print(f"{measure}, before / now: {cpu['before'] / cpu['now']:.2f}x in CPU, "
              f"{wall['before'] / wall['now']:.2f}x in wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
