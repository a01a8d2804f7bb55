"""`qtc generate` side by side with EMemBench's own hand-written generators, on the same traces at the
same question count (issue 34):

    python bench/bench_emembench.py --emembench PATH [--traces DIR...] [--rounds 3] [--venv DIR]

PATH is a checkout of EMemBench (InternLM/EMemBench): `git clone` it anywhere and pass its folder.
Without one the bench says how to get one and skips. Its generators run from that checkout in a virtual
environment of their own (--venv, default PATH/.venv-qtc-bench, made on first use with the packages
they import, numpy and openai, pinned as EMemBench's requirements.txt pins them), each episode in a process of its
own as EMemBench runs them (`visual_game/generate_crafter_qa.py --log-file --map-file`,
`text_game/generate_jericho_qa.py --input-dir --default-folder`), on the traces written in EMemBench's
log formats by qtc's converter (runtime/record/emembench.py, docs/trace-format.md "EMemBench logs").
They run with PYTHONHASHSEED=0 (their output depends on set order) and an empty OPENAI_API_KEY. The
Jericho generator then paraphrases nothing; the Crafter one has no setting to skip its paraphrase of
every question (it would fail without a key), so it runs through PARAPHRASE_NOTHING, which makes its
paraphrase the question as it is before the generator imports it: both sides do the same work (qtc
paraphrases nothing by default) and nothing leaves the machine.

Per set of traces (one game each: default the 30 Crafter episodes and the Jericho walkthroughs that
bench/bench_compiler.py records), each round runs EMemBench's generator over every episode, counts its
questions, then `qtc generate --total <that count>` over the same traces in a fresh process (its
compiled library cached, as after any first run); the two alternate round by round. Both keep the
bytecode of the modules they import, as installed packages do (bench_compiler.bytecode_kept). Reported: CPU
seconds (user + system of the child processes) of each, medians of the rounds, their ratio, and per
episode. Reports only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_compiler import ROOT, bytecode_kept, record

from qtc.runtime.record.emembench import write_emembench  # noqa: E402
from qtc.runtime.record.emembench_jericho import LOG_SUFFIX as JERICHO_LOG_SUFFIX  # noqa: E402
from qtc.runtime.trace.format import read_header  # noqa: E402
from qtc.runtime.trace.store import trace_files  # noqa: E402

# What the generators import (the Jericho one imports openai before it looks at the key), as EMemBench's
# requirements.txt pins them.
PACKAGES = ("numpy==1.26.4", "openai==1.106.1")
# Their output depends on set order; the Jericho generator paraphrases only with a key (and would use a
# remote endpoint of its own with none set).
GENERATOR_ENV = {"PYTHONHASHSEED": "0", "OPENAI_API_KEY": ""}
# Runs the script given after it (the Crafter generator, from its folder) with its paraphrase the identity:
# generate_crafter_qa.py imports paraphrase_text from crafter_qa_utils when it starts, so it takes this one.
PARAPHRASE_NOTHING = ("import runpy, sys, crafter_qa_utils; crafter_qa_utils.paraphrase_text = lambda text, rng: text; "
                      "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
HOW_TO_GET = ("no EMemBench checkout: clone https://github.com/InternLM/EMemBench somewhere and pass "
              "--emembench PATH (skipped)")


def has_generators(checkout: Path | None) -> bool:
    return checkout is not None and (checkout / "visual_game" / "generate_crafter_qa.py").exists()


def cpu_seconds(command: list[str], **options) -> float:
    """User + system CPU seconds of `command`, run to its end in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **options)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def generator_python(checkout: Path, venv: Path | None) -> Path:
    """The Python of the generators' virtual environment, made on first use."""
    venv = venv or checkout / ".venv-qtc-bench"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES], check=True)
    return python


def converted(traces: list[Path], folder: Path) -> list[tuple[str, list[str], Path]]:
    """Each trace written as EMemBench logs under `folder`: (game, the generator's arguments, its cwd)."""
    runs = []
    for trace in traces:
        log = write_emembench(trace, folder)
        if read_header(trace)["env"] == "crafter":
            seed = log.parent.parent.name.removeprefix("seed")
            runs.append(("crafter", ["-c", PARAPHRASE_NOTHING, "generate_crafter_qa.py", "--log-file", str(log), "--map-file",
                                     str(log.parent / f"map_seed{seed}.txt")], log.parent))
        else:
            runs.append(("jericho", ["generate_jericho_qa.py", "--input-dir", str(log.parent), "--default-folder",
                                     log.name.removesuffix(JERICHO_LOG_SUFFIX), "--game", log.parent.parent.name],
                         log.parent))
    return runs


