"""The legacy emitter against the IR, side by side in one run: per template, the whole library, and the
growth with episode length.

    python bench/bench_compiler.py [--traces DIR...] [--record 30] [--rounds 3] [--cap 16]
                                   [--lengths 1000 2000 4000 8000] [--only SUBSTRING...]

Without --traces it records (once, kept in out/bench/compiler/) --record scripted Crafter episodes of
200 steps and the walkthroughs of the Jericho story files in ../shared/roms (zork1, karn, ... without
the valid-action finder). Each template's statement runs as generate runs it (premise check, cap
--cap, seed 42) on both backends, interleaved round by round (legacy, ir, legacy, ir, ...); the minimum
of the rounds is reported, with the ratio legacy / ir. Growth: one Crafter episode made of the
recorded episodes' steps, concatenated and renumbered, cut to each length; the exponent b of
time ~ n^b is fitted for each backend over the range-induction templates. Reports only; nothing here
is a test.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from qtc.dsl import schema
from qtc.dsl.library import load_library
from qtc.dsl.sql import ident
from qtc.runtime.generate.premises import legacy_with_premise_check
from qtc.dsl.ir.backend import ir_statement
from qtc.runtime.trace.store import open_store

ROOT = Path(__file__).resolve().parents[1]
ROMS = ROOT.parent / "shared" / "roms"
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


def timed(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[float, int]:
    started = time.perf_counter()
    n = len(con.execute(sql).fetchall())
    return time.perf_counter() - started, n


def compare(con, templates, cap: int, rounds: int) -> dict[str, dict[str, float]]:
    """Per template, the best time of each backend over interleaved rounds (rows checked equal in count)."""
    con.execute("SET VARIABLE qtc_seed = 42")
    con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
    best = {}
    for compiled in templates:
        statements = {"legacy": legacy_with_premise_check(compiled, None),
                      "ir": ir_statement(compiled, cap, premise=True)}
        times = {b: math.inf for b in statements}
        counts = {}
        for _ in range(rounds):
            for backend, sql in statements.items():
                seconds, counts[backend] = timed(con, sql)
                times[backend] = min(times[backend], seconds)
        if counts["legacy"] != counts["ir"]:
            print(f"  !! {compiled.id}: {counts['legacy']} legacy rows, {counts['ir']} IR rows", flush=True)
        best[compiled.id] = times
    return best


def long_episode(traces: list[Path], n_steps: int) -> duckdb.DuckDBPyConnection:
    """A store holding one Crafter episode of `n_steps`: the recorded Crafter episodes' steps one after
    another (cycling through them), renumbered."""
    con = open_store(*traces)
    episodes = [e for e, in con.execute("SELECT episode_id FROM episodes WHERE env = 'crafter' ORDER BY episode_id")
                .fetchall()]
    offset, parts = 0, []
    lengths = {e: con.execute("SELECT coalesce(max(step), 0) FROM crafter_steps WHERE episode_id = ?", [e]).fetchone()[0]
               for e in episodes}
    for episode in itertools.cycle([e for e in episodes if lengths[e]]):  # as often as the length needs
        parts.append((episode, offset))
        offset += lengths[episode]
        if offset >= n_steps:
            break
    stepped = [t for t in schema.TABLES if t.env == "crafter" and t.has_step]
    for table in stepped:
        columns = [c.name for c in table.columns]
        selects = " UNION ALL ".join(
            f"SELECT 'long' AS episode_id, {', '.join(f'step + {off} AS step' if c == 'step' else ident(c) for c in columns)} "
            f"FROM {table.sql_name} WHERE episode_id = '{episode}' AND (step >= 1 OR {off} = 0)"
            for episode, off in parts)
        con.execute(f"INSERT INTO {table.sql_name} (episode_id, {', '.join(map(ident, columns))}) "
                    f"SELECT * FROM ({selects}) WHERE step <= {n_steps}")
    first = parts[0][0]
    con.execute(f"INSERT INTO crafter_map_init SELECT 'long', x, y, material FROM crafter_map_init WHERE episode_id = '{first}'")
    con.execute(f"INSERT INTO episodes SELECT 'long', env, game, seed, agent, {n_steps}, 'step_limit', NULL, NULL, "
                f"format_version FROM episodes WHERE episode_id = '{first}'")
    for table in [*stepped, schema.CRAFTER_MAP_INIT, schema.EPISODES]:
        con.execute(f"DELETE FROM {table.sql_name} WHERE episode_id <> 'long'")
    return con


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
    args = parser.parse_args()
    traces = args.traces or record(ROOT / "out" / "bench" / "compiler", args.record)
    print(f"duckdb {duckdb.__version__}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"cap {args.cap}, {args.rounds} interleaved rounds, minimum reported", flush=True)
    library = sorted(load_library([ROOT / "templates"]).compiled, key=lambda c: c.id)
    chosen = [c for c in library if not args.only or any(o in c.id for o in args.only)]
    con = open_store(*traces)
    best = compare(con, chosen, args.cap, args.rounds)
    con.close()
    print(f"{'template':<42} {'legacy s':>9} {'ir s':>8} {'legacy/ir':>9}")
    for template_id, t in best.items():
        print(f"{template_id:<42} {t['legacy']:>9.3f} {t['ir']:>8.3f} {t['legacy'] / t['ir']:>9.2f}")
    total = {b: sum(t[b] for t in best.values()) for b in ("legacy", "ir")}
    print(f"{'whole library (sum of the bests)':<42} {total['legacy']:>9.3f} {total['ir']:>8.3f} "
          f"{total['legacy'] / total['ir']:>9.2f}", flush=True)
    growth = [c for c in chosen if c.env == "crafter" and any(f in c.id for f in RANGE_FAMILY)]
    if not args.lengths or not growth:
        return 0
    print(f"growth: one Crafter episode of n steps, range-induction templates ({len(growth)}), cap {args.cap}")
    points = {"legacy": [], "ir": []}
    for n in args.lengths:
        con = long_episode(traces, n)
        best = compare(con, growth, args.cap, max(1, args.rounds - 1))
        con.close()
        sums = {b: sum(t[b] for t in best.values()) for b in points}
        for b in points:
            points[b].append((n, sums[b]))
        print(f"  n = {n:>6}: legacy {sums['legacy']:.2f} s, ir {sums['ir']:.2f} s, legacy/ir {sums['legacy'] / sums['ir']:.2f}",
              flush=True)
    if len(args.lengths) >= 2:
        for b in points:
            exponent, r2 = fit(points[b])
            print(f"  {b}: time ~ n^{exponent:.2f} (R² {r2:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
