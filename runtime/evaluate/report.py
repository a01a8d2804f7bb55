"""A scoring report: per-question scores, Accuracy and F1 overall and per group, bootstrap intervals.

Accuracy is the mean score. F1 takes `not answerable` as the negative class: recall is the mean score
over questions whose reference is answerable, precision the mean score over questions whose prediction
is not `not answerable` (a question with no answer counts there, scoring 0), F1 their harmonic mean.
Precision with no such prediction is 0; recall, and so F1, with no answerable reference is undefined
(null). 95% intervals are percentile bootstraps over the group's questions, from a fixed seed.

Ordered answers (answer type `sequence`, answerable) also get an order credit, the share of the
reference's pairs the prediction has in the right order (scoring.order_credit; 0 with no answer):
reported per group as its mean over those questions, beside their count.

A question whose answer failed (`Answer.failed`: the request, the reply or the memory provider gave no
answer) or that the answers file does not hold was not answered: it scores 0 and counts in Accuracy and
F1 as a wrong answer does, so every run is scored on the same questions, and it is counted apart (failed,
grouped by the kind of error; not asked), with the Accuracy over the answered questions beside.

Evidence recall@k, for answers that carry the steps a memory provider retrieved: per question, the share
of its evidence steps (step 0, the start state, left out) among the first k retrieved; reported per group
as the mean over the questions that have both, with their count and a bootstrap interval.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from qtc.dsl.metadata import CATEGORIES

from qtc.runtime.qa.answers import AnswerSet
from qtc.runtime.qa.questions import Question
from qtc.runtime.trace.format import parse_episode_id
from .scoring import order_credit, says_not_answerable, score_answer

ADVERSARIAL = "adversarial"
UNKNOWN = "unknown"
# Bucket edges (each bucket's largest value) for the numeric groupings; the last bucket is open.
LENGTH_EDGES = (50, 100, 200, 500, 1000, 2000, 5000)
DEPTH_EDGES = (0, 1, 2, 4, 8)
AGE_EDGES = (10, 50, 100, 200, 500, 1000)
RECALL_KS = (1, 5, 10)  # the k of evidence recall@k
WHOLE_EPISODE = "whole episode"  # the horizon group of questions asked on whole episodes


def bucket(value: int | None, edges: tuple[int, ...]) -> str:
    """The bucket of `value` among `edges`: '0', '2', '3-4', '101-200', '1001+'; UNKNOWN for None."""
    if value is None:
        return UNKNOWN
    low = 0
    for high in edges:
        if value <= high:
            return str(high) if low == high else f"{low}-{high}"
        low = high + 1
    return f"{low}+"


def bucket_order(edges: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(bucket(value, edges) for value in (0, *(edge + 1 for edge in edges)))


def _evidence_age(s: "Scored") -> int | None:
    """How many steps before the end of what the model saw the oldest evidence step lies."""
    evidence = s.question.evidence
    return None if s.seen is None or not evidence else s.seen - min(evidence)


def failure_kind(error: str) -> str:
    """The kind of a failed answer's error, its text up to the first colon: 'context too long'."""
    return error.split(":", 1)[0].strip() or "error"


# Each grouping names the group of a scored question.
GROUPINGS = {
    # A false-premise question is reported under `adversarial`, not under its template's category.
    "category": lambda s: ADVERSARIAL if s.question.adversarial else s.question.category,
    "template": lambda s: s.question.template_id,
    "game": lambda s: s.question.game,
    "env": lambda s: s.question.env,
    "answer_type": lambda s: s.question.answer_type,
    "difficulty": lambda s: s.question.difficulty or "none",
    "agent": lambda s: (parse_episode_id(s.question.episode_id, s.question.game) or (UNKNOWN, None))[0],
    "seed": lambda s: str((parse_episode_id(s.question.episode_id, s.question.game) or (None, UNKNOWN))[1]),
    # The steps the model could see: the question's horizon, else the episode's length (qtc score --traces).
    "episode_length": lambda s: bucket(s.seen, LENGTH_EDGES),
    "evidence_depth": lambda s: bucket(len(s.question.evidence), DEPTH_EDGES),
    "evidence_age": lambda s: bucket(_evidence_age(s), AGE_EDGES),
    "horizon": lambda s: WHOLE_EPISODE if s.question.horizon is None else str(s.question.horizon),
}
GROUP_ORDER = {name: i for i, name in enumerate((*CATEGORIES, ADVERSARIAL, *bucket_order(LENGTH_EDGES),
                                                  *bucket_order(DEPTH_EDGES), *bucket_order(AGE_EDGES)))}


