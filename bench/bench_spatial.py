"""Spatial primitives before and after keeping maps and searches per state version, side by side in
one run: breadth-first searches on a 64x64 Crafter map, the spatial templates over many recorded
episodes, and how the time per step grows with the length of an episode.

    python bench/bench_spatial.py [--episodes 100] [--steps 200] [--traces bench-traces]
                                  [--max-candidates 200] [--growth 200,400,800,1600] [--before REV]
                                  [--roms ../shared/roms] [--threads 1]

"Before" is runtime/spatial as it was at REV (default bf2073a, the last commit before the rewrite),
read from git into a package of its own (bench/code_before.py); "after" is the working tree. Both
register their functions on their own connection holding the same traces, the variants alternate
template by template, and every template must give the same rows both ways. Times are wall clock on
a shared machine: only the ratios mean anything. DuckDB runs on --threads threads (default 1, so
that the time spent in the primitives, summed over the calls, is a share of the statement's time).

Episodes are recorded once into --traces and reused on later runs (recording resumes where it
stopped): scripted Crafter episodes (seeds 0..N-1); for the growth measure, one long scripted
episode per length, kept alive (health, food, drink and energy refilled after each step, no step
into lava) so that it reaches the length; and zork1's walkthrough when the story file is there.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from types import ModuleType

import crafter
import duckdb
import numpy as np

from qtc.dsl import crafter_data
from qtc.dsl.library import load_library
from qtc.runtime.record.agents import Choice, ScriptedCrafterAgent, WalkthroughAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.record.episodes import EpisodeSpec, record_episode, record_episodes
from qtc.runtime.record.jericho import JerichoSession
from qtc.runtime.spatial import grid, udf
from qtc.runtime.trace.format import episode_id, is_complete
from qtc.runtime.trace.store import load_traces

from code_before import ROOT, import_before

TEMPLATES = ROOT / "templates"
# The templates that call a spatial primitive, by env.
CRAFTER_TEMPLATES = ("crafter.route_to_nearest", "crafter.nearest_direction", "crafter.terrain_after_walk",
                     "crafter.closest_step_in_range", "crafter.farthest_step_in_range",
                     "crafter.adjacent_steps_in_range")
JERICHO_TEMPLATES = ("jericho.path_length_between_steps", "jericho.rooms_within_k", "jericho.reachable_within_k",
                     "jericho.follow_moves", "jericho.closer_of_two_rooms")
GROWTH_TEMPLATES = ("crafter.route_to_nearest", "crafter.nearest_direction")


class Timed:
    """Wraps a udf module's `_vectorised` so that the time spent inside its functions adds up."""

    def __init__(self, module: ModuleType):
        self.seconds = 0.0
        vectorised = module._vectorised

        def timed_vectorised(primitive, data):
            call = vectorised(primitive, data)

            def timed_call(*columns):
                start = time.perf_counter()
                try:
                    return call(*columns)
                finally:
                    self.seconds += time.perf_counter() - start
            timed_call.__signature__ = call.__signature__
            return timed_call
        module._vectorised = timed_vectorised


def store(module: ModuleType, traces: list[Path], threads: int) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"threads": threads})
    load_traces(con, traces)
    module.register_primitives(con)
    return con


def run_both(variants: dict, traces: list[Path], sql: str, cap: int | None, threads: int) -> dict:
    """{variant: (seconds, seconds inside the primitives, rows)}, the variants one after the other."""
    results = {}
    for name, (module, timer) in variants.items():
        con = store(module, traces, threads)
        if cap is not None:
            con.execute(f"SET VARIABLE qtc_max_candidates = {int(cap)}")
        timer.seconds = 0.0
        start = time.perf_counter()
        rows = con.execute(sql).fetchall()
        results[name] = (time.perf_counter() - start, timer.seconds, rows)
        con.close()
    before, after = results["before"][2], results["after"][2]
    if before != after:
        raise SystemExit(f"different rows before and after: {len(before)} vs {len(after)}")
    return results


# ---- breadth-first searches ----

