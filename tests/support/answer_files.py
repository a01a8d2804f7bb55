"""Answers files written as `qtc answer` writes them, for the tests that score and show answers: each
question answered right or wrong by a rule, so the expected scores are known."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from qtc.runtime.qa.answers import Answer

WRONG = "a wrong answer"


def write_answers(path: Path, questions: list[dict], model: str, right: Callable[[int, dict], bool],
                  context: str = "full", skip: Callable[[int, dict], bool] = lambda n, q: False) -> Path:
    """An answers file of `model` answering the i-th question right when right(i, question), else with
    a wrong answer, and leaving out those `skip` picks."""
    lines = []
    for n, q in enumerate(questions):
        if skip(n, q):
            continue
        prediction = q["answer"] if right(n, q) else WRONG
        answer = Answer(q["id"], model, context, prediction, None, f"r{n}", 1,
                        {"prompt_tokens": 100, "completion_tokens": 5}, 0.1)
        lines.append(json.dumps(answer.record()))
    path.write_text("\n".join(lines) + "\n")
    return path


def read_qa(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
