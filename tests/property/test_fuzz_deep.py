"""The deep fuzz run (docs/testing.md, The deep fuzz run), not part of the default suite: QTC_FUZZ=deep.

Template mutants of the standard library (one template at a time, `fuzzing.mutated`) go through `qtc
compile` and, when they compile, `qtc generate` over a store of drawn episodes of both games; corrupted
traces of both games (`fuzzing.corrupted`) go through `qtc load` and, when they load, `qtc generate`
with the whole library. Each command runs through the command line's code path in this process, and
one input in QTC_FUZZ_SUBPROCESS_EVERY again as the `qtc` a user runs, to show its exit code and stderr.

A finding is a traceback; a refusal without its place (a template's file:line:column, with that line of
the file quoted below it; a trace's file:line); a template file that compiles though the grammar
refuses it; a template that compiles and then fails to generate; a trace that loads and then fails to
generate. Each kind is counted once per place, its first input kept in QTC_FUZZ_KEEP; the run fails if
there is any, and prints (and writes to QTC_FUZZ_REPORT, as JSON) its figures.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.fuzzing import (BLOCKS, Outcome, corrupted, grammar_refuses, message_shape, mutated, run_in_process,
                             run_subprocess, unplaced_errors)
from support.strategies import seeded_episode, write_episodes

from qtc.runtime.trace.format import read_header

pytestmark = pytest.mark.skipif(os.environ.get("QTC_FUZZ") != "deep",
                                reason="the deep fuzz run: set QTC_FUZZ=deep (docs/testing.md)")

MUTANTS = int(os.environ.get("QTC_FUZZ_MUTANTS", "10000"))
TRACES = int(os.environ.get("QTC_FUZZ_TRACES", "2000"))
SEED = int(os.environ.get("QTC_FUZZ_SEED") or random.randrange(2**32))
SUBPROCESS_EVERY = int(os.environ.get("QTC_FUZZ_SUBPROCESS_EVERY", "100"))
EPISODE_STEPS = 20
BASE_SEEDS = range(3)  # drawn episodes of each game in the store mutants run on
BATCH_SEEDS = range(12)  # drawn episodes of each game that are corrupted: as many episode ids
BATCH = 2 * len(BATCH_SEEDS)  # traces that loaded, generated from at once


@dataclass
class Findings:
    """What a run met: inputs by outcome, refusals by shape, and each kind of finding with its first input."""
    name: str
    keep: Path
    outcomes: Counter = field(default_factory=Counter)
    refusals: Counter = field(default_factory=Counter)
    found: dict[str, dict] = field(default_factory=dict)
    start: float = field(default_factory=time.perf_counter)

    def finding(self, kind: str, place: str, number: int, text: bytes | str, detail: str) -> None:
        key = f"{kind}: {place}"
        if key not in self.found:
            kept = self.keep / f"{self.name}-{number}"
            kept.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
            self.found[key] = {"count": 0, "first": str(kept), "detail": detail[-2000:]}
        self.found[key]["count"] += 1

    def report(self, inputs: int) -> dict:
        figures = {"run": self.name, "seed": SEED, "inputs": inputs, "seconds": round(time.perf_counter() - self.start),
                   "outcomes": dict(self.outcomes), "distinct_refusals": len(self.refusals),
                   "findings": self.found}
        print(json.dumps(figures, indent=1))
        if os.environ.get("QTC_FUZZ_REPORT"):
            with open(os.environ["QTC_FUZZ_REPORT"], "a", encoding="utf-8") as out:
                out.write(json.dumps(figures | {"refusals": self.refusals.most_common()}) + "\n")
        return figures


def _keep_folder() -> Path:
    folder = Path(os.environ.get("QTC_FUZZ_KEEP") or tempfile.gettempdir()) / f"qtc-fuzz-{SEED}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _run(argv: list[str], number: int, again: list[str] | None = None) -> tuple[Outcome, Outcome | None]:
    """The command in process, and for one input in SUBPROCESS_EVERY as a process too (`again`: its
    arguments there, where the first run leaves something behind)."""
    outcome = run_in_process(argv)
    sampled = run_subprocess(again or argv) if number % SUBPROCESS_EVERY == 0 else None
    return outcome, sampled


def _check_sample(findings: Findings, outcome: Outcome, sampled: Outcome | None, number: int, text, argv) -> None:
    if sampled is None:
        return
    findings.outcomes["subprocess samples"] += 1
    if sampled.traceback or sampled.code != outcome.code:
        findings.finding("subprocess", sampled.traceback or f"exit {sampled.code}, in process {outcome.code}",
                         number, text, " ".join(argv) + "\n" + sampled.stderr)


def _generate(findings: Findings, kind: str, argv: list[str], number: int, text, path) -> None:
    """`qtc generate ARGV`, which must succeed: its input compiled or loaded."""
    outcome, sampled = _run(argv, number)
    _check_sample(findings, outcome, sampled, number, text, argv)
    if outcome.traceback:
        findings.finding("traceback in generate", outcome.traceback, number, text, outcome.stderr)
    elif outcome.code != 0:
        findings.finding(kind, message_shape(outcome.stderr.splitlines()[-1], path), number, text, outcome.stderr)
    else:
        findings.outcomes["generated"] += 1


def test_template_mutants_get_positioned_errors_or_generate(tmp_path):
    findings = Findings("mutant", _keep_folder())
    chance = random.Random(SEED)
    traces = write_episodes([seeded_episode(env, seed, EPISODE_STEPS) for env in ("jericho", "crafter")
                             for seed in BASE_SEEDS], tmp_path / "traces")
    store = tmp_path / "store.duckdb"
    assert run_in_process(["load", *map(str, traces), "--db", str(store)]).code == 0
    for number in range(MUTANTS):
        if number % 500 == 0:
            print(f"mutant {number}: {dict(findings.outcomes)}", file=sys.stderr, flush=True)
        env, block = chance.choice(BLOCKS)
        text = mutated(block, chance)
        path = tmp_path / env / "fuzzed.qtpl"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        argv = ["compile", str(path)]
        outcome, sampled = _run(argv, number)
        _check_sample(findings, outcome, sampled, number, text, argv)
        if outcome.traceback:
            findings.finding("traceback in compile", outcome.traceback, number, text, outcome.stderr)
            continue
        errors = [line for line in outcome.stderr.splitlines() if ": error: " in line]
        for line in errors:
            findings.refusals[message_shape(line.split(": error: ", 1)[1], path)] += 1
        unplaced = unplaced_errors(outcome.stderr, text) if outcome.code == 1 else []
        if unplaced:
            findings.finding("refusal without its place", message_shape(unplaced[0], path), number, text,
                             outcome.stderr)
        if outcome.code != 0:
            findings.outcomes[f"compile exit {outcome.code}"] += 1
            continue
        refused = grammar_refuses(text)
        if refused:
            findings.finding("compiled, though the grammar refuses it", message_shape(refused, path), number, text,
                             refused)
            continue
        findings.outcomes["compiled"] += 1
        horizon = ["--horizon", str(chance.randint(1, EPISODE_STEPS + 2))] if chance.random() < 0.25 else []
        _generate(findings, "compiled, then generate failed",
                  ["generate", "--traces", str(store), "--templates", str(path), "--jobs", "1", "--quiet",
                   "--max-per-template", "3", "--out", str(tmp_path / "qa.jsonl"), "--force", *horizon],
                  number, text, path)
    figures = findings.report(MUTANTS)
    assert not figures["findings"], f"{len(figures['findings'])} kinds of finding (above)"


_PLACED = re.compile(r"^qtc load: error: (?P<path>.+?):(?P<line>\d+)[:,]? ")


@dataclass
class Loaded:
    """A corrupted trace that loaded, waiting for `qtc generate`."""
    number: int
    path: Path
    store: Path  # the store it loaded into alone
    data: bytes


def _generate_batch(findings: Findings, batch: list[Loaded], folder: Path, number: int) -> None:
    """`qtc generate` over the traces that loaded, in one store (their episodes differ), which must
    succeed; if it fails, over each trace's own store, to find the one at fault."""
    store = folder / "batch.duckdb"
    loaded = run_in_process(["load", *(str(item.path) for item in batch), "--db", str(store)])
    if loaded.code != 0 or loaded.traceback:
        findings.finding("loaded alone, refused together", loaded.traceback or message_shape(loaded.stderr, folder),
                         batch[0].number, batch[0].data, loaded.stderr)
        return
    argv = ["generate", "--traces", str(store), "--jobs", "1", "--quiet", "--max-per-template", "2",
            "--out", str(folder / "qa.jsonl"), "--force"]
    together, sampled = _run(argv, number, [*argv[:-2], str(folder / "sampled.jsonl")])
    _check_sample(findings, together, sampled, batch[0].number, batch[0].data, argv)
    if together.code == 0 and not together.traceback:
        findings.outcomes["generated"] += len(batch)
        return
    alone = 0
    for item in batch:
        outcome = run_in_process([*argv[:3], str(item.store), *argv[4:]])
        if outcome.traceback:
            findings.finding("traceback in generate", outcome.traceback, item.number, item.data, outcome.stderr)
        elif outcome.code != 0:
            findings.finding("loaded, then generate failed", message_shape(outcome.stderr.splitlines()[-1], item.path),
                             item.number, item.data, outcome.stderr)
        else:
            findings.outcomes["generated"] += 1
            alone += 1
    if alone == len(batch):
        findings.finding("generates alone, fails together", together.traceback or message_shape(together.stderr, folder),
                         batch[0].number, batch[0].data, together.stderr)


