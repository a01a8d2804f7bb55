"""Samples: a question with the messages `qtc answer` would send for it alone, its answer as the target,
and its question record as metadata, from which a harness's completion is scored by qtc's own reply
reading and typed scorer (the task files that write.py writes call `score_completion`).

The record's shape is one schema (`SAMPLE_FEATURES`) from which the dataset card's features and the
Parquet schema are both made. Bindings, whose names differ from template to template, are a list of
name/value pairs, so that every sample has the same columns.
"""

from __future__ import annotations

from dataclasses import fields

import duckdb

from qtc.runtime.evaluate.ask import parse_reply, plan_batches, prepare_requests
from qtc.runtime.evaluate.context import ContextMode
from qtc.runtime.evaluate.scoring import score_answer
from qtc.runtime.qa.format import QUESTION_SPEC
from qtc.runtime.qa.questions import Question

BINDING = ("struct", (("name", "string"), ("value", "string")))
_TYPES = {"str": "string", "int": "int64", "bool": "bool"}


def _feature(spec) -> str | tuple:
    """A field's feature, from its type in the question record's contract (runtime/qa/format.py)."""
    if isinstance(spec, str):
        return _TYPES[spec]
    kind, sub = spec
    if kind == "null":
        return _feature(sub)  # every feature may be null
    return ("list", BINDING) if kind == "dict" else ("list", _feature(sub))


# (name, feature): a feature is a dtype, ("list", feature) or ("struct", ((name, feature), ...)).
METADATA_FEATURES = (*((name, _feature(spec)) for name, spec in QUESTION_SPEC.items()),
                     ("context", "string"), ("context_tokens", "int64"))
SAMPLE_FEATURES = (
    ("id", "string"),
    ("input", ("list", ("struct", (("role", "string"), ("content", "string"))))),
    ("target", "string"),
    ("metadata", ("struct", METADATA_FEATURES)),
)


def sample_records(con: duckdb.DuckDBPyConnection, questions: list[Question], mode: ContextMode) -> list[dict]:
    """One sample per question, in the QA set's order: each asked alone, as `qtc answer --batch 1` asks it."""
    requests = {r.batch.questions[0].id: r for r in prepare_requests(con, plan_batches(con, questions, mode, 1))}
    samples = []
    for q in questions:
        request = requests[q.id]
        metadata = q.record() | {"bindings": [{"name": n, "value": v} for n, v in sorted(q.bindings.items())],
                                 "context": str(mode), "context_tokens": request.context_tokens}
        samples.append({"id": q.id, "input": request.messages(), "target": q.answer, "metadata": metadata})
    return samples


def question_from_metadata(metadata: dict) -> Question:
    """The question a sample's metadata records."""
    record = {f.name: metadata[f.name] for f in fields(Question)}
    record["bindings"] = {b["name"]: b["value"] for b in record["bindings"]}
    return Question(**record)


def score_completion(metadata: dict, completion: str) -> float:
    """A completion's score on a sample, in [0, 1]: its answer read as `qtc answer` reads a reply to one
    question, scored as `qtc score` scores it."""
    ((prediction, _),) = parse_reply(completion, 1)
    return score_answer(question_from_metadata(metadata), prediction or "")