def bench_bfs(before_grid: ModuleType, seconds: float = 2.0) -> None:
    """Searches from random walkable cells of a real generated map (Crafter's own world generator),
    each on a fresh map state (nothing kept from the search before), both ways from the same starts."""
    env = crafter.Env(seed=0)
    env.reset()
    world = env._world
    names = [world._mat_names[i] for i in range(len(world._mat_names))]
    materials = world._mat_map.astype(np.int16)
    walkable = np.isin(materials, [names.index(m) for m in crafter_data.WALKABLE if m in names])
    everything = np.ones_like(walkable)
    cells = np.argwhere(walkable)
    print(f"breadth-first search to the nearest cell, {materials.shape[0]}x{materials.shape[1]} map, fresh state each:")
    for material in ("tree", "water", "diamond"):
        def answers(module, start):
            state = module.MapState(everything, materials, walkable)
            found = module.nearest(state, start, names.index(material), False)
            return None if found is None else (found.distance, found.goals, found.targets)
        rate = {}
        starts = [tuple(map(int, cell)) for cell in cells[np.random.default_rng(0).integers(len(cells), size=20000)]]
        for name, module in (("before", before_grid), ("after", grid)):
            searches, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds / 2:
                module.nearest(module.MapState(everything, materials, walkable), starts[searches % len(starts)],
                               names.index(material), False)
                searches += 1
            rate[name] = searches / (time.perf_counter() - start)
        same = all(answers(before_grid, s) == answers(grid, s) for s in starts[:200])
        print(f"  {material:8s} before {rate['before']:8.0f}/s  after {rate['after']:8.0f}/s  "
              f"ratio {rate['after'] / rate['before']:5.1f}x  same answers: {same}")


# ---- recording ----

class KeptAlive:
    """The scripted agent, never stepping into lava; with `keep_alive` after each step the player
    cannot die, so an episode reaches its step limit."""
    name = "scripted"

    def __init__(self, seed: int):
        self.agent = ScriptedCrafterAgent(seed)

    def choose(self, state: dict) -> Choice:
        choice = self.agent.choose(state)
        offset = crafter_data.MOVES.get(choice.action)
        if offset:
            view = state["view"]
            i, j = state["x"] + offset[0] - view["x"], state["y"] + offset[1] - view["y"]
            if 0 <= j < len(view["rows"]) and 0 <= i < len(view["rows"][j]) and view["rows"][j][i] == "lava":
                return Choice("noop", choice.reason)
        return choice


def keep_alive(session, record) -> None:
    for stat in ("health", "food", "drink", "energy"):
        session.player.inventory[stat] = 9


def record_corpus(directory: Path, episodes: int, steps: int) -> None:
    specs = [EpisodeSpec(episode_id("crafter", "scripted", seed),
                         lambda seed=seed: (CrafterSession(seed, "scripted", steps), ScriptedCrafterAgent(seed)))
             for seed in range(episodes)]
    record_episodes(specs, directory, steps, show_progress=False)


def record_long(directory: Path, steps: int) -> Path:
    path = directory / f"{episode_id('crafter', 'scripted', 0)}.jsonl"
    if not is_complete(path):
        record_episode(CrafterSession(0, "scripted", steps), KeptAlive(0), directory, steps, on_step=keep_alive)
    return directory


def record_zork1(directory: Path, roms: Path) -> Path | None:
    rom = roms / "zork1.z5"
    if not rom.is_file():
        return None
    if not list(directory.glob("*.jsonl")):
        session = JerichoSession(rom, None, "walkthrough-nva", record_valid_actions=False)
        record_episode(session, WalkthroughAgent(session.env.get_walkthrough()), directory, 1000)
    return directory


# ---- templates ----

def report(label: str, results: dict, steps: int | None = None) -> None:
    (b, b_inside, rows), (a, a_inside, _) = results["before"], results["after"]
    per_step = f" {1000 * a / steps:6.2f} ms/step" if steps else ""
    print(f"  {label:36s} {len(rows):7d} rows  before {b:7.2f} s ({b_inside:6.2f} in primitives)  "
          f"after {a:7.2f} s ({a_inside:6.2f})  ratio {b / a:5.1f}x, "
          f"in primitives {b_inside / max(a_inside, 1e-9):6.1f}x"
          f"{per_step}")


