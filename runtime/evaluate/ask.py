"""Asking a model the questions of a QA set, in batches that share one context, resumably.

Questions whose contexts are the same (same episode, same shown steps) are asked together, up to the
batch size, in one chat request that asks for strict JSON. Replies are read robustly: code fences and
stray text around the JSON, a single object where an array was asked, numbered plain-text lines, a reply
cut off mid-array. Questions a batch reply left unanswered are asked again one at a time, where a plain
text reply counts as the answer. Each batch's answers are appended to the answers file as they arrive;
a rerun asks only the questions that file does not answer yet.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb

from qtc.errors import InvalidOption, UserError

from qtc.runtime.qa.answers import Answer, read_answers
from qtc.runtime.qa.appendlog import AppendLog
from qtc.runtime.chat import ChatClient, Completion, json_values, strip_fences
from .context import ContextMode, Shown, render_context, shown_steps
from qtc.runtime.qa.questions import Question
from qtc.runtime.qa.format import NOT_ANSWERABLE

# Completion tokens allowed per request: a little for the JSON around the answers, and enough per
# answer for the longest answers asked (a sentence of reasoning, an observation).
REPLY_TOKENS = 64
ANSWER_TOKENS = 192

GAMES = {"jericho": "a text adventure game",
         "crafter": "Crafter, a two-dimensional survival game seen from above"}
ANSWER_FORMS = {
    "step": "a step number", "integer": "a whole number", "float": "a number", "string": "a short text",
    "action": "the action as written in the log", "location": "the room's name as written in the log",
    "item": "an item's name", "terrain": "a material's name", "achievement": "an achievement's name",
    "direction": "a direction", "displacement": "like '2 steps left and 3 steps up', or 'no movement'",
    "yesno": "yes or no", "list": "the values, separated by commas",
}
SYSTEM_PROMPT = (
    "You are the agent whose log is shown: you played {game}. The log holds, step by step, the action you "
    "chose, your reason for it and what you observed after it. Answer questions about your own past from "
    "the log alone.\n\n"
    "Reply with one JSON object and nothing else:\n"
    '{{"answers": [{{"question": 1, "answer": "..."}}, {{"question": 2, "answer": "..."}}]}}\n'
    "with one entry per question, in order. Each answer is short text in the form the question's hint "
    f'gives. If a question rests on something that never happened in the log, answer "{NOT_ANSWERABLE}".')

# Why a prediction was not read from a well-formed JSON reply (the answer record's `error`).
SALVAGED = "answer read from a malformed reply"
PLAIN_TEXT = "the reply was not JSON; its text is the answer"
NO_ANSWER = "no answer in the reply"


@dataclass(frozen=True)
class Batch:
    episode_id: str
    env: str
    shown: Shown
    description: str  # which steps the log shows, in words
    questions: tuple[Question, ...]


def _description(mode: ContextMode, horizon: int, shown: Shown) -> str:
    if mode.kind == "full":
        return f"steps 1 to {horizon}, every step"
    if mode.kind == "last":
        return f"steps {min(shown.actions, default=horizon)} to {horizon}; earlier steps are not shown"
    return "only a few steps; the others are not shown"


def plan_batches(con: duckdb.DuckDBPyConnection, questions: list[Question], mode: ContextMode,
                 batch_size: int) -> list[Batch]:
    """The batches that ask `questions`: grouped by context, in order of each context's first question."""
    episodes = {eid: (env, n) for eid, env, n in con.execute(
        "SELECT episode_id, env, n_steps FROM episodes").fetchall()}
    groups: dict[tuple, list[Question]] = {}
    for q in questions:
        if q.episode_id not in episodes:
            raise UserError(f"question {q.id}: episode {q.episode_id!r} is not in the traces given")
        env, n_steps = episodes[q.episode_id]
        if env != q.env:
            raise UserError(f"question {q.id}: episode {q.episode_id!r} is a {env} episode, "
                            f"the question says {q.env}")
        horizon = n_steps if q.horizon is None else min(q.horizon, n_steps)
        shown = shown_steps(mode, horizon, q.evidence)
        groups.setdefault((q.episode_id, env, shown, _description(mode, horizon, shown)), []).append(q)
    return [Batch(*key, tuple(group[i:i + batch_size]))
            for key, group in groups.items() for i in range(0, len(group), batch_size)]


def build_messages(batch: Batch, context: str, questions: tuple[Question, ...]) -> list[dict]:
    lines = [f"LOG ({batch.description})", context, "", "QUESTIONS"]
    lines += [f"{n}. [{ANSWER_FORMS[q.answer_type]}] {q.question}" for n, q in enumerate(questions, start=1)]
    return [{"role": "system", "content": SYSTEM_PROMPT.format(game=GAMES[batch.env])},
            {"role": "user", "content": "\n".join(lines)}]


def _text(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value).strip()


def _number(value) -> int | None:
    text = str(value).strip().lstrip("#qQ")
    return int(text) if text.isdigit() else None


