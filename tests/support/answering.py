"""Running `qtc answer` in the evaluation tests: questions on the Crafter fixture with their true answers,
a stub policy that answers them, the command line, and what the answers file and the requests hold."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.handmade_qa import as_question, question
from support.openai_stub_server import AnswerPolicy, message_text
from qtc.cli import main
from qtc.runtime.evaluate.ask import shown_question

CRAFTER = "crafter-scripted-s0"


def crafter_questions(crafter_db, count: int = 6, horizon: int | None = None) -> list[dict]:
    """Questions 'Which action did you take at step t?' on the Crafter fixture, with their true answers."""
    rows = crafter_db.execute("SELECT step, action FROM crafter_steps WHERE episode_id = ? ORDER BY step LIMIT ?",
                              [CRAFTER, count]).fetchall()
    return [question(f"q{t}", f"Which action did you take at step {t}?", action, "action", episode_id=CRAFTER,
                     env="crafter", game="crafter", template_id="crafter.action_at", evidence=[t], horizon=horizon)
            for t, action in rows]


def policy_for(records: list[dict], behaviours: dict[str, str] | None = None, **options) -> AnswerPolicy:
    behaviours = behaviours or {}
    return AnswerPolicy({prompt_text(r): (r["answer"], behaviours.get(r["id"], "correct")) for r in records},
                        **options)


def prompt_text(record: dict) -> str:
    """A question record's text as the answering prompt shows it (with its options)."""
    return shown_question(as_question(record))


def answer(qa: Path, traces, url: str, out: Path, *extra: str) -> int:
    return main(["answer", "--qa", str(qa), "--traces", *map(str, traces), "--model", "stub", "--base-url", url,
                 "--out", str(out), "--quiet", *extra])


def read_answers_file(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def asked_in(request: dict) -> list[str]:
    return re.findall(r"^\d+\. \[[^\]]*\] (.*)$", message_text(request["messages"][-1]), re.MULTILINE)
