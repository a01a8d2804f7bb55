"""Memory providers of the tests, named on the command line as `support.memory_providers:Class`."""

from __future__ import annotations

import json

import numpy as np


class Recorder:
    """Writes every call it gets to the JSONL file `log` (reset, each step fed, each question asked with the
    last step fed then) and answers each question with the number of steps it was fed; raises ValueError on
    a question whose text holds `fail_on`, and when fed step `fail_at`."""

    def __init__(self, log: str, fail_on: str = "", fail_at: str = "-1"):
        self.log = log
        self.fail_on = fail_on
        self.fail_at = int(fail_at)

    def _write(self, event: dict) -> None:
        with open(self.log, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(event) + "\n")

    def reset(self, episode: dict) -> None:
        self.episode = episode["episode_id"]
        self.fed: list[int] = []
        self._write({"reset": episode})

    def observe(self, step: dict) -> None:
        if step["step"] == self.fail_at:
            raise ValueError("no room left")
        self.fed.append(step["step"])
        frame = step.get("frame")
        self._write({"episode": self.episode, "step": step["step"], "text": step["text"],
                     "frame": None if frame is None else int(np.asarray(frame, dtype=np.int64).sum())})

    def answer(self, questions: list[dict]) -> list[dict]:
        for q in questions:
            if self.fail_on and self.fail_on in q["question"]:
                raise ValueError(f"cannot answer {q['question']!r}")
        for q in questions:
            self._write({"episode": self.episode, "asked": q["id"], "horizon": q["horizon"], "last_fed": self.fed[-1]})
        return [{"answer": str(len(self.fed)), "steps": [self.fed[-1]]} for _ in questions]


class LacksObserve:
    def reset(self, episode: dict) -> None:
        pass

    def answer(self, questions: list[dict]) -> list[str]:
        return ["" for _ in questions]
