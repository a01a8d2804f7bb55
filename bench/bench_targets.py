"""The speed targets of issue 34, each printed beside its figure, measured in one run on this machine:

    python bench/bench_targets.py [--traces DIR...] [--emembench PATH [--venv DIR] [--many DIR]]
                                  [--steps 10000] [--rounds 3]

- against EMemBench's hand-written generators (with --emembench PATH, a checkout; bench_emembench.py):
  CPU seconds on the same traces at the same question count, each set of --traces (default: the 30
  scripted Crafter episodes and the Jericho walkthroughs bench/bench_compiler.py records), and per
  episode on --many (300 or more Crafter episodes).
- one long episode: `qtc generate` on the scripted agent's Crafter episode of --steps steps (the first
  of seeds 0-19 that lives that long, recorded into out/bench/long/ once): its CPU seconds and peak
  memory (the child's maximum resident set), and the growth of its marginal cost from 0.4 x --steps to
  --steps steps: the exponent b of (T(n) - T(0)) ~ n^b, T(0) the cost on the same seed's first 10 steps
  (start-up and the fixed cost of each statement), fitted over 0.4, 0.7 and 1 x --steps.
- generate / load: `qtc generate` (whole standard library, default options) against `qtc load` of the
  same trace files into a database, CPU seconds of each, fresh processes taken in turn.
- start-up: the CPU seconds `qtc generate` spends before its first statement (bench_startup.py), on
  one short Crafter episode, its compiled library cached.
- --jobs 2 against --jobs 1 on the first set of traces: wall seconds (the point of --jobs is wall time).
- statements run twice: the templates whose statement `qtc generate --jobs 1` runs more than once (a cap
  raised after the first round), of those it runs, on each set of traces and the long episode.

Every figure is the median of --rounds rounds, the measures of a round taken in turn, each in a fresh
process that keeps the bytecode of the modules it imports, as an installed package's is. Reports only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_compiler import ROOT, bytecode_kept, record
from bench_emembench import HOW_TO_GET, compare_with_emembench, has_generators
from bench_startup import until_first_statement

from qtc.commands import play
from qtc.commands._stages import run_command
from qtc.runtime.trace.format import read_header

QTC = [sys.executable, "-m", "qtc.cli"]
SHORT = 10  # steps of the episode whose cost stands for the fixed cost of a run
GROWTH = (0.4, 0.7, 1.0)  # the lengths of the growth fit, as parts of --steps


def measured(command: list[str], cwd: Path) -> tuple[float, float, int]:
    """CPU seconds (user + system), wall seconds and peak resident memory (bytes) of `command` run in a
    fresh process of its own (through a probe process, so that the peak is this command's alone)."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
             "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
             "print(r.ru_utime + r.ru_stime, time.perf_counter() - t, r.ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *command], check=True, capture_output=True, text=True,
                         cwd=cwd, env=bytecode_kept(cwd / "bytecode")).stdout
    cpu, wall, kilobytes = out.split()
    return float(cpu), float(wall), int(kilobytes) * 1024


def generate(traces: list[Path], out: Path, *options: str) -> tuple[float, float, int]:
    # In the output's folder: `python -m` puts the current folder first on sys.path.
    return measured([*QTC, "generate", "--traces", *map(str, traces), "--out", str(out), "--quiet", "--force",
                     *options], out.parent)


def medians(rounds: int, measures: dict) -> dict[str, tuple]:
    """Each measure (a function of the round's number) run once a round, in turn; the medians, part by part."""
    found: dict[str, list] = {name: [] for name in measures}
    for number in range(rounds):
        for name, measure in measures.items():
            found[name].append(measure(number))
    return {name: tuple(statistics.median(part) for part in zip(*values)) for name, values in found.items()}


def scripted_episode(steps: int, folder: Path, seed: int | None = None) -> Path:
    """The trace of the scripted agent's episode of `steps` steps: of `seed`, or of the first of seeds
    0-19 that lives that long."""
    for candidate in [seed] if seed is not None else range(20):
        out = folder / f"seed{candidate}-{steps}"
        run_command(play, ["crafter", "--agent", "scripted", "--seed", str(candidate), "--max-steps", str(steps),
                           "--out", str(out), "--quiet"])
        trace = next(out.glob("*.jsonl"))
        if read_header(trace)["n_steps"] == steps or seed is not None:
            return trace
    raise SystemExit(f"none of the scripted agent's seeds 0-19 lives {steps} steps")


