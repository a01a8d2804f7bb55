"""The event templates side by side (templates/any: events.qtpl, event_windows.qtpl), on the episodes
bench/bench_compiler.py records (out/bench/compiler/) or --traces:

    python bench/bench_events.py [--traces DIR...] [--cap N] [--rounds 3]

Per template, the statement `qtc generate` runs first (at most --cap bindings per episode and side,
false premises checked), timed in one store, the best of the rounds, taken in turn: its seconds, its
answerable candidates per episode (the bindings whose requires held), and the share of them answered 0.
Reports only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from bench_compiler import ROOT

from qtc.dsl.compile import statement
from qtc.dsl.library import load_library
from qtc.runtime.trace.store import open_store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="+", type=Path,
                        default=[ROOT / "out/bench/compiler/crafter", ROOT / "out/bench/compiler/jericho"])
    parser.add_argument("--cap", type=int, default=16, help="bindings per episode and side (generate's first cap)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    library = [c for c in load_library([ROOT / "templates" / "any"]).compiled]
    con = open_store(*args.traces)
    con.execute("SET VARIABLE qtc_seed = 42")
    con.execute(f"SET VARIABLE qtc_max_candidates = {args.cap}")
    episodes = con.execute("SELECT count(*) FROM episodes").fetchone()[0]
    sql = {c.id: statement(c, args.cap, premise=True) for c in library}
    best = {c.id: math.inf for c in library}
    rows = {}
    for _ in range(args.rounds):
        for c in library:
            started = time.perf_counter()
            result = con.execute(sql[c.id])
            names = [d[0] for d in result.description]
            rows[c.id] = [dict(zip(names, row)) for row in result.fetchall()]
            best[c.id] = min(best[c.id], time.perf_counter() - started)
    print(f"{episodes} episodes, cap {args.cap}")
    print(f"{'template':30} {'seconds':>8} {'answerable/episode':>19} {'answer 0':>9}")
    for c in library:
        answerable = [r for r in rows[c.id] if not r["adversarial"]]
        zeros = sum(r["answer"] == 0 for r in answerable)
        share = f"{zeros / len(answerable):.0%}" if answerable and c.answer_type == "integer" else "-"
        print(f"{c.id:30} {best[c.id]:8.3f} {len(answerable) / episodes:19.1f} {share:>9}")


if __name__ == "__main__":
    main()
