"""Reading a QA set (docs/qa-format.md): JSONL or Parquet question records, validated field by field.

`qtc answer`, `qtc score` and `qtc paraphrase` read QA sets here; a malformed record is reported with
its file, line (or row) and field, before any question is asked or scored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from qtc.dsl.metadata import CATEGORIES
from qtc.dsl.types import ANSWER_TYPES
from qtc.errors import UserError

from qtc.runtime.trace.format import _check, _parse_line

from .format import NOT_ANSWERABLE, QUESTION_SPEC


@dataclass(frozen=True)
class Question:
    id: str
    episode_id: str
    env: str
    game: str
    template_id: str
    category: str
    difficulty: str | None
    answer_type: str
    question: str
    answer: str
    accepted_answers: list[str]
    adversarial: bool
    bindings: dict[str, str]
    evidence: list[int]
    horizon: int | None
    seed: int
    template_hash: str
    options: list[str] = field(default_factory=list)  # multiple choice: the options as shown; [] for an open question

    @property
    def references(self) -> list[str]:
        """Every answer that scores as correct, the canonical one first."""
        return [self.answer, *(a for a in self.accepted_answers if a != self.answer)]

    def record(self) -> dict:
        return asdict(self)


def _question(record: dict, where: str) -> Question:
    record.setdefault("options", [])
    _check(record, QUESTION_SPEC, where, "")
    for name, allowed in (("category", CATEGORIES), ("answer_type", tuple(ANSWER_TYPES))):
        if record[name] not in allowed:
            raise UserError(f"{where}: field '{name}': unknown value {record[name]!r} "
                            f"(expected one of {', '.join(allowed)})")
    if record["adversarial"] != (record["answer"] == NOT_ANSWERABLE):
        raise UserError(f"{where}: field 'answer': '{NOT_ANSWERABLE}' is the answer of every adversarial "
                        "question and of nothing else")
    if record["options"] and not record["adversarial"] and record["answer"] not in record["options"]:
        raise UserError(f"{where}: field 'answer': {record['answer']!r} is not among the options")
    return Question(**{f.name: record[f.name] for f in fields(Question)})


def _records(path: Path):
    """(where, record) for every record of a JSONL or Parquet file."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq
        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as error:  # pyarrow raises several types for a bad file
            raise UserError(f"{path}: cannot read Parquet: {error}") from None
        for number, row in enumerate(rows, start=1):
            # Parquet holds the bindings as a map (a list of key-value pairs) or as a struct of every
            # template's parameters (null where a template has no such parameter).
            bindings = row.get("bindings")
            if isinstance(bindings, list):
                row["bindings"] = dict(bindings)
            elif isinstance(bindings, dict):
                row["bindings"] = {k: v for k, v in bindings.items() if v is not None}
            yield f"{path}: row {number}", row
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"{path}: cannot read QA set: {error}") from None
    for number, line in enumerate(text.split("\n"), start=1):  # at "\n" only, as qtc writes JSONL
        if line.strip():
            yield f"{path}:{number}", _parse_line(line, f"{path}:{number}")


def read_questions(path: Path) -> list[Question]:
    """The questions of a QA set, in file order; ids must be unique."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such QA file")
    questions, seen = [], {}
    for where, record in _records(path):
        question = _question(record, where)
        if question.id in seen:
            raise UserError(f"{where}: field 'id': {question.id!r} is also the id at {seen[question.id]}")
        seen[question.id] = where
        questions.append(question)
    if not questions:
        raise UserError(f"{path}: the QA set holds no questions")
    return questions