def emembench_round(python: Path, checkout: Path, runs: list, out: Path) -> tuple[float, int]:
    """CPU seconds of EMemBench's generator over every episode, and the questions it wrote."""
    seconds, questions = 0.0, 0
    for number, (game, arguments, _) in enumerate(runs):
        folder = checkout / ("visual_game" if game == "crafter" else "text_game")
        target = out / str(number)
        seconds += cpu_seconds([str(python), *arguments, "--output-dir", str(target)], cwd=folder,
                               env={**bytecode_kept(out.parent / "bytecode"), **GENERATOR_ENV})
        questions += sum(1 for path in target.rglob("qa.jsonl") for line in path.open() if line.strip())
    return seconds, questions


def qtc_round(traces: list[Path], questions: int, out: Path) -> tuple[float, int]:
    """CPU seconds of `qtc generate --total questions` over the traces, and the questions it wrote.

    --total alone lifts qtc's default cap of 100 questions a template (a template gets its share of the
    total), and each template draws its candidates for that share, so both write as many questions
    where the traces hold them; both counts are printed."""
    seconds = cpu_seconds([sys.executable, "-m", "qtc.cli", "generate", "--traces", *map(str, traces),
                           "--total", str(questions), "--out", str(out), "--quiet", "--force"], cwd=out.parent,
                          env=bytecode_kept(out.parent / "bytecode"))
    return seconds, sum(1 for line in out.open() if line.strip())


def compare(traces: list[Path], python: Path, checkout: Path, rounds: int, folder: Path) -> tuple[float, float]:
    """CPU seconds of EMemBench's generator and of qtc over the traces, medians of the rounds, printed."""
    runs = converted(traces, folder / "logs")
    times: dict[str, list[float]] = {"emembench": [], "qtc": []}
    counts = {}
    for number in range(rounds):
        seconds, counts["emembench"] = emembench_round(python, checkout, runs, folder / f"emembench{number}")
        times["emembench"].append(seconds)
        seconds, counts["qtc"] = qtc_round(traces, counts["emembench"], folder / f"qtc{number}.jsonl")
        times["qtc"].append(seconds)
    ours, theirs = statistics.median(times["qtc"]), statistics.median(times["emembench"])
    print(f"{len(runs)} episodes: EMemBench {theirs:.2f} s ({counts['emembench']} questions), qtc {ours:.2f} s "
          f"({counts['qtc']} questions); qtc/EMemBench {ours / theirs:.2f}; per episode {theirs / len(runs):.3f} s "
          f"vs {ours / len(runs):.3f} s (CPU, medians of {rounds})", flush=True)
    return ours, theirs


def compare_with_emembench(folder: Path, checkout: Path, venv: Path | None, rounds: int) -> list[tuple[str, str]]:
    """The target and the figure for one folder of traces of one game (bench_targets.py)."""
    files = [path.resolve() for path in trace_files([folder])[0]]
    game = read_header(files[0])["env"]
    python = generator_python(checkout.resolve(), venv)
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = compare(files, python, checkout.resolve(), rounds, Path(tmp))
    if len(files) >= 300:
        return [(f"{game}, {len(files)} episodes: at least 2x faster than EMemBench's generator per episode",
                 f"{theirs / ours:.2f}x ({ours / len(files):.3f} s vs {theirs / len(files):.3f} s CPU an episode)")]
    return [(f"{game}, {len(files)} episodes: at least as fast as EMemBench's generator, same question count",
             f"qtc/EMemBench {ours / theirs:.2f} ({ours:.1f} s vs {theirs:.1f} s CPU)")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--emembench", type=Path, help="a checkout of InternLM/EMemBench")
    parser.add_argument("--traces", nargs="*", type=Path, help="folders of traces, one game each")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--venv", type=Path)
    args = parser.parse_args()
    if not has_generators(args.emembench):
        print(HOW_TO_GET)
        return 0
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    for folder in args.traces or record(ROOT / "out" / "bench" / "compiler", 30):
        print(f"{folder}: ", end="")
        compare_with_emembench(folder, args.emembench, args.venv, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
