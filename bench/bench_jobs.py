"""Where shards pay: wall seconds of `qtc generate --jobs 2` with its shards forced (whatever the traces'
size) against `--jobs 1`, on each set of traces, beside the set's episodes, steps and bytes:

    python bench/bench_jobs.py --traces DIR... [--rounds 3] [--jobs 2]

Each set is a `--traces` argument (a folder or file). Fresh processes taken in turn round by round,
medians of the rounds; the ratio under 1 is where workers pay. The smallest set where they do sets
runtime/generate/shards.py's SHARDS_PAY_STEPS. Reports only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench_targets import measured, medians

from qtc.runtime.generate.shards import read_episodes

# qtc generate with runners.workers taking --jobs at its word: shards however small the traces.
FORCED = ("import sys; from qtc.runtime.generate import runners; runners.workers = lambda episodes, jobs, horizon: jobs; "
          "from qtc.cli import main; sys.exit(main(sys.argv[1:]))")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", nargs="+", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    print(f"{'traces':<28} {'episodes':>8} {'steps':>8} {'MB':>6} {'--jobs 1 s':>10} "
          f"{f'--jobs {args.jobs} s':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as folder:
        for traces in args.traces:
            episodes, files = read_episodes((traces,))
            out = Path(folder) / "qa.jsonl"
            command = ["generate", "--traces", str(traces), "--out", str(out), "--quiet", "--force"]
            # In the output's folder: `python -m` puts the current folder first on sys.path.
            got = medians(args.rounds, {
                1: lambda _: measured([sys.executable, "-m", "qtc.cli", *command, "--jobs", "1"], out.parent),
                args.jobs: lambda _: measured([sys.executable, "-c", FORCED, *command, "--jobs", str(args.jobs)],
                                              out.parent)})
            one, many = got[1][1], got[args.jobs][1]
            print(f"{str(traces)[-28:]:<28} {len(episodes):>8} {sum(e.n_steps for e in episodes.values()):>8} "
                  f"{sum(f.size for f in files) / 2**20:>6.1f} {one:>10.1f} {many:>10.1f} {many / one:>6.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