def test_corrupted_traces_are_refused_with_their_place_or_load_and_generate(tmp_path):
    """Each corrupted trace through `qtc load` alone; those that load then through `qtc generate` with
    the whole library, BATCH of them at a time (one statement per template asks all their episodes)."""
    findings = Findings("trace", _keep_folder())
    chance = random.Random(SEED)
    bases = [path.read_bytes() for path in write_episodes(
        [seeded_episode(env, seed, EPISODE_STEPS) for env in ("jericho", "crafter") for seed in BATCH_SEEDS],
        tmp_path / "base")]
    batch: dict[str, Loaded] = {}
    for number in range(TRACES):
        if number % 100 == 0:
            print(f"trace {number}: {dict(findings.outcomes)}", file=sys.stderr, flush=True)
        kind, data = corrupted(chance.choice(bases), chance)
        folder = tmp_path / str(number)
        folder.mkdir()
        path = folder / "fuzzed.jsonl"
        path.write_bytes(data)
        store = folder / "store.duckdb"
        argv = ["load", str(path), "--db", str(store)]
        outcome, sampled = _run(argv, number, ["load", str(path), "--db", str(folder / "sample.duckdb")])
        _check_sample(findings, outcome, sampled, number, data, argv)
        findings.outcomes[f"{kind}: " + ("traceback" if outcome.traceback else f"exit {outcome.code}")] += 1
        if outcome.traceback:
            findings.finding("traceback in load", outcome.traceback, number, data, outcome.stderr)
        elif outcome.code != 0:
            message = outcome.stderr.strip().splitlines()[-1] if outcome.stderr.strip() else ""
            findings.refusals[message_shape(message, path)] += 1
            match = _PLACED.match(message)
            if not match or match["path"] != str(path):
                findings.finding("refusal without file and line", message_shape(message, path), number, data, message)
        else:
            episode = read_header(path)["episode_id"]
            if episode in batch:
                _flush(findings, batch, tmp_path, number)
            batch[episode] = Loaded(number, path, store, data)
            if len(batch) == BATCH:
                _flush(findings, batch, tmp_path, number)
            continue
        shutil.rmtree(folder)
    _flush(findings, batch, tmp_path, TRACES)
    figures = findings.report(TRACES)
    assert not figures["findings"], f"{len(figures['findings'])} kinds of finding (above)"


def _flush(findings: Findings, batch: dict[str, Loaded], tmp_path: Path, number: int) -> None:
    if batch:
        folder = tmp_path / f"batch-{number}"
        folder.mkdir()
        _generate_batch(findings, list(batch.values()), folder, number)
        shutil.rmtree(folder)
        for item in batch.values():
            shutil.rmtree(item.path.parent)
    batch.clear()
