"""QA records (docs/qa-format.md): one candidate row of a compiled template to one question record.

The answer is the template's computed answer, rendered by answer_text (rooms by display name); the
question is one of the template's surface variants, chosen by the seed and the question's id. A
record is checked against the format before it is written; one that fails is not a question.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass

import jinja2

from qtc.dsl.compile import CompiledTemplate
from qtc.dsl import types as T
from qtc.dsl.conventions import NONE_OF_THESE
from qtc.dsl.render import RenderError, answer_text, render_question, shown, walk_text
from qtc.runtime.qa.format import NOT_ANSWERABLE

from .sampling import seeded_index, seeded_key


class InvalidRecord(Exception):
    """A record that breaks the QA format: a bug upstream, never written."""


@dataclass(frozen=True)
class EpisodeInfo:
    env: str
    game: str
    n_steps: int


# json.dumps with options builds an encoder on every call; a question id is made for every candidate.
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def canonical_json(value) -> str:
    return _CANONICAL.encode(value)


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def binding_text(value) -> str:
    """A parameter value as canonical text: numbers as digits, booleans as true/false, a list (a walk's
    directions) as the walk's words, text as it is (a name as the trace's identifier)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return walk_text([binding_text(v) for v in value])
    return str(value)


def question_id(template_id: str, episode_id: str, adversarial: bool, bindings: dict[str, str],
                horizon: int | None = None) -> str:
    """The question's id; a question asked at a horizon is another question than on the whole episode
    (its answer may differ), so the horizon is part of it."""
    parts = [template_id, episode_id, adversarial, bindings] + ([horizon] if horizon is not None else [])
    return short_hash(canonical_json(parts))


class RecordMaker:
    """Turns the rows of one compiled template into question records."""

    def __init__(self, compiled: CompiledTemplate, episodes: dict[str, EpisodeInfo], horizon: int | None,
                 seed: int, jinja_env: jinja2.Environment):
        self.compiled = compiled
        self.episodes = episodes
        self.horizon = horizon
        self.seed = seed
        self.jinja_env = jinja_env
        self.template_hash = short_hash(compiled.checked.template.source)
        self.questions = [q.text for q in compiled.checked.template.questions]

    def bindings(self, row: dict) -> dict[str, str]:
        return {name: binding_text(row["p_" + name]) for name in self.compiled.params}

    def row_id(self, row: dict) -> str:
        return question_id(self.compiled.id, row["episode_id"], row["adversarial"], self.bindings(row), self.horizon)

    def _variables(self, row: dict) -> dict:
        """The question's Jinja variables: parameters and scalar lets, rooms by display name, other
        values as render.shown shows them."""
        variables = {"horizon": self.horizon}
        for name in self.compiled.checked.jinja_variables:
            room = name in self.compiled.room_outputs
            column = ("display_" if room else "p_" if name in self.compiled.params else "l_") + name
            if row.get(column) is None:
                raise RenderError(f"'{name}' has no value")
            ty = T.STRING if room else self.compiled.params.get(name) or self.compiled.lets[name]
            variables[name] = shown(ty, row[column])
        return variables

    def _answers(self, row: dict) -> list[str]:
        """The canonical answer, then every other accepted one (the template's `accept` clause)."""
        if row["adversarial"]:
            return [NOT_ANSWERABLE]
        if self.compiled.answer_type == "location":
            # Only the answer's room has a display name among the columns; rooms are shown by name.
            return [row["display_answer"]]
        values = [row["answer"], *(row.get("accepted") or [])]
        return list(dict.fromkeys(answer_text(self.compiled.answer_type, value) for value in values))

    def _options(self, row: dict, answers: list[str], qid: str) -> tuple[list[str], list[str]]:
        """A multiple-choice question's options and its answers (CONVENTIONS.md, Multiple choice): the
        answer and distractors in an order seeded by the id, then 'none of these' where the template offers
        it, which for one question in `count` (seeded) is the right option, the answer left out. A false
        premise shows distractors only; its answer stays `not answerable`. Open questions: ([], answers)."""
        choices = self.compiled.checked.template.choices
        if choices is None:
            return [], answers
        distractors = list(row["distractors"])
        none_right = (choices.none and not row["adversarial"]
                      and seeded_index(self.seed, choices.count, "none of these", qid) == 0)
        values = distractors if row["adversarial"] or none_right else [answers[0], *distractors[:choices.slots - 1]]
        # Options name things as the question does (place stone, not place_stone).
        values = [str(shown(T.ANSWER_TYPES[self.compiled.answer_type], value)) for value in values]
        right = values[0]
        random.Random(seeded_key(self.seed, "options", qid)).shuffle(values)
        options = values + ([NONE_OF_THESE] if choices.none else [])
        # The right option is the only answer: other right values (accept) are never among the options.
        if row["adversarial"]:
            return options, answers
        return options, [NONE_OF_THESE if none_right else right]

    def make(self, row: dict, qid: str) -> dict:
        """The record of a candidate row whose id is `qid`; raises RenderError or InvalidRecord."""
        episode = self.episodes[row["episode_id"]]
        text = self.questions[seeded_index(self.seed, len(self.questions), "question", qid)]
        options, answers = self._options(row, self._answers(row), qid)
        record = {
            "id": qid, "episode_id": row["episode_id"], "env": episode.env, "game": episode.game,
            "template_id": self.compiled.id, "category": self.compiled.category,
            "difficulty": self.compiled.difficulty, "answer_type": self.compiled.answer_type,
            "question": render_question(self.jinja_env, text, self._variables(row)),
            "answer": answers[0], "accepted_answers": answers, "adversarial": bool(row["adversarial"]),
            "bindings": self.bindings(row), "evidence": list(row["evidence"] or []),
            "horizon": self.last_step(episode), "seed": self.seed, "template_hash": self.template_hash, "options": options,
        }
        check_record(record, min(episode.n_steps, record["horizon"]))
        return record

    def last_step(self, episode: EpisodeInfo) -> int:
        """The record's `horizon`: the set's horizon, or the episode's length for a whole episode. Always
        an integer, so that sets with and without a horizon load together in readers that infer a
        column's type from each file (`datasets` reads an all-null column as null-typed)."""
        return episode.n_steps if self.horizon is None else self.horizon


def check_record(record: dict, last_step: int) -> None:
    """Raise InvalidRecord if `record` breaks the QA format or cites a step after `last_step`."""
    problem = _problem(record, last_step)
    if problem:
        raise InvalidRecord(f"{record['template_id']} on {record['episode_id']}: {problem}")


def _problem(record: dict, last_step: int) -> str | None:
    answer, evidence = record["answer"], record["evidence"]
    if not isinstance(answer, str) or not answer.strip():
        return f"answer {answer!r} is not a text"
    if (answer == NOT_ANSWERABLE) != record["adversarial"]:
        return f"answer '{answer}' with adversarial = {record['adversarial']}"
    if record["adversarial"] and evidence:
        return f"an adversarial question has evidence {evidence}"
    if not record["adversarial"] and not evidence:
        return "an answerable question has no evidence"
    if evidence != sorted(set(evidence)) or not all(isinstance(s, int) and 0 <= s <= last_step for s in evidence):
        return f"evidence {evidence} is not a sorted list of distinct steps in 0..{last_step}"
    return None