def bench_templates(variants: dict, traces: list[Path], ids: tuple[str, ...], cap: int | None,
                    threads: int) -> None:
    compiled = {c.id: c for c in load_library([TEMPLATES]).compiled}
    for template in ids:
        report(template, run_both(variants, traces, compiled[template].sql, cap, threads))


def fitted_exponent(lengths: list[int], seconds: list[float]) -> tuple[float, float]:
    """b and R² of seconds ~ a * length^b, by least squares on the logarithms."""
    x, y = np.log(lengths), np.log(seconds)
    b, a = np.polyfit(x, y, 1)
    residual = y - (a + b * x)
    return float(b), float(1 - residual.var() / y.var()) if y.var() else 1.0


def bench_growth(variants: dict, directory: Path, lengths: list[int], threads: int) -> None:
    compiled = {c.id: c for c in load_library([TEMPLATES]).compiled}
    for template in GROWTH_TEMPLATES:
        print(f"  {template} (every candidate, no cap):")
        times: dict[str, list[float]] = {"before": [], "after": [], "before inside": [], "after inside": []}
        for length in lengths:
            traces = [record_long(directory / str(length), length)]
            results = run_both(variants, traces, compiled[template].sql, None, threads)
            for name in ("before", "after"):
                times[name].append(results[name][0])
                times[f"{name} inside"].append(results[name][1])
            (b, b_in, rows), (a, a_in, _) = results["before"], results["after"]
            print(f"    {length:5d} steps {len(rows):6d} rows  per step: before {1000 * b / length:6.2f} ms "
                  f"({1000 * b_in / length:6.2f} in primitives)  after {1000 * a / length:6.2f} ms "
                  f"({1000 * a_in / length:6.2f})  ratio {b / a:5.1f}x, in primitives {b_in / max(a_in, 1e-9):6.1f}x")
        fits = {name: fitted_exponent(lengths, seconds) for name, seconds in times.items()}
        print("    time ~ steps^b: " + ", ".join(f"{name} b={b:.2f} (R² {r2:.2f})" for name, (b, r2) in fits.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--traces", type=Path, default=Path("bench-traces"))
    parser.add_argument("--max-candidates", type=int, default=200, help="candidates per episode and template")
    parser.add_argument("--growth", default="200,400,800,1600", help="episode lengths for the growth measure")
    parser.add_argument("--before", default="bf2073a", help="git revision of the code before")
    parser.add_argument("--roms", type=Path, default=ROOT.parent / "shared" / "roms")
    parser.add_argument("--threads", type=int, default=1, help="DuckDB threads")
    args = parser.parse_args()
    before = import_before(args.before, "runtime/spatial", "udf")
    variants = {"before": (before, Timed(before)), "after": (udf, Timed(udf))}
    print(f"duckdb {duckdb.__version__}, {args.threads} thread(s); before: {args.before}, after: working tree")
    bench_bfs(import_before(args.before, "runtime/spatial", "grid"))

    corpus = args.traces / "crafter"
    record_corpus(corpus, args.episodes, args.steps)
    print(f"spatial templates over {args.episodes} scripted Crafter episodes (<= {args.steps} steps), "
          f"{args.max_candidates} candidates per episode:")
    bench_templates(variants, [corpus], CRAFTER_TEMPLATES, args.max_candidates, args.threads)
    zork1 = record_zork1(args.traces / "zork1", args.roms)
    if zork1:
        print("spatial templates over zork1's walkthrough, every candidate:")
        bench_templates(variants, [zork1], JERICHO_TEMPLATES, None, args.threads)
    print("growth with the episode's length (one kept-alive scripted episode per length):")
    bench_growth(variants, args.traces / "crafter-long", [int(n) for n in args.growth.split(",")], args.threads)


if __name__ == "__main__":
    main()
