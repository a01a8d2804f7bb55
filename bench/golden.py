"""Golden check of a change that must not alter answers: `qtc generate` on the same traces with qtc as
it was at --before and with the working tree must write the same questions and summary, byte for byte.

    python bench/golden.py --traces TRACES... [--before REV] [--templates PATH...] [--max-per-template N] [--total N]

Runs seeds 42 and 7, each without and with a horizon (--horizon, default 60; with it the adversarial
ratio is 0.3), each with --max-per-template and --total if given, and prints, per run, the SHA-256 of
both outputs and which templates differ if any, with their questions before and now.
Exits 1 if anything differs. Both sides read the working tree's templates unless --templates is given
(default fd73c53: the last revision with the emitter the relational IR replaced), or --own-templates:
each side its own revision's library, for a change of the templates' text that must ask the same
questions (copies joined into a template of several envs).
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

from code_before import tree_before

ROOT = Path(__file__).resolve().parents[1]
SIDES = ("before", "now")


def runs(horizon: int) -> list[tuple[str, list[str]]]:
    return [("seed 42", ["--seed", "42"]),
            (f"seed 7, horizon {horizon}", ["--seed", "7", "--horizon", str(horizon), "--adversarial-ratio", "0.3"]),
            ("seed 7", ["--seed", "7"]),
            (f"seed 42, horizon {horizon}", ["--seed", "42", "--horizon", str(horizon)])]


def generate(path: Path | None, traces: list[str], options: list[str], out: Path) -> float:
    """`qtc generate` with qtc from `path` first on PYTHONPATH (None: the working tree). It runs in the
    output's folder: `python -m` puts the current folder first on sys.path, and in the repository's root
    that is the working tree's `qtc` package, whatever PYTHONPATH says."""
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(path) if path else None,
                                                                    os.environ.get("PYTHONPATH")]))}
    subprocess.run([sys.executable, "-m", "qtc.cli", "generate", "--traces", *traces, "--out", str(out), "--quiet",
                    *options], check=True, env=env, cwd=out.parent)
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
    parser.add_argument("--total", type=int)
    parser.add_argument("--horizon", type=int, default=60)
    parser.add_argument("--before", default="fd73c53")
    parser.add_argument("--own-templates", action="store_true",
                        help="each side reads the standard library of its own revision")
    args = parser.parse_args()
    args.traces = [str(Path(t).resolve()) for t in args.traces]
    args.templates = [str(Path(t).resolve()) for t in args.templates]
    paths = {"before": tree_before(args.before), "now": None}
    cap = ["--max-per-template", str(args.max_per_template)] if args.max_per_template else []
    cap += ["--total", str(args.total)] if args.total else []
    own = {"before": [str(paths["before"] / "qtc" / "templates")], "now": [str(ROOT / "templates")]}
    extra = {side: ["--templates", *(own[side] if args.own_templates else args.templates or own["now"])] + cap
             for side in SIDES}
    failed = False
    with tempfile.TemporaryDirectory() as directory:
        for label, options in runs(args.horizon):
            outs, seconds = {}, {}
            for side in SIDES:
                outs[side] = Path(directory) / f"{side}-{label.replace(' ', '').replace(',', '-')}.jsonl"
                seconds[side] = generate(paths[side], args.traces, options + extra[side], outs[side])
            qa = {s: digest(outs[s]) for s in SIDES}
            summary = {s: digest(outs[s].with_suffix(".summary.json")) for s in SIDES}
            same = qa["before"] == qa["now"] and summary["before"] == summary["now"]
            failed |= not same
            print(f"{label:<22} qa before {qa['before']} now {qa['now']}  summary before {summary['before']} "
                  f"now {summary['now']}  {'IDENTICAL' if same else 'DIFFERENT'}  "
                  f"generate {seconds['before']:.1f}s before / {seconds['now']:.1f}s now", flush=True)
            if not same:
                before, now = by_template(outs["before"]), by_template(outs["now"])
                differing = sorted(t for t in set(before) | set(now) if before.get(t) != now.get(t))
                print(f"  templates that differ (questions before/now): "
                      f"{', '.join(f'{t} ({len(before.get(t, []))}/{len(now.get(t, []))})' for t in differing) or '(summary only)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
