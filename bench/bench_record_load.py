"""Recording and loading throughput (steps per second) for both games; loading before and after the
DuckDB reader side by side.

    python bench/bench_record_load.py [--roms ../shared/roms] [--crafter-episodes 3] [--load DIR ...]
                                      [--rounds 3] [--before REV]

Records scripted Crafter episodes (200 steps each) and zork1's walkthrough with and without the
valid-action finder, then loads the traces into in-memory stores, with the loader as it was at REV
(default bf2073a: every line read and checked in Python; runtime/trace read from git by
bench/code_before.py) and as it is in the working tree, alternately, --rounds times; the best round
of each counts. --load adds folders of traces to load (bench/bench_spatial.py records 100 Crafter
episodes in bench-traces/crafter). Both loaders must fill every table with the same rows.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb

from qtc.dsl import schema
from qtc.runtime.record.agents import ScriptedCrafterAgent, WalkthroughAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import record_episode
from qtc.runtime.record.jericho import JerichoSession
from qtc.runtime.trace import store

from code_before import ROOT, import_before


def timed(label: str, run) -> int:
    start = time.perf_counter()
    steps = run()
    seconds = time.perf_counter() - start
    print(f"{label:52s} {steps:6d} steps {seconds:7.2f} s {steps / seconds:9.0f} steps/s")
    return steps


def tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    # The vocabulary is inserted DISTINCT, in no particular order.
    return {t.sql_name: con.execute(f"SELECT * FROM {t.sql_name}{' ORDER BY ALL' if t.per_game else ''}").fetchall()
            for t in schema.TABLES}


def compare_loads(label: str, folders: list[Path], loaders: dict, rounds: int) -> None:
    """Each loader on `folders`, alternately; the best of `rounds` and the ratio."""
    best: dict[str, float] = {}
    loaded: dict[str, dict] = {}
    steps = 0
    for _ in range(rounds):
        for name, load in loaders.items():
            con = duckdb.connect()
            start = time.perf_counter()
            steps = load(con, folders).steps
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
            loaded[name] = tables(con)
            con.close()
    different = [table for table, rows in loaded["before"].items() if loaded["after"][table] != rows]
    if different:
        raise SystemExit(f"{label}: the loaders filled {', '.join(different)} differently")
    print(f"load {label:47s} {steps:6d} steps  before {steps / best['before']:8.0f} steps/s  "
          f"after {steps / best['after']:8.0f} steps/s  ratio {best['before'] / best['after']:5.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roms", type=Path, default=ROOT.parent / "shared" / "roms")
    parser.add_argument("--crafter-episodes", type=int, default=3)
    parser.add_argument("--load", type=Path, nargs="*", default=[], help="more folders of traces to load")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default="bf2073a", help="git revision of the loader before")
    args = parser.parse_args()
    loaders = {"before": import_before(args.before, "runtime/trace", "store").load_traces,
               "after": store.load_traces}
    print(f"duckdb {duckdb.__version__}; before: {args.before}, after: working tree")
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
        compare_loads("crafter traces", [crafter_dir], loaders, args.rounds)
        if zork1:
            compare_loads("jericho traces", [jericho_dir], loaders, args.rounds)
        for folder in args.load:
            compare_loads(str(folder), [folder], loaders, args.rounds)


def read_steps(path: Path) -> int:
    with path.open() as stream:
        return sum(1 for _ in stream) - 1


if __name__ == "__main__":
    main()
