"""The compiler before the relational IR against the IR, side by side in one run: per template, the
whole library, and the growth with episode length.

    python bench/bench_compiler.py [--traces DIR...] [--record 30] [--rounds 3] [--cap 16]
                                   [--lengths 1000 2000 4000 8000] [--only SUBSTRING...] [--before REV]

Without --traces it records (once, kept in out/bench/compiler/) --record scripted Crafter episodes of
200 steps and the walkthroughs of the Jericho story files in ../shared/roms (zork1, karn, ... without
the valid-action finder). Two worker processes (bench/compiler_worker.py) load the same traces and
compile the working tree's templates: one with qtc as it was at --before (default fd73c53, the last
revision with the emitter the IR replaced, whose `compiled.sql` is that emitter's statement), one with
the working tree. Each template's statement runs as generate runs it (cap --cap, seed 42), the two
workers asked in turn, round by round; the minimum of the rounds is reported, with the ratio
before / IR (the IR draws in the domain order, the emitter before it in compat's, so the row counts of a
template may differ a little: other bindings, each answered by the same rules). Growth: one Crafter episode made of the recorded episodes' steps, concatenated and
renumbered, cut to each length; the exponent b of time ~ n^b is fitted for each over the
range-induction templates. Reports only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
from pathlib import Path

import duckdb

from code_before import tree_before
from qtc.dsl.library import load_library

ROOT = Path(__file__).resolve().parents[1]
ROMS = ROOT.parent / "shared" / "roms"
WORKER = Path(__file__).with_name("compiler_worker.py")
SIDES = ("before", "ir")


def bytecode_kept(folder: Path) -> dict[str, str]:
    """The environment of a timed child process: this one's, with the bytecode of the modules the child
    imports kept in `folder` (whatever PYTHONDONTWRITEBYTECODE says), as an installed package's is.
    Compiling every source in every process would add a cost that no user pays: ~0.25 s of
    `qtc generate`, and some of EMemBench's generators, which get the same."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "PYTHONPYCACHEPREFIX": str(folder)}


RANGE_FAMILY = ("keyword_count", "collections_in_range", "visible_steps", "adjacent_steps", "longest_run",
                "most_common_move", "distinct_trees", "resource_change")


def record(folder: Path, episodes: int) -> list[Path]:
    crafter, jericho = folder / "crafter", folder / "jericho"
    subprocess.run(["qtc", "play", "crafter", "--agent", "scripted", "--episodes", str(episodes), "--max-steps",
                    "200", "--out", str(crafter), "--quiet"], check=True)
    for rom in sorted(ROMS.glob("*.z*")):
        subprocess.run(["qtc", "play", "jericho", "--rom", str(rom), "--agent", "walkthrough", "--no-valid-actions",
                        "--max-steps", "400", "--out", str(jericho), "--quiet"], check=False)
    return [crafter, jericho]


class Worker:
    """A worker process (bench/compiler_worker.py) with qtc from `path` (None: the working tree)."""

    def __init__(self, path: Path | None, traces: list[Path], cap: int):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(path) if path else None,
                                                                        os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen([sys.executable, str(WORKER), str(ROOT / "templates"), str(cap),
                                         *map(str, traces)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env)

    def ask(self, request: str) -> list[str]:
        self.process.stdin.write(request + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().split()

    def close(self) -> None:
        self.ask("quit")
        self.process.wait()


def compare(workers: dict[str, Worker], template_ids: list[str], rounds: int) -> dict[str, dict[str, float]]:
    """Per template, the best time of each side over rounds taken in turn (rows checked equal in count)."""
    best = {}
    for template_id in template_ids:
        times = {side: math.inf for side in workers}
        counts = {}
        for _ in range(rounds):
            for side, worker in workers.items():
                _, seconds, counts[side] = worker.ask(f"run {template_id}")
                times[side] = min(times[side], float(seconds))
        if len(set(counts.values())) > 1:
            print(f"  !! {template_id}: rows {counts}", flush=True)
        best[template_id] = times
    return best


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """b and R² of log t = a + b log n."""
    xs, ys = [math.log(n) for n, _ in points], [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    residual = sum((y - my - b * (x - mx)) ** 2 for x, y in zip(xs, ys))
    total = sum((y - my) ** 2 for y in ys)
    return b, 1 - residual / total if total else 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="*", type=Path)
    parser.add_argument("--record", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cap", type=int, default=16)
    parser.add_argument("--lengths", nargs="*", type=int, default=[1000, 2000, 4000, 8000])
    parser.add_argument("--only", nargs="*", default=[], help="templates whose id holds one of these")
    parser.add_argument("--before", default="fd73c53", help="the revision whose compiler is compared")
    args = parser.parse_args()
    traces = args.traces or record(ROOT / "out" / "bench" / "compiler", args.record)
    print(f"duckdb {duckdb.__version__}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"cap {args.cap}, {args.rounds} rounds in turn, minimum reported; before = {args.before}", flush=True)
    library = sorted(load_library([ROOT / "templates"]).compiled, key=lambda c: c.id)
    chosen = [c for c in library if not args.only or any(o in c.id for o in args.only)]
    workers = {"before": Worker(tree_before(args.before), traces, args.cap), "ir": Worker(None, traces, args.cap)}
    # Templates that use language the earlier compiler lacks (multiple choice, groups) are left out.
    known = set(workers["before"].ask("ids"))
    if missing := [c.id for c in chosen if c.id not in known]:
        print(f"left out, not compiled at {args.before}: {', '.join(missing)}", flush=True)
    chosen = [c for c in chosen if c.id in known]
    best = compare(workers, [c.id for c in chosen], args.rounds)
    print(f"{'template':<42} {'before s':>9} {'ir s':>8} {'before/ir':>9}")
    for template_id, t in best.items():
        print(f"{template_id:<42} {t['before']:>9.3f} {t['ir']:>8.3f} {t['before'] / t['ir']:>9.2f}")
    total = {side: sum(t[side] for t in best.values()) for side in SIDES}
    print(f"{'whole library (sum of the bests)':<42} {total['before']:>9.3f} {total['ir']:>8.3f} "
          f"{total['before'] / total['ir']:>9.2f}", flush=True)
    growth = [c.id for c in chosen if c.env == "crafter" and any(f in c.id for f in RANGE_FAMILY)]
    if args.lengths and growth:
        print(f"growth: one Crafter episode of n steps, range-induction templates ({len(growth)}), cap {args.cap}")
        points = {side: [] for side in SIDES}
        for n in args.lengths:
            for worker in workers.values():
                worker.ask(f"long {n}")
            best = compare(workers, growth, max(1, args.rounds - 1))
            sums = {side: sum(t[side] for t in best.values()) for side in SIDES}
            for side in SIDES:
                points[side].append((n, sums[side]))
            print(f"  n = {n:>6}: before {sums['before']:.2f} s, ir {sums['ir']:.2f} s, "
                  f"before/ir {sums['before'] / sums['ir']:.2f}", flush=True)
        if len(args.lengths) >= 2:
            for side in SIDES:
                exponent, r2 = fit(points[side])
                print(f"  {side}: time ~ n^{exponent:.2f} (R² {r2:.3f})")
    for worker in workers.values():
        worker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
