"""Ingest and answer throughput of the bm25 and embed memory providers at 1,000 and 10,000 steps.

    python bench/bench_memory.py [--sizes 1000 10000] [--record 500] [--questions 50] [--k 10]

Records one scripted Crafter episode of --record steps and renders its steps as a provider is fed them
(runtime/memory/feed.py); an episode of N steps is those texts repeated, each numbered anew ("Step 1234"),
so every text is distinct. For each size and provider it times, on one provider:
- ingest: `observe` of every step, then building the index (bm25: bm25s's index; embed: every step's
  embedding requested, 64 texts a request, from the tests' stub server on 127.0.0.1, and kept in a new cache);
- answer: `retrieve` for --questions questions ("Which action did you take at step t?" for steps spread over
  the episode), the top --k steps each, as the driver asks them at the last checkpoint. The chat model's
  answer is not timed: it is the same request whichever provider chose the steps.
- embed again with the cache filled: ingest sends nothing (a rerun, another QA set over the same traces).
Wall-clock times on a shared machine; the stub's embeddings are hashed words, so embed's figures measure
qtc's side (HTTP, JSON, the cache, the cosine ranking), not a real embedding model.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the stub server

from support.openai_stub_server import ChatCompletionServer, Reply  # noqa: E402

from qtc.cli import main  # noqa: E402
from qtc.runtime.episode_rows import EpisodeRows  # noqa: E402
from qtc.runtime.memory.builtin import BM25Provider  # noqa: E402
from qtc.runtime.memory.embed import EmbedProvider  # noqa: E402
from qtc.runtime.memory.feed import EpisodeFeed  # noqa: E402
from qtc.runtime.trace.store import open_store  # noqa: E402

EPISODE = "crafter-scripted-s0"


def recorded_texts(folder: Path, steps: int) -> list[str]:
    """The texts of a recorded episode's steps 1..steps, as a provider is fed them."""
    assert main(["play", "crafter", "--agent", "scripted", "--max-steps", str(steps), "--out", str(folder),
                 "--quiet"]) == 0
    con = open_store(folder)
    (n_steps,) = con.execute("SELECT n_steps FROM episodes").fetchone()
    feed = EpisodeFeed(con, EpisodeRows(con), EPISODE, "crafter", "crafter")
    return [step["text"] for step in feed.steps(1, n_steps)]


def episode(texts: list[str], size: int) -> list[dict]:
    """Steps 1..size: the recorded texts over and over, each with its own step number."""
    return [{"step": t, "text": re.sub(r"^Step \d+", f"Step {t}", texts[(t - 1) % len(texts)])}
            for t in range(1, size + 1)]


def timed(provider, steps: list[dict], questions: list[dict]) -> tuple[float, float]:
    """Seconds to ingest the steps (observe, then index) and to retrieve for every question."""
    start = time.perf_counter()
    provider.reset({"episode_id": EPISODE, "env": "crafter", "game": "crafter", "legend": ""})
    for step in steps:
        provider.observe(step)
    provider.index()
    ingest = time.perf_counter() - start
    start = time.perf_counter()
    for q in questions:
        provider.retrieve(q)
    return ingest, time.perf_counter() - start


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--record", type=int, default=500)
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    import bm25s  # noqa: F401  (imported before the clock starts, as by any run's first question)

    with tempfile.TemporaryDirectory() as temporary, ChatCompletionServer(lambda body: Reply("{}")) as server:
        texts = recorded_texts(Path(temporary) / "traces", args.record)
        print(f"{len(texts)} recorded step texts, {sum(map(len, texts)) / len(texts):.0f} characters each on average")
        print("| provider | steps | ingest s | steps/s | answer s | questions/s |")
        print("|---|---:|---:|---:|---:|---:|")
        for size in args.sizes:
            steps = episode(texts, size)
            questions = [{"question": f"Which action did you take at step {1 + i * size // args.questions}?",
                          "horizon": size} for i in range(args.questions)]
            cache = Path(temporary) / f"embeddings-{size}.duckdb"
            runs = [("bm25", BM25Provider(k=str(args.k))),
                    ("embed", EmbedProvider("stub-embed", server.url, k=str(args.k), cache=str(cache))),
                    ("embed, cached", EmbedProvider("stub-embed", server.url, k=str(args.k), cache=str(cache)))]
            for name, provider in runs:
                ingest, answer = timed(provider, steps, questions)
                print(f"| {name} | {size:,} | {ingest:.2f} | {size / ingest:,.0f} | {answer:.2f} | "
                      f"{len(questions) / answer:,.1f} |", flush=True)


if __name__ == "__main__":
    main_bench()