def group_key(name: str) -> tuple:
    """Groups in the design's order (categories, buckets), then numbers (horizons, seeds) by value, whole
    episodes, then the rest by name."""
    if name in GROUP_ORDER:
        return GROUP_ORDER[name], 0, ""
    if name.isdigit():
        return len(GROUP_ORDER), int(name), ""
    if name == WHOLE_EPISODE:
        return len(GROUP_ORDER) + 1, 0, ""
    return len(GROUP_ORDER) + 2, 0, name


RESAMPLES_PER_CHUNK_CELLS = 2_000_000  # bound the memory of one bootstrap chunk (resamples x questions)


@dataclass(frozen=True)
class Scored:
    question: Question
    prediction: str | None  # None: the answers file has no answer to it
    score: float
    order: float | None = None  # the order credit of an answerable ordered question, else None
    seen: int | None = None  # the steps the model could see: the horizon, else the episode's length if known
    error: str | None = None  # why its answer failed (Answer.failed), else None
    retrieved: tuple[int, ...] | None = None  # the steps a memory provider retrieved for it, in rank order

    @property
    def refused(self) -> bool:
        return self.prediction is not None and says_not_answerable(self.prediction)

    @property
    def answered(self) -> bool:
        return self.prediction is not None and self.error is None

    def evidence_recall(self, k: int) -> float | None:
        """The share of its evidence steps (the start state left out) among the first k retrieved; None
        without retrieved steps or without such evidence (a false premise)."""
        evidence = {step for step in self.question.evidence if step >= 1}
        if self.retrieved is None or not evidence:
            return None
        return len(evidence & set(self.retrieved[:k])) / len(evidence)


def score_run(questions: list[Question], answers: AnswerSet, lengths: dict[str, int] | None = None) -> list[Scored]:
    """Every question's score; `lengths` (episode id -> steps) gives the steps seen where there is no horizon."""
    lengths = lengths or {}
    scored = []
    for q in questions:
        answer = answers.answers.get(q.id)
        prediction = answer.prediction if answer else None
        answered = answer is not None and not answer.failed
        order = None
        if q.answer_type == "sequence" and not q.adversarial:
            order = order_credit(q.answer, prediction) if answered else 0.0
        seen = q.horizon if q.horizon is not None else lengths.get(q.episode_id)
        retrieved = None if answer is None or answer.retrieved_steps is None else tuple(answer.retrieved_steps)
        scored.append(Scored(q, prediction, score_answer(q, prediction) if answered else 0.0, order, seen,
                             answer.error if answer is not None and answer.failed else None, retrieved))
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


