"""Spatial primitive throughput: breadth-first searches on 64x64 Crafter maps, and whole spatial
templates over many recorded Crafter episodes.

    python bench/bench_spatial.py [--episodes 100] [--steps 200] [--traces bench-traces/crafter]
                                  [--max-candidates 200]

Episodes are recorded once (scripted agent, seeds 0..N-1) into --traces and reused on later runs:
recording resumes where it stopped. Each spatial template then runs once over all episodes, the way
`qtc generate` runs it (one statement, a per-episode candidate cap).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import crafter
import numpy as np

from qtc.dsl.library import load_library
from qtc.dsl import crafter_data
from qtc.runtime.record.agents import ScriptedCrafterAgent
from qtc.runtime.record.crafter import CrafterSession
from qtc.runtime.spatial.grid import MapState, nearest
from qtc.runtime.record.episodes import EpisodeSpec, record_episodes
from qtc.runtime.trace.store import open_store
from qtc.runtime.trace.format import episode_id

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


def bench_bfs(seconds: float = 2.0) -> None:
    """Searches from random walkable cells of real generated maps (Crafter's own world generator)."""
    env = crafter.Env(seed=0)
    env.reset()
    world = env._world
    names = [world._mat_names[i] for i in range(len(world._mat_names))]
    materials = world._mat_map.astype(np.int16)
    walkable = np.isin(materials, [names.index(m) for m in crafter_data.WALKABLE if m in names])
    cells = np.argwhere(walkable)
    rng = np.random.default_rng(0)
    everything = np.ones_like(walkable)
    for material in ("tree", "water", "diamond"):
        searches = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            x, y = cells[rng.integers(len(cells))]
            # A fresh state each time: no goal cells kept from the last search.
            nearest(MapState(everything, materials, walkable), (int(x), int(y)), names.index(material), False)
            searches += 1
        elapsed = time.perf_counter() - start
        print(f"BFS to the nearest {material:8s} on a {materials.shape[0]}x{materials.shape[1]} map: "
              f"{searches / elapsed:8.0f} searches/s ({1000 * elapsed / searches:.2f} ms each)")


def record(directory: Path, episodes: int, steps: int) -> None:
    specs = [EpisodeSpec(episode_id("crafter", "scripted", seed),
                         lambda seed=seed: (CrafterSession(seed, "scripted", steps), ScriptedCrafterAgent(seed)))
             for seed in range(episodes)]
    start = time.perf_counter()
    record_episodes(specs, directory, steps)
    print(f"recorded or found {episodes} episodes in {time.perf_counter() - start:.1f} s")


def bench_templates(directory: Path, cap: int) -> None:
    start = time.perf_counter()
    con = open_store(directory)
    episodes = con.execute("SELECT count(*), sum(n_steps) FROM episodes").fetchall()[0]
    print(f"loaded {episodes[0]} episodes ({episodes[1]} steps) in {time.perf_counter() - start:.1f} s")
    con.execute(f"SET VARIABLE qtc_max_candidates = {int(cap)}")
    library = load_library([TEMPLATES / "crafter" / "spatial.qtpl"])
    try:
        for compiled in library.compiled:
            start = time.perf_counter()
            rows = con.execute(compiled.sql).fetchall()
            elapsed = time.perf_counter() - start
            print(f"{compiled.id:36s} {len(rows):7d} candidates {elapsed:7.2f} s "
                  f"{len(rows) / elapsed:8.0f} candidates/s {episodes[0] / elapsed:7.1f} episodes/s")
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--traces", type=Path, default=Path("bench-traces/crafter"))
    parser.add_argument("--max-candidates", type=int, default=200, help="candidates per episode and template")
    args = parser.parse_args()
    bench_bfs()
    record(args.traces, args.episodes, args.steps)
    bench_templates(args.traces, args.max_candidates)


if __name__ == "__main__":
    main()
