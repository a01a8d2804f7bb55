"""The compiler's speed targets, measured in one run on this machine (the compiler IR issue):

    python bench/bench_targets.py [--traces DIR...] [--steps 10000] [--rounds 3]

- generate / load: `qtc generate` (whole standard library, default options) against `qtc load` of the
  same trace files into a database, each a fresh process, taken in turn round by round; the minimum
  of the rounds of each, and their ratio.
- one long episode: `qtc generate` on one Crafter episode of --steps steps, the scripted agent's (the
  first of seeds 0-19 that lives that long, recorded into out/bench/long/ once); its time and its peak
  memory (the child's maximum resident set).
- compile: parse, check and compile of the whole standard library in this process, first call and
  the best of the next five.

Without --traces it uses the episodes bench/bench_compiler.py records (out/bench/compiler/), recording
them if they are missing. Reports only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_compiler import ROOT, record

from qtc.commands import play
from qtc.commands._stages import run_command
from qtc.runtime.trace.format import read_header

QTC = [sys.executable, "-m", "qtc.cli"]


def timed(command: list[str]) -> tuple[float, int]:
    """Seconds and peak resident memory (bytes) of `command` run in a fresh process of its own."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
             "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *command], check=True, capture_output=True, text=True).stdout
    seconds, kilobytes = out.split()
    return float(seconds), int(kilobytes) * 1024


def generate_over_load(traces: list[Path], folder: Path, rounds: int) -> None:
    best = {"load": math.inf, "generate": math.inf}
    for number in range(rounds):
        database = folder / f"load{number}.duckdb"
        best["load"] = min(best["load"], timed([*QTC, "load", *map(str, traces), "--db", str(database)])[0])
        out = folder / f"qa{number}.jsonl"
        best["generate"] = min(best["generate"], timed([*QTC, "generate", "--traces", *map(str, traces),
                                                        "--out", str(out), "--quiet"])[0])
    print(f"generate / load, {len(traces)} paths: load {best['load']:.2f} s, generate {best['generate']:.2f} s, "
          f"generate/load {best['generate'] / best['load']:.2f}", flush=True)


def surviving_episode(steps: int, folder: Path) -> Path:
    """The trace of the first of the scripted agent's seeds 0-19 that lives `steps` steps."""
    for seed in range(20):
        out = folder / f"seed{seed}-{steps}"
        run_command(play, ["crafter", "--agent", "scripted", "--seed", str(seed), "--max-steps", str(steps),
                           "--out", str(out), "--quiet"])
        trace = next(out.glob("*.jsonl"))
        if read_header(trace)["n_steps"] == steps:
            return trace
    raise SystemExit(f"none of the scripted agent's seeds 0-19 lives {steps} steps")


def long_episode_run(steps: int, folder: Path) -> None:
    trace = surviving_episode(steps, ROOT / "out" / "bench" / "long")
    seconds, peak = timed([*QTC, "generate", "--traces", str(trace), "--out", str(folder / "long.jsonl"), "--quiet"])
    print(f"one Crafter episode of {steps} steps ({trace.name}): generate {seconds:.1f} s, "
          f"peak memory {peak / 2**30:.2f} GB", flush=True)


def compile_library() -> None:
    from qtc.dsl.library import load_library
    started = time.perf_counter()
    load_library([ROOT / "templates"])
    first = time.perf_counter() - started
    best = math.inf
    for _ in range(5):
        started = time.perf_counter()
        library = load_library([ROOT / "templates"])
        best = min(best, time.perf_counter() - started)
    print(f"compile of the standard library ({len(library.compiled)} templates, in process): first "
          f"{first * 1000:.0f} ms, best of 5 {best * 1000:.0f} ms", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="*", type=Path)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    traces = args.traces or record(ROOT / "out" / "bench" / "compiler", 30)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    compile_library()
    with tempfile.TemporaryDirectory() as tmp:
        generate_over_load(traces, Path(tmp), args.rounds)
        long_episode_run(args.steps, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
