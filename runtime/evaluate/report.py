"""A scoring report: per-question scores, Accuracy and F1 overall and per group, bootstrap intervals.

Accuracy is the mean score. F1 takes `not answerable` as the negative class: recall is the mean score
over questions whose reference is answerable, precision the mean score over questions whose prediction
is not `not answerable` (a question with no answer counts there, scoring 0), F1 their harmonic mean.
Precision with no such prediction is 0; recall, and so F1, with no answerable reference is undefined
(null). 95% intervals are percentile bootstraps over the group's questions, from a fixed seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from qtc.dsl.metadata import CATEGORIES

from qtc.runtime.qa.answers import AnswerSet
from qtc.runtime.qa.questions import Question
from .scoring import says_not_answerable, score_answer

ADVERSARIAL = "adversarial"
GROUPINGS = {
    # A false-premise question is reported under `adversarial`, not under its template's category.
    "category": lambda q: ADVERSARIAL if q.adversarial else q.category,
    "template": lambda q: q.template_id,
    "game": lambda q: q.game,
    "env": lambda q: q.env,
    "answer_type": lambda q: q.answer_type,
    "difficulty": lambda q: q.difficulty or "none",
}
GROUP_ORDER = {name: i for i, name in enumerate((*CATEGORIES, ADVERSARIAL))}
RESAMPLES_PER_CHUNK_CELLS = 2_000_000  # bound the memory of one bootstrap chunk (resamples x questions)


@dataclass(frozen=True)
class Scored:
    question: Question
    prediction: str | None  # None: the answers file has no answer to it
    score: float

    @property
    def refused(self) -> bool:
        return self.prediction is not None and says_not_answerable(self.prediction)


def score_run(questions: list[Question], answers: AnswerSet) -> list[Scored]:
    scored = []
    for q in questions:
        answer = answers.answers.get(q.id)
        prediction = answer.prediction if answer else None
        scored.append(Scored(q, prediction, score_answer(q, prediction) if answer else 0.0))
    return scored


def _metrics(scores: np.ndarray, answerable: np.ndarray, attempted: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracy, precision, recall and F1 along the last axis (NaN where undefined)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = (scores * answerable).sum(-1) / answerable.sum(-1)
        attempts = attempted.sum(-1)
        precision = np.where(attempts > 0, (scores * attempted).sum(-1) / np.maximum(attempts, 1), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
        f1 = np.where(np.isnan(recall), np.nan, f1)
    return {"accuracy": scores.mean(-1), "precision": precision, "recall": recall, "f1": f1}


def _number(value) -> float | None:
    return None if value is None or np.isnan(value) else round(float(value), 4)


def group_metrics(scored: list[Scored], resamples: int, seed: int, level: float) -> dict:
    scores = np.array([s.score for s in scored])
    answerable = np.array([not s.question.adversarial for s in scored], dtype=float)
    attempted = np.array([not s.refused for s in scored], dtype=float)
    point = _metrics(scores, answerable, attempted)
    result = {"n": len(scored), **{name: _number(value) for name, value in point.items()}}
    rng = np.random.default_rng(seed)
    chunk = max(1, RESAMPLES_PER_CHUNK_CELLS // len(scored))
    samples = {"accuracy": [], "f1": []}
    for done in range(0, resamples, chunk):
        index = rng.integers(0, len(scored), size=(min(chunk, resamples - done), len(scored)))
        resampled = _metrics(scores[index], answerable[index], attempted[index])
        for name in samples:
            samples[name].append(resampled[name])
    tail = 100 * (1 - level) / 2
    for name, parts in samples.items():
        values = np.concatenate(parts) if parts else np.array([])
        values = values[~np.isnan(values)]
        result[f"{name}_ci"] = [_number(v) for v in np.percentile(values, [tail, 100 - tail])] \
            if values.size else None
    return result


def _group_key(name: str) -> tuple:
    return GROUP_ORDER.get(name, len(GROUP_ORDER)), name


def build_report(scored: list[Scored], by: list[str], *, resamples: int = 1000, seed: int = 0,
                 level: float = 0.95) -> dict:
    """Metrics overall and per group of each grouping in `by`, and every question's score."""
    def metrics(group: list[Scored]) -> dict:
        return group_metrics(group, resamples, seed, level)

    groups: dict[str, dict] = {}
    for grouping in by:
        members: dict[str, list[Scored]] = {}
        for s in scored:
            members.setdefault(GROUPINGS[grouping](s.question), []).append(s)
        groups[grouping] = {name: metrics(members[name]) for name in sorted(members, key=_group_key)}
    return {
        "questions": len(scored),
        "answered": sum(s.prediction is not None for s in scored),
        "bootstrap": {"resamples": resamples, "seed": seed, "level": level},
        "overall": metrics(scored),
        "by": groups,
        "per_question": [{"id": s.question.id, "template_id": s.question.template_id,
                          "category": GROUPINGS["category"](s.question), "answer_type": s.question.answer_type,
                          "answer": s.question.answer, "prediction": s.prediction, "score": round(s.score, 4)}
                         for s in scored],
    }