def _arrays(scored: list[Scored]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, answerable, attempted) of the questions, what _metrics reads."""
    return (np.array([s.score for s in scored]),
            np.array([not s.question.adversarial for s in scored], dtype=float),
            np.array([not s.refused for s in scored], dtype=float))


def _bootstrap(count: int, resamples: int, seed: int, level: float, statistic) -> dict[str, list | None]:
    """Percentile intervals of `statistic(index)` (a dict of metrics along the last axis) over
    `resamples` resamples of `count` questions with replacement, drawn in chunks from `seed`."""
    rng = np.random.default_rng(seed)
    chunk = max(1, RESAMPLES_PER_CHUNK_CELLS // count)
    samples: dict[str, list] = {}
    for done in range(0, resamples, chunk):
        index = rng.integers(0, count, size=(min(chunk, resamples - done), count))
        for name, values in statistic(index).items():
            samples.setdefault(name, []).append(values)
    tail = 100 * (1 - level) / 2
    intervals = {}
    for name, parts in samples.items():
        values = np.concatenate(parts) if parts else np.array([])
        values = values[~np.isnan(values)]
        intervals[f"{name}_ci"] = [_number(v) for v in np.percentile(values, [tail, 100 - tail])] \
            if values.size else None
    return intervals


def recall_name(k: int) -> str:
    return f"evidence_recall@{k}"


def _recall_metrics(scored: list[Scored], resamples: int, seed: int, level: float) -> dict:
    """Evidence recall@k for each k of RECALL_KS over the questions with retrieved steps and evidence:
    their count, each mean and its interval (None without such questions)."""
    recalls = np.array([[s.evidence_recall(k) for k in RECALL_KS] for s in scored
                        if s.evidence_recall(1) is not None], dtype=float).reshape(-1, len(RECALL_KS)).T
    count = recalls.shape[1]
    result = {"n_retrieved": count}
    for k, values in zip(RECALL_KS, recalls):
        result[recall_name(k)] = _number(values.mean()) if count else None
        result[f"{recall_name(k)}_ci"] = None
    if count:
        result |= _bootstrap(count, resamples, seed, level, lambda index: {
            recall_name(k): values[index].mean(-1) for k, values in zip(RECALL_KS, recalls)})
    return result


def group_metrics(scored: list[Scored], resamples: int, seed: int, level: float) -> dict:
    arrays = _arrays(scored)
    point = _metrics(*arrays)
    orders = [s.order for s in scored if s.order is not None]
    result = {"n": len(scored), **{name: _number(value) for name, value in point.items()},
              "n_ordered": len(orders), "order_credit": _number(np.mean(orders)) if orders else None}
    def resampled(index: np.ndarray) -> dict[str, np.ndarray]:
        metrics = _metrics(*(a[index] for a in arrays))
        return {"accuracy": metrics["accuracy"], "f1": metrics["f1"]}

    result |= _bootstrap(len(scored), resamples, seed, level, resampled)
    return result | _recall_metrics(scored, resamples, seed, level)


def paired_difference(first: list[Scored], second: list[Scored], resamples: int, seed: int, level: float) -> dict:
    """The second run's Accuracy and F1 minus the first's on the same questions (in the same order),
    with paired bootstrap intervals: each resample draws the same questions for both runs."""
    a, b = _arrays(first), _arrays(second)

    def difference(index=None) -> dict[str, np.ndarray]:
        pick = (lambda arrays: arrays) if index is None else (lambda arrays: [x[index] for x in arrays])
        ma, mb = _metrics(*pick(a)), _metrics(*pick(b))
        return {name: mb[name] - ma[name] for name in ("accuracy", "f1")}

    point = difference()
    return ({"n": len(first), **{name: _number(value) for name, value in point.items()}}
            | _bootstrap(len(first), resamples, seed, level, difference))


def percent_cell(metrics: dict, name: str, signed: bool = False) -> str:
    """A metric of a group as a percentage with its interval, `58.3 [40.0, 70.0]` (`-` if undefined);
    `signed` writes a difference's signs, `-4.1 [-9.0, +0.8]`."""
    value, interval = metrics[name], metrics[f"{name}_ci"]
    if value is None:
        return "-"
    form = "+.1f" if signed else ".1f"
    text = f"{100 * value:{form}}"
    return f"{text} [{100 * interval[0]:{form}}, {100 * interval[1]:{form}}]" if interval else text


def failures_line(report: dict) -> str:
    """The answers that failed, by kind, and the questions not asked, in words ('' when there are none):
    '25 of 30 asked failed (context too long 20, no answer in the reply 5); ...'."""
    parts = []
    if report["failed"]:
        asked = report["answered"] + report["failed"]
        kinds = ", ".join(f"{kind} {count}" for kind, count in report["failures"].items())
        parts.append(f"{report['failed']} of {asked} asked failed ({kinds})")
    if report["not_asked"]:
        parts.append(f"{report['not_asked']} not asked (not in the answers file)")
    if not parts:
        return ""
    over = report["accuracy_answered"]
    answered = (f"Accuracy over the {report['answered']} answered: {100 * over:.1f}" if over is not None
                else "none was answered")
    return "; ".join(parts) + f"; they score 0 in Accuracy and F1. {answered}"


