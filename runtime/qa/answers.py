"""Answer records (docs/qa-format.md, "Answer records"): one JSONL line per answered question.

One file holds one run: the answers of one model under one context mode, each question answered at
most once. A failed answer (`Answer.failed`: an error and no prediction) may be followed by a later
answer to the same question, which supersedes it: a rerun of `qtc answer` asks failed questions again.
`qtc answer` appends to it (runtime/qa/appendlog.py), `qtc score` reads it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from qtc.errors import UserError

from .appendlog import read_log
from qtc.runtime.trace.format import _check

ANSWER_SPEC = {
    "id": "str", "model": "str", "context": "str", "prediction": "str", "error": ("null", "str"),
    "request": "str", "batch_size": "int", "usage": {"prompt_tokens": "int", "completion_tokens": "int"},
    "seconds": "float", "context_tokens": ("null", "int"),
    "earlier_requests": ("list", {"request": "str", "prompt_tokens": "int", "completion_tokens": "int"}),
    "retrieved_steps": ("null", ("list", "int")),
}


@dataclass(frozen=True)
class Answer:
    id: str
    model: str
    context: str
    prediction: str
    error: str | None  # why the prediction is empty or was not read from a JSON reply, else None
    request: str  # the request that produced it; the batch_size answers of one request share its usage
    batch_size: int
    usage: dict[str, int]
    seconds: float
    context_tokens: int | None = None  # the estimated tokens of the log it was asked with; None in older files
    # The requests whose reply did not answer it before it was asked alone (a batch it was asked in): their
    # tokens were spent too. Each is {request, prompt_tokens, completion_tokens}; empty in older files.
    earlier_requests: list[dict] = field(default_factory=list)
    # The steps a memory provider retrieved for this question, in its ranking order (evidence recall@k);
    # None where the run had no provider that returns steps, and in older files.
    retrieved_steps: list[int] | None = None

    @property
    def failed(self) -> bool:
        """No answer was had: the request, the reply or the memory provider failed (`error` says why)."""
        return self.error is not None and not self.prediction

    def record(self) -> dict:
        return asdict(self)


@dataclass
class AnswerSet:
    answers: dict[str, Answer] = field(default_factory=dict)  # by question id, in file order
    model: str | None = None
    context: str | None = None
    partial_line: int | None = None  # a half-written last line that was left out (or repaired)
    superseded: list[Answer] = field(default_factory=list)  # failed answers a later answer replaced

    def usage(self) -> tuple[int, int, int]:
        """(requests, prompt tokens, completion tokens), counting each request once, the requests whose
        reply answered nothing (every question of the batch asked again alone) and those of superseded
        answers too."""
        every = [*self.superseded, *self.answers.values()]
        requests = {a.request: a.usage for a in every}
        for answer in every:
            for earlier in answer.earlier_requests:
                requests[earlier["request"]] = {k: earlier[k] for k in ("prompt_tokens", "completion_tokens")}
        return (len(requests), sum(u["prompt_tokens"] for u in requests.values()),
                sum(u["completion_tokens"] for u in requests.values()))


def _check_answer(record: dict, where: str) -> None:
    record.setdefault("context_tokens", None)  # files written before the field existed
    record.setdefault("earlier_requests", [])
    record.setdefault("retrieved_steps", None)
    _check(record, ANSWER_SPEC, where, "")


def read_answers(path: Path, *, repair: bool = False) -> AnswerSet:
    """The answers of `path` (none if it does not exist); `repair` mends a half-written last line once
    every whole line has been read as an answer record."""
    contents = read_log(path, repair=repair, check=_check_answer)
    result = AnswerSet(partial_line=contents.partial_line)
    first_line: dict[str, str] = {}
    for where, record in contents.records:
        answer = Answer(**{f.name: record[f.name] for f in fields(Answer)})
        if result.model is None:
            result.model, result.context = answer.model, answer.context
        elif (answer.model, answer.context) != (result.model, result.context):
            raise UserError(f"{where}: field 'model': an answer of {answer.model} (context {answer.context}) "
                            f"in a file of answers of {result.model} (context {result.context}); "
                            "keep one run per file")
        earlier = result.answers.get(answer.id)
        if earlier is not None and not earlier.failed:
            raise UserError(f"{where}: field 'id': a second answer to question {answer.id!r} "
                            f"(the first is at {first_line[answer.id]})")
        if earlier is not None:
            result.superseded.append(earlier)
        first_line[answer.id] = where
        result.answers[answer.id] = answer
    return result
