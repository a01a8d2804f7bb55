"""Generation at scale: episodes per second with 1, 2 and all cores (--jobs) and through a local Ray
cluster, side by side in one run over the same traces, and how memory grows with the episodes.

    python bench/bench_scale.py [--episodes 1000] [--sizes 100 300] [--record 20] [--traces out/bench/crafter]

Records --record scripted Crafter episodes (kept in --traces, as bench_generate.py does) and replicates
them to --episodes files under new ids. Each configuration is a `qtc generate` process of its own with
the default options; its peak memory is that of its largest process (the driver, or one worker; Ray's
own processes not counted). The outputs must be the same bytes, which the last column checks. Memory
growth: --jobs 1 and --jobs all at each of --sizes and --episodes. Needs Ray for the Ray row (pip
install 'qtc[ray]'), else it is left out.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_generate import replicate

from qtc.commands import play
from qtc.commands._stages import run_command
from qtc.runtime.generate.shards import default_jobs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' local Ray cluster
from support.ray_head import LocalRayCluster  # noqa: E402


def run_generate(traces: Path, out: Path, flags: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Seconds, peak resident memory (MB) of the largest process, and the output's SHA-256."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "qtc.cli", "generate", "--traces", str(traces), "--out",
                                str(out), "--quiet", *flags], env={**os.environ, **(env or {})},
                               stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"qtc generate {' '.join(flags)} failed")
    return seconds, usage.ru_maxrss // 1024, hashlib.sha256(out.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 300], help="smaller sizes, for memory growth")
    parser.add_argument("--record", type=int, default=20, help="distinct episodes to record (default 20)")
    parser.add_argument("--traces", type=Path, default=Path("out") / "bench" / "crafter")
    args = parser.parse_args()
    run_command(play, ["crafter", "--agent", "scripted", "--seed", "0", "--episodes", str(args.record),
                       "--max-steps", "200", "--out", str(args.traces), "--quiet"])
    recorded = sorted(args.traces.glob("*.jsonl"))[:args.record]
    cores = default_jobs()
    jobs = sorted({1, 2, cores})
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        for size in sorted({*args.sizes, args.episodes}):
            folders[size] = Path(tmp) / f"traces{size}"
            replicate(recorded, size, folders[size])
        print(f"\n{args.episodes} episodes, {cores} cores; each configuration a process of its own\n")
        print(f"{'configuration':<18} {'seconds':>8} {'episodes/s':>10} {'speed-up':>8} {'peak MB':>8}  same bytes")
        baseline = None
        for n in jobs:
            seconds, peak, digest = run_generate(folders[args.episodes], Path(tmp) / f"jobs{n}.jsonl",
                                                 ["--jobs", str(n)])
            baseline = baseline or (seconds, digest)
            _row(f"--jobs {n}", args.episodes, seconds, peak, baseline, digest)
        try:
            import ray  # noqa: F401
        except ImportError:
            print("(no Ray row: Ray is not installed)")
        else:
            cluster = LocalRayCluster(cores)
            try:
                seconds, peak, digest = run_generate(folders[args.episodes], Path(tmp) / "ray.jsonl",
                                                     ["--ray", cluster.address], cluster.env)
            finally:
                cluster.stop()
            _row(f"--ray ({cores} CPUs)", args.episodes, seconds, peak, baseline, digest)
        print(f"\n{'episodes':>8} {'--jobs 1 peak MB':>16} {f'--jobs {cores} peak MB':>17} {'--jobs 1 s':>10}")
        for size in sorted(args.sizes):
            one = run_generate(folders[size], Path(tmp) / "one.jsonl", ["--jobs", "1"])
            every = run_generate(folders[size], Path(tmp) / "every.jsonl", ["--jobs", str(cores)])
            print(f"{size:8d} {one[1]:16d} {every[1]:17d} {one[0]:10.1f}", flush=True)


def _row(name: str, episodes: int, seconds: float, peak: int, baseline: tuple[float, str], digest: str) -> None:
    print(f"{name:<18} {seconds:8.1f} {episodes / seconds:10.2f} {baseline[0] / seconds:7.2f}x {peak:8d}  "
          f"{'yes' if digest == baseline[1] else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
