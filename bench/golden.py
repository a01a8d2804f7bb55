"""Golden check of the IR backend: `qtc generate` on the same traces with QTC_BACKEND=legacy and
QTC_BACKEND=ir must write the same questions and summary, byte for byte (compat sampling).

    python bench/golden.py --traces TRACES... [--templates PATH...] [--max-per-template N]

Runs seeds 42 and 7, each without and with a horizon (--horizon, default 60; with it the adversarial
ratio is 0.3), and prints, per run, the SHA-256 of both outputs and which templates differ if any.
Exits 1 if anything differs. Which templates ran on the IR is what `qtc compile --explain ID` reports
(dsl/ir/backend.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

BACKENDS = ("legacy", "ir")


def runs(horizon: int) -> list[tuple[str, list[str]]]:
    return [("seed 42", ["--seed", "42"]),
            (f"seed 7, horizon {horizon}", ["--seed", "7", "--horizon", str(horizon), "--adversarial-ratio", "0.3"]),
            ("seed 7", ["--seed", "7"]),
            (f"seed 42, horizon {horizon}", ["--seed", "42", "--horizon", str(horizon)])]


def generate(backend: str, traces: list[str], options: list[str], out: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["qtc", "generate", "--traces", *traces, "--out", str(out), "--quiet", *options],
                   check=True, env={**os.environ, "QTC_BACKEND": backend})
    return time.perf_counter() - started


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def by_template(path: Path) -> dict[str, list[str]]:
    lines = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        lines[json.loads(line)["template_id"]].append(line)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", nargs="+", required=True)
    parser.add_argument("--templates", nargs="*", default=[])
    parser.add_argument("--max-per-template", type=int)
    parser.add_argument("--horizon", type=int, default=60)
    args = parser.parse_args()
    extra = (["--templates", *args.templates] if args.templates else []) + (
        ["--max-per-template", str(args.max_per_template)] if args.max_per_template else [])
    failed = False
    with tempfile.TemporaryDirectory() as directory:
        for label, options in runs(args.horizon):
            outs, seconds = {}, {}
            for backend in BACKENDS:
                outs[backend] = Path(directory) / f"{backend}-{label.replace(' ', '').replace(',', '-')}.jsonl"
                seconds[backend] = generate(backend, args.traces, options + extra, outs[backend])
            qa = {b: digest(outs[b]) for b in BACKENDS}
            summary = {b: digest(outs[b].with_suffix(".summary.json")) for b in BACKENDS}
            same = qa["legacy"] == qa["ir"] and summary["legacy"] == summary["ir"]
            failed |= not same
            print(f"{label:<22} qa legacy {qa['legacy']} ir {qa['ir']}  summary legacy {summary['legacy']} "
                  f"ir {summary['ir']}  {'IDENTICAL' if same else 'DIFFERENT'}  "
                  f"generate {seconds['legacy']:.1f}s legacy / {seconds['ir']:.1f}s ir "
                  f"(x{seconds['legacy'] / seconds['ir']:.2f})", flush=True)
            if not same:
                legacy, ir = by_template(outs["legacy"]), by_template(outs["ir"])
                differing = sorted(t for t in set(legacy) | set(ir) if legacy.get(t) != ir.get(t))
                print(f"  templates that differ: {', '.join(differing) or '(summary only)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