def _answer_items(value) -> list[tuple[int | None, str]]:
    """(question number or None, answer) pairs in one JSON value of a reply."""
    if isinstance(value, list):
        items = []
        for element in value:
            if isinstance(element, dict):
                items += _answer_items(element)
            else:
                items.append((None, _text(element)))
        return items
    if not isinstance(value, dict):
        return []
    if "answers" in value:
        return _answer_items(value["answers"])
    if "answer" in value:
        number = next((n for key in ("question", "id", "n", "number")
                       if key in value and (n := _number(value[key])) is not None), None)
        return [(number, _text(value["answer"]))]
    if value and all(_number(key) is not None for key in value):  # {"1": "yes", "2": "12"}
        return [(_number(key), _text(answer)) for key, answer in value.items()]
    return []


_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*("(?:[^"\\]|\\.)*")')
_NUMBERED_LINE = re.compile(r"^\s*(?:q(?:uestion)?\s*)?(\d+)\s*[.):]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def parse_reply(text: str, count: int) -> list[tuple[str | None, str | None]]:
    """For each of `count` questions, (answer or None, why it was not read from well-formed JSON)."""
    replied = json_values(text)
    items = [item for value in replied.values for item in _answer_items(value)]
    note = SALVAGED if replied.broken else None
    if not items:
        # A reply cut off or broken inside its JSON: the answer strings it completed.
        items = [(None, _text(json.loads(m.group(1)))) for m in _ANSWER_FIELD.finditer(text)]
        if not items:
            items = [(int(m.group(1)), m.group(2)) for m in _NUMBERED_LINE.finditer(strip_fences(text))]
        note = SALVAGED
    answers: list[str | None] = [None] * count
    unnumbered = []
    for number, answer in items:
        if number is not None and 1 <= number <= count and answers[number - 1] is None:
            answers[number - 1] = answer
        else:
            unnumbered.append(answer)
    gaps = [i for i, a in enumerate(answers) if a is None]
    for i, answer in zip(gaps, unnumbered):
        answers[i] = answer
    plain = strip_fences(text)
    if count == 1 and answers[0] is None and plain and plain[0] not in "{[":
        return [(plain, PLAIN_TEXT)]
    return [(a, note) if a is not None else (None, NO_ANSWER) for a in answers]


@dataclass
class RunSummary:
    asked: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


def pending_questions(questions: list[Question], out: Path, model: str, mode: ContextMode) -> tuple[list[Question], int]:
    """The questions `out` does not answer yet, and how many it does; a half-written last line is mended."""
    existing = read_answers(out, repair=True)
    if existing.answers and (existing.model, existing.context) != (model, str(mode)):
        raise InvalidOption("out", f"{out} holds answers of model {existing.model} with context {existing.context}; "
                                   f"name another file for {model} with context {mode}")
    pending = [q for q in questions if q.id not in existing.answers]
    return pending, len(questions) - len(pending)


class Answerer:
    """Asks the batches of a run and appends each answer to the answers file as it arrives."""

    def __init__(self, con: duckdb.DuckDBPyConnection, client: ChatClient, mode: ContextMode, out: AppendLog,
                 on_answers: Callable[[int], None] = lambda n: None):
        self._con = con
        self._client = client
        self._mode = mode
        self._out = out
        self._on_answers = on_answers
        self.summary = RunSummary()

    def _ask(self, batch: Batch, context: str, questions: tuple[Question, ...]) -> tuple[Completion, list]:
        completion = self._client.complete(build_messages(batch, context, questions),
                                           REPLY_TOKENS + ANSWER_TOKENS * len(questions))
        s = self.summary
        s.requests += 1
        s.prompt_tokens += completion.prompt_tokens
        s.completion_tokens += completion.completion_tokens
        return completion, parse_reply(completion.text, len(questions))

    def _write(self, answered: list[tuple[Question, tuple]], completion: Completion, batch_size: int) -> None:
        usage = {"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens}
        records = [Answer(q.id, self._client.model, str(self._mode), prediction or "", note, completion.request,
                          batch_size, usage, round(completion.seconds, 3)).record()
                   for q, (prediction, note) in answered]
        if records:
            self._out.append(records)
            self.summary.asked += len(records)
            self._on_answers(len(records))

    def run(self, batches: list[Batch]) -> RunSummary:
        start = time.perf_counter()
        context_key, context = None, ""
        for batch in batches:
            if (batch.episode_id, batch.shown) != context_key:  # batches of one context come together
                context_key = (batch.episode_id, batch.shown)
                context = render_context(self._con, batch.episode_id, batch.env, batch.shown)
            completion, parsed = self._ask(batch, context, batch.questions)
            size = len(batch.questions)
            # A batch reply that skipped a question: ask it again alone, where plain text is an answer too.
            retry = {q.id for q, (prediction, _) in zip(batch.questions, parsed) if prediction is None and size > 1}
            self._write([(q, p) for q, p in zip(batch.questions, parsed) if q.id not in retry], completion, size)
            for q in batch.questions:
                if q.id in retry:
                    single, single_parsed = self._ask(batch, context, (q,))
                    self._write([(q, single_parsed[0])], single, 1)
        self.summary.seconds = time.perf_counter() - start
        return self.summary
