"""Spatial primitives on stores of many episodes, before and after reading each episode's rows by its
range of row ids (runtime/trace/episode_rows.py), side by side in one run.

    python bench/bench_episode_rows.py [--sizes 100 600] [--record 20] [--traces out/bench/crafter]
                                       [--before 058dd28] [--template crafter.route_to_nearest]

Records --record scripted Crafter episodes of 200 steps (kept in --traces) and replicates them to each
size under new ids (bench_generate.py's replicate). For each size, one store holds them all, as
`qtc generate --jobs 1`, `qtc answer` or `qtc view` would: it times loading the spatial state of every
episode, one spatial template over the whole store (past 512 episodes, more than the primitives keep,
each statement loads every episode again), and rendering one log per episode (its last 20 steps, as
`qtc answer --context last:20` shows them). "Before" is runtime/spatial and runtime/evaluate at --before
(bench/code_before.py), "after" the working tree, each on its own connection over the same store file;
both must give the same rows and the same logs.
Wall-clock times on a shared machine: only the ratios mean anything.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb
from bench_generate import replicate
from code_before import ROOT, import_before

from qtc.commands import play
from qtc.commands._stages import run_command
from qtc.dsl.library import load_library
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.evaluate import context
from qtc.runtime.evaluate.context import Shown
from qtc.runtime.spatial import udf
from qtc.runtime.trace.store import load_traces


def connect(database: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(database), read_only=True, config={"threads": 1})


def load_every_episode(module, database: Path) -> float:
    """Seconds to load the spatial state of every episode of the store, each once."""
    con = connect(database)
    data = module.SpatialData(con)
    episodes = [e for (e,) in con.execute("SELECT episode_id FROM episodes ORDER BY episode_id").fetchall()]
    start = time.perf_counter()
    for episode in episodes:
        data.episode("crafter", episode)
    seconds = time.perf_counter() - start
    con.close()
    return seconds


def run_template(module, database: Path, sql: str) -> tuple[float, list]:
    con = connect(database)
    module.register_primitives(con)
    start = time.perf_counter()
    rows = con.execute(sql).fetchall()
    seconds = time.perf_counter() - start
    con.close()
    return seconds, rows


def render_every_log(module, database: Path, store_reader) -> tuple[float, list[str]]:
    """Seconds to render each episode's last 20 steps, and the logs; `store_reader` makes what the
    module's render_context reads from out of the connection."""
    con = connect(database)
    episodes = con.execute("SELECT episode_id, n_steps FROM episodes ORDER BY episode_id").fetchall()
    start = time.perf_counter()
    reader = store_reader(con)
    logs = [module.render_context(reader, episode, "crafter", Shown.of_steps(range(max(1, n - 19), n + 1)))
            for episode, n in episodes]
    seconds = time.perf_counter() - start
    con.close()
    return seconds, logs


def ratio(before: float, after: float) -> str:
    return f"{before:7.2f} s / {after:6.2f} s = {before / after:5.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 600])
    parser.add_argument("--record", type=int, default=20, help="distinct episodes to record (default 20)")
    parser.add_argument("--traces", type=Path, default=Path("out") / "bench" / "crafter")
    parser.add_argument("--before", default="058dd28", help="git revision of the code before")
    parser.add_argument("--template", default="crafter.route_to_nearest")
    args = parser.parse_args()
    run_command(play, ["crafter", "--agent", "scripted", "--seed", "0", "--episodes", str(args.record),
                       "--max-steps", "200", "--out", str(args.traces), "--quiet"])
    recorded = sorted(args.traces.glob("*.jsonl"))[:args.record]
    variants = {"before": import_before(args.before, "runtime/spatial", "udf"), "after": udf}
    renderers = {"before": (import_before(args.before, "runtime/evaluate", "context"), lambda con: con),
                 "after": (context, EpisodeRows)}
    sql = next(c.sql for c in load_library([ROOT / "templates"]).compiled if c.id == args.template)
    print(f"duckdb {duckdb.__version__}, 1 thread; before: {args.before}, after: working tree")
    print(f"{'episodes':>8}  {'load every episode':>30}  {args.template + ' over the store':>44}  "
          f"{'one log per episode':>30}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder, database = Path(tmp) / "traces", Path(tmp) / "store.duckdb"
            replicate(recorded, size, folder)
            with duckdb.connect(str(database)) as con:
                load_traces(con, [folder])
            loads = {name: load_every_episode(module, database) for name, module in variants.items()}
            runs = {name: run_template(module, database, sql) for name, module in variants.items()}
            logs = {name: render_every_log(module, database, reader) for name, (module, reader) in renderers.items()}
        if runs["before"][1] != runs["after"][1] or logs["before"][1] != logs["after"][1]:
            raise SystemExit(f"different rows or logs before and after at {size} episodes")
        print(f"{size:8d}  {ratio(loads['before'], loads['after'])}  {ratio(runs['before'][0], runs['after'][0]):>44}"
              f"  {ratio(logs['before'][0], logs['after'][0])}  ({len(runs['after'][1])} rows)")


if __name__ == "__main__":
    main()