def long_episode(steps: int, rounds: int, folder: Path) -> list[tuple[str, str]]:
    recorded = ROOT / "out" / "bench" / "long"
    longest = scripted_episode(steps, recorded)
    seed = read_header(longest)["seed"]
    lengths = [round(part * steps) for part in GROWTH]
    traces = {n: scripted_episode(n, recorded, seed) for n in [SHORT, *lengths]}
    got = medians(rounds, {n: lambda number, n=n: generate([traces[n]], folder / f"long{n}-{number}.jsonl")
                           for n in traces})
    fixed = got[SHORT][0]
    # Least squares of log(T(n) - T(0)) on log(n).
    xs = [math.log(n) for n in lengths]
    ys = [math.log(max(got[n][0] - fixed, 1e-9)) for n in lengths]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    slope = (sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
             / sum((x - mean_x) ** 2 for x in xs))
    cpu, _, peak = got[steps]
    costs = ", ".join(f"{n}: {got[n][0]:.1f} s" for n in [SHORT, *lengths])
    return [(f"one Crafter episode of {steps} steps (scripted, seed {seed}): <= 10 s CPU, <= 500 MB peak",
             f"{cpu:.1f} s CPU, {peak / 2**20:.0f} MB peak"),
            (f"growth of the marginal cost from {lengths[0]} to {steps} steps: exponent <= 1.1",
             f"b = {slope:.2f} (CPU {costs})")]


def generate_over_load(traces: list[Path], rounds: int, folder: Path) -> list[tuple[str, str]]:
    got = medians(rounds, {
        "load": lambda number: measured([*QTC, "load", *map(str, traces), "--db", str(folder / f"load{number}.duckdb")],
                                        folder),
        "generate": lambda number: generate(traces, folder / f"qa{number}.jsonl")})
    load, gen = got["load"][0], got["generate"][0]
    return [("`qtc generate` / `qtc load` of the same files <= 3",
             f"{gen / load:.2f} ({gen:.1f} s / {load:.1f} s CPU)")]


def start_up(rounds: int, folder: Path) -> list[tuple[str, str]]:
    trace = scripted_episode(SHORT, ROOT / "out" / "bench" / "long", 0)
    until_first_statement(None, [str(trace)], folder / "warm.jsonl")  # fills the compiled-library cache
    cpu = statistics.median(until_first_statement(None, [str(trace)], folder / f"start{number}.jsonl")[0]
                            for number in range(rounds))
    return [("start-up: CPU before the first statement, compiled library cached, <= 0.25 s", f"{cpu:.2f} s")]


def jobs(traces: list[Path], rounds: int, folder: Path) -> list[tuple[str, str]]:
    got = medians(rounds, {n: lambda number, n=n: generate(traces, folder / f"jobs{n}-{number}.jsonl", "--jobs", str(n))
                           for n in (1, 2)})
    one, two = got[1][1], got[2][1]
    return [("`--jobs 2` never slower than `--jobs 1` on 2 cores", f"{two / one:.2f} ({two:.1f} s / {one:.1f} s wall)")]


# Run in the child: `qtc generate` counting the statements it makes per template (run._statement makes each
# request's; a request whose probe finds the template without rows is not run, and it is never raised).
COUNT_STATEMENTS = """
import collections, sys
import qtc.runtime.generate.run as run
made = collections.Counter()
statement = run._statement
def counted(compiled, *args):
    made[compiled.id] += 1
    return statement(compiled, *args)
run._statement = counted
from qtc.cli import main
main(["generate", "--traces", *sys.argv[2:], "--out", sys.argv[1], "--quiet", "--jobs", "1", "--force"])
print(len(made), sum(n > 1 for n in made.values()), sum(made.values()))
"""


def statements_twice(sets: list[Path], long: Path, folder: Path) -> list[tuple[str, str]]:
    figures = []
    for name, traces in [*((traces.name, traces) for traces in sets), (f"{read_header(long)['n_steps']} steps", long)]:
        out = subprocess.run([sys.executable, "-c", COUNT_STATEMENTS, str(folder / "count.jsonl"), str(traces)],
                             check=True, capture_output=True, text=True, cwd=folder).stdout
        templates, twice, statements = map(int, out.splitlines()[-1].split())
        figures.append(f"{name}: {twice} of {templates} templates ({statements} statements asked)")
    return [("no statement runs twice for one template and env", "; ".join(figures))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="*", type=Path)
    parser.add_argument("--emembench", type=Path, help="a checkout of InternLM/EMemBench")
    parser.add_argument("--venv", type=Path, help="the EMemBench generators' virtual environment")
    parser.add_argument("--many", type=Path, help="a folder of 300 or more Crafter episodes, compared with "
                                                  "EMemBench's generator per episode")
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sets = [path.resolve() for path in args.traces or record(ROOT / "out" / "bench" / "compiler", 30)]
    started = time.perf_counter()
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not has_generators(args.emembench):
            print(HOW_TO_GET)
        else:
            for traces in [*sets, *filter(None, [args.many])]:
                results += compare_with_emembench(traces, args.emembench, args.venv, args.rounds)
        results += long_episode(args.steps, args.rounds, folder)
        results += generate_over_load(sets, args.rounds, folder)
        results += start_up(args.rounds, folder)
        results += jobs(sets[:1], args.rounds, folder)
        results += statements_twice(sets, scripted_episode(args.steps, ROOT / "out" / "bench" / "long"), folder)
    print(f"\n| target | measured (load average {os.getloadavg()[0]:.1f}, {time.perf_counter() - started:.0f} s) |")
    print("|---|---:|")
    for target, figure in results:
        print(f"| {target} | {figure} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
