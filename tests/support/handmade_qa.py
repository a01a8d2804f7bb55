"""Question records written by hand in the QA format (docs/qa-format.md), for the evaluation tests."""

from __future__ import annotations

import json
from pathlib import Path

from qtc.runtime.qa.format import NOT_ANSWERABLE
from qtc.runtime.qa.questions import Question


def question(id: str, question: str = "", answer: str = "yes", answer_type: str = "yesno", *,
             episode_id: str = "e1", env: str = "jericho", game: str = "zork1", category: str = "single_hop",
             template_id: str = "jericho.test", accepted: list[str] | None = None, evidence: list[int] | None = None,
             horizon: int | None = None, bindings: dict[str, str] | None = None) -> dict:
    """One question record; an answer of `not answerable` makes it adversarial (with no evidence)."""
    adversarial = answer == NOT_ANSWERABLE
    return {"id": id, "episode_id": episode_id, "env": env, "game": game, "template_id": template_id,
            "category": category, "difficulty": "easy", "answer_type": answer_type,
            "question": question or f"Question {id}?", "answer": answer,
            "accepted_answers": accepted or [answer], "adversarial": adversarial, "bindings": bindings or {},
            "evidence": [] if adversarial else (evidence if evidence is not None else [1]),
            "horizon": horizon, "seed": 0, "template_hash": "0123456789abcdef", "options": []}


def as_question(record: dict) -> Question:
    return Question(**record)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