def report_rows(report: dict) -> list[tuple[str, str, dict]]:
    """(grouping, group, metrics) of a report's rows: overall first, then each grouping's groups."""
    return [("overall", "overall", report["overall"])] + [
        (grouping, name, metrics) for grouping, groups in report["by"].items() for name, metrics in groups.items()]


def seed_spread(scored: list[Scored]) -> dict | None:
    """The Accuracy of each episode seed's questions and their spread (mean, sample standard deviation,
    min, max), as EMemBench reports runs over seeds; None with fewer than two seeds known."""
    by_seed: dict[int, list[float]] = {}
    for s in scored:
        parsed = parse_episode_id(s.question.episode_id, s.question.game)
        if parsed is not None:
            by_seed.setdefault(parsed[1], []).append(s.score)
    if len(by_seed) < 2:
        return None
    accuracies = np.array([np.mean(by_seed[key]) for key in sorted(by_seed)])
    return {"n": len(by_seed), "accuracy_mean": _number(accuracies.mean()),
            "accuracy_std": _number(accuracies.std(ddof=1)), "accuracy_min": _number(accuracies.min()),
            "accuracy_max": _number(accuracies.max())}


def build_report(scored: list[Scored], by: list[str], *, resamples: int = 1000, seed: int = 0,
                 level: float = 0.95) -> dict:
    """Metrics overall and per group of each grouping in `by`, and every question's score."""
    def metrics(group: list[Scored]) -> dict:
        return group_metrics(group, resamples, seed, level)

    groups: dict[str, dict] = {}
    for grouping in by:
        members: dict[str, list[Scored]] = {}
        for s in scored:
            members.setdefault(GROUPINGS[grouping](s), []).append(s)
        groups[grouping] = {name: metrics(members[name]) for name in sorted(members, key=group_key)}
    answered = [s.score for s in scored if s.answered]
    failures = Counter(failure_kind(s.error) for s in scored if s.error is not None)
    return {
        "questions": len(scored),
        "answered": len(answered),
        "failed": sum(failures.values()),
        "not_asked": sum(s.prediction is None for s in scored),
        "failures": dict(failures.most_common()),
        "accuracy_answered": _number(np.mean(answered)) if answered else None,
        "bootstrap": {"resamples": resamples, "seed": seed, "level": level},
        "overall": metrics(scored),
        "by": groups,
        "seeds": seed_spread(scored),
        "per_question": [{"id": s.question.id, "template_id": s.question.template_id,
                          "category": GROUPINGS["category"](s), "answer_type": s.question.answer_type,
                          "answer": s.question.answer, "prediction": s.prediction, "score": round(s.score, 4),
                          "error": s.error, "retrieved_steps": None if s.retrieved is None else list(s.retrieved),
                          **({"order_credit": round(s.order, 4)} if s.order is not None else {})}
                         for s in scored],
    }


def build_comparison(first: list[Scored], second: list[Scored], by: list[str], *, resamples: int = 1000,
                     seed: int = 0, level: float = 0.95) -> dict:
    """The paired differences (second minus first) overall and per group of each grouping in `by`;
    both runs score the same questions, in the same order."""
    def difference(members: list[int]) -> dict:
        return paired_difference([first[i] for i in members], [second[i] for i in members], resamples, seed, level)

    groups: dict[str, dict] = {}
    for grouping in by:
        members: dict[str, list[int]] = {}
        for i, s in enumerate(first):
            members.setdefault(GROUPINGS[grouping](s), []).append(i)
        groups[grouping] = {name: difference(members[name]) for name in sorted(members, key=group_key)}
    return {"questions": len(first), "bootstrap": {"resamples": resamples, "seed": seed, "level": level,
                                                   "paired": True},
            "overall": difference(list(range(len(first)))), "by": groups}
