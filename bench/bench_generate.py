"""Question generation throughput: questions and episodes per second for the whole standard library.

    python bench/bench_generate.py [--sizes 100 1000] [--record 20] [--traces out/bench/crafter]

Records --record scripted Crafter episodes (seeds 0.., 200 steps; kept in --traces, so a second run
records nothing), then builds each size's set from them: episode k is a recorded episode under a new id
(`<id>-c<k>`), so every size reads real recorded traces without recording a thousand episodes
(about 3 s each). Use --record 1000 for all-distinct episodes. For each size it runs `qtc generate`'s
pipeline with the default options and prints the time split into load, compile, query, render and write.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from qtc.commands import play
from qtc.commands._stages import run_command
from qtc.runtime.generate.run import Options, generate
from qtc.runtime.qa.write import write_qa

PHASES = ("load", "compile", "query", "render", "write")


def replicate(recorded: list[Path], size: int, folder: Path) -> None:
    """`size` episode files in `folder`, cycling through the recorded ones under new episode ids."""
    folder.mkdir(parents=True)
    for k in range(size):
        source = recorded[k % len(recorded)]
        header, rest = source.read_text(encoding="utf-8").split("\n", 1)
        record = json.loads(header)
        record["episode_id"] = f"{record['episode_id']}-c{k}"
        (folder / f"{record['episode_id']}.jsonl").write_text(json.dumps(record) + "\n" + rest, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--record", type=int, default=20, help="distinct episodes to record (default 20)")
    parser.add_argument("--traces", type=Path, default=Path("out") / "bench" / "crafter")
    parser.add_argument("--max-per-template", type=int, default=Options.max_per_template)
    args = parser.parse_args()
    run_command(play, ["crafter", "--agent", "scripted", "--seed", "0", "--episodes", str(args.record),
                       "--max-steps", "200", "--out", str(args.traces), "--quiet"])
    recorded = sorted(args.traces.glob("*.jsonl"))[:args.record]
    print(f"\n{'episodes':>8} {'questions':>9} {'total s':>8} {'q/s':>8} {'ep/s':>7}  "
          + " ".join(f"{p:>8}" for p in PHASES))
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "traces"
            replicate(recorded, size, folder)
            generation = generate(Options((folder,), max_per_template=args.max_per_template))
            start = time.perf_counter()
            write_qa(Path(tmp) / "qa.jsonl", generation.records)
            generation.timings["write"] = time.perf_counter() - start
        total = sum(generation.timings.values())
        questions = len(generation.records)
        print(f"{size:8d} {questions:9d} {total:8.1f} {questions / total:8.1f} {size / total:7.1f}  "
              + " ".join(f"{generation.timings[p]:8.2f}" for p in PHASES), flush=True)


if __name__ == "__main__":
    main()
