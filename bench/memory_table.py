"""README's table of memories, from a finished `qtc run` folder: one row per answers file.

    python bench/memory_table.py out/memories

Scores each `answers-*.jsonl` of the folder with `qtc score --by env,horizon` (the episodes' lengths from
the folder's traces/) and prints a Markdown row per memory: Accuracy with its bootstrap 95% interval, F1,
Accuracy per game and per checkpoint horizon, evidence recall@10 (memories that rank the steps they retrieve), failed
answers, and the median prompt tokens of a request and seconds per question over the answered.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path


def percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def row(run: Path, answers: Path, traces: list[str]) -> str:
    scored = answers.with_suffix(".by-env-horizon.json")
    subprocess.run(["qtc", "score", "--qa", str(run / "qa.jsonl"), "--answers", str(answers), "--by", "env,horizon",
                    "--traces", *traces, "--out", str(scored), "--format", "csv"], check=True, stdout=subprocess.DEVNULL)
    score = json.loads(scored.read_text())
    overall, by = score["overall"], score["by"]
    records = [json.loads(line) for line in answers.open()]
    answered = [r for r in records if not r["error"]]
    seconds = statistics.median(r["seconds"] / (r.get("batch_size") or 1) for r in answered)
    tokens = statistics.median(r["usage"]["prompt_tokens"] for r in answered)
    name, *options = records[0]["context"].removeprefix("memory:").split()
    # none, last:N and full give steps in step order, not ranked: their recall@k says nothing
    ranks = name not in ("none", "full") and not name.startswith("last:")
    cells = [" ".join([f"`{name}`", *(o for o in options if o.startswith("k="))]),
             f"{percent(overall['accuracy'])} [{', '.join(map(percent, overall['accuracy_ci']))}]",
             percent(overall["f1"]),
             *(percent(by["env"].get(env, {}).get("accuracy")) for env in ("crafter", "jericho")),
             *(percent(by["horizon"].get(h, {}).get("accuracy")) for h in ("50", "100", "200")),
             percent(overall.get("evidence_recall@10")) if ranks else "-",
             str(score["failed"]), f"{tokens:,.0f}", f"{seconds:.1f}"]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    run = Path(sys.argv[1])
    traces = [str(p) for p in sorted((run / "traces").iterdir())]
    print("| memory | Accuracy % [95% CI] | F1 % | Crafter | Zork I | h=50 | h=100 | h=200 | recall@10 % | failed "
          "| prompt tokens | s/question |")
    print("|" + "---|" * 12)
    for answers in sorted(run.glob("answers-*.jsonl"), key=lambda p: p.stat().st_mtime):
        print(row(run, answers, traces))


if __name__ == "__main__":
    main()
