"""Asking a model the questions of a QA set, in batches that share one context, resumably.

Questions whose contexts are the same (same episode, same shown steps) are asked together, up to the
batch size, in one chat request that asks for strict JSON. Replies are read robustly: code fences and
stray text around the JSON, a single object where an array was asked, numbered plain-text lines, a reply
cut off mid-array. Questions a batch reply left unanswered are asked again one at a time, where a plain
text reply counts as the answer. Each batch's answers are appended to the answers file as they arrive;
a rerun asks only the questions that file does not answer yet.

Requests send the answers' JSON schema as `response_format` by default (a model constrained to it
writes a tenth of the tokens) in the first dialect the server takes (chat.response_formats), or any JSON
object, or nothing; replies are read as free text either way.
Several batches may be under way at once (`max_connections`, for hosted APIs); their answers are still
written in batch order. A prompt the server refuses as longer than the model's window, and a reply
that is not a chat completion, are recorded as each of its questions' error, and the run goes on. An
answer with an error and no prediction (Answer.failed) is asked again by the next run.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb

from qtc.errors import InvalidOption, UserError
from qtc.runtime.chat import (ChatClient, Completion, ContextTooLong, UnusableReply, content_text,
                              json_values, response_formats, strip_fences)
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.qa.answers import Answer, read_answers
from qtc.runtime.qa.appendlog import AppendLog
from qtc.runtime.qa.format import NOT_ANSWERABLE
from qtc.runtime.qa.questions import Question

from .context import (ContextMode, LogSizes, Shown, estimated_tokens, render_context, shown_description,
                      shown_steps)
from .registry import EVALUATE_ENVIRONMENTS
from .scoring import option_letter

# Completion tokens allowed per request: a little for the JSON around the answers, and enough per
# answer for the longest answers asked (a sentence of reasoning, an observation).
REPLY_TOKENS = 64
ANSWER_TOKENS = 192

ANSWER_FORMS = {
    "step": "a step number", "integer": "a whole number", "float": "a number", "string": "a short text",
    "action": "the action as written in the log", "location": "the room's name as written in the log",
    "item": "an item's name", "terrain": "a material's name", "achievement": "an achievement's name",
    "direction": "a direction", "displacement": "like '2 steps left and 3 steps up', or 'no movement'",
    "yesno": "yes or no", "list": "the values, separated by commas", "steps": "the step numbers, separated by commas",
    "sequence": "the values in the order asked, separated by commas",
}
CHOICE_FORM = "the letter of one option"  # a multiple-choice question, whatever its answer type
REPLY_FORMAT = (
    "Reply with one JSON object and nothing else:\n"
    '{{"answers": [{{"question": 1, "answer": "..."}}, {{"question": 2, "answer": "..."}}]}}\n'
    "with one entry per question, in order. Each answer is short text in the form the question's hint gives.")
SYSTEM_PROMPT = (
    "You are the agent whose log is shown: you played {game}. The log holds, step by step, the action you "
    "chose, your reason for it and what you observed after it. Answer questions about your own past from "
    "the log alone.\n\n" + REPLY_FORMAT +
    f' If a question rests on something that never happened in the log, answer "{NOT_ANSWERABLE}".')
# --context none, the no-memory control: the model is told that it sees no log.
NO_LOG_SYSTEM_PROMPT = (
    "You are the agent that played {game}, but your log of it is not shown: answer questions about your "
    "own past without it, as well as you can.\n\n" + REPLY_FORMAT +
    f' If a question rests on something that never happened, answer "{NOT_ANSWERABLE}".')
NO_LOG = "NO LOG: the log of this episode is not shown."

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
    log: bool  # False for --context none: no log at all, not an empty one


def episode_lengths(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, int]]:
    """Every episode of a store: its env and number of steps, by episode id."""
    return {eid: (env, n) for eid, env, n in con.execute("SELECT episode_id, env, n_steps FROM episodes").fetchall()}


def question_horizon(episodes: dict[str, tuple[str, int]], q: Question) -> int:
    """The last step a question may speak of in its episode (the episode's length for a question without a
    horizon or with one past the end); a clear error when the traces do not hold the question's episode."""
    if q.episode_id not in episodes:
        raise UserError(f"question {q.id}: episode {q.episode_id!r} is not in the traces given")
    env, n_steps = episodes[q.episode_id]
    if env != q.env:
        raise UserError(f"question {q.id}: episode {q.episode_id!r} is a {env} episode, "
                        f"the question says {q.env}")
    return n_steps if q.horizon is None else min(q.horizon, n_steps)


def plan_batches(con: duckdb.DuckDBPyConnection, questions: list[Question], mode: ContextMode,
                 batch_size: int) -> list[Batch]:
    """The batches that ask `questions`: grouped by context, in order of each context's first question."""
    episodes = episode_lengths(con)
    sizes: dict[str, LogSizes] = {}  # by episode, for budget:B
    rows = EpisodeRows(con)
    groups: dict[tuple, list[Question]] = {}
    for q in questions:
        horizon = question_horizon(episodes, q)
        env, n_steps = episodes[q.episode_id]
        if mode.kind == "budget" and q.episode_id not in sizes:
            sizes[q.episode_id] = LogSizes.of_episode(rows, q.episode_id, env, n_steps)
        shown = shown_steps(mode, horizon, q.evidence, sizes.get(q.episode_id))
        groups.setdefault((q.episode_id, env, shown, shown_description(mode, horizon, shown)), []).append(q)
    return [Batch(*key, tuple(group[i:i + batch_size]), mode.kind != "none")
            for key, group in groups.items() for i in range(0, len(group), batch_size)]


def build_messages(batch: Batch, context: str, questions: tuple[Question, ...]) -> list[dict]:
    lines = [f"LOG ({batch.description})", context] if batch.log else [NO_LOG]
    lines += ["", "QUESTIONS", *(question_line(n, q) for n, q in enumerate(questions, start=1))]
    system = SYSTEM_PROMPT if batch.log else NO_LOG_SYSTEM_PROMPT
    return [{"role": "system", "content": system.format(game=EVALUATE_ENVIRONMENTS[batch.env].description)},
            {"role": "user", "content": "\n".join(lines)}]


def shown_question(question: Question) -> str:
    """A question's text as the prompt shows it: with its options, each after its letter, if it has any."""
    if not question.options:
        return question.question
    options = "; ".join(f"{option_letter(i)}) {option}" for i, option in enumerate(question.options))
    return f"{question.question} Options: {options}"


def question_line(number: int, question: Question) -> str:
    """A question as the prompt asks it: its number, the form of its answer, then its text."""
    form = CHOICE_FORM if question.options else ANSWER_FORMS[question.answer_type]
    return f"{number}. [{form}] {shown_question(question)}"


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
    """A question number: digits (ASCII, a few of them), or an integer."""
    text = str(value).strip().lstrip("#qQ")
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


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
# Spaces, not \s, which would reach across lines and make a reply of blank lines take quadratic time.
_NUMBERED_LINE = re.compile(r"^[ \t]*(?:q(?:uestion)?[ \t]*)?([0-9]{1,9})[ \t]*[.):][ \t]*(.*\S)", re.IGNORECASE | re.MULTILINE)


def _json_string(literal: str) -> str:
    """A JSON string literal's text, or "" where it is not a valid one (a broken escape)."""
    try:
        return _text(json.loads(literal))
    except ValueError:
        return ""


def parse_reply(text: str, count: int) -> list[tuple[str | None, str | None]]:
    """For each of `count` questions, (answer or None, why it was not read from well-formed JSON)."""
    replied = json_values(text)
    items = [item for value in replied.values for item in _answer_items(value)]
    note = SALVAGED if replied.broken else None
    if not items:
        # A reply cut off or broken inside its JSON: the answer strings it completed.
        items = [(None, answer) for m in _ANSWER_FIELD.finditer(text) if (answer := _json_string(m.group(1)))]
        if not items:
            items = [(int(m.group(1)), m.group(2)) for m in _NUMBERED_LINE.finditer(strip_fences(text))]
        note = SALVAGED
    answers: list[str | None] = [None] * count
    unnumbered = []
    for number, answer in items:
        if not answer:
            continue  # an empty answer is none
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
    too_long: int = 0  # questions whose prompt was longer than the model's context window
    unusable: int = 0  # questions whose reply was not a chat completion
    failed: int = 0  # questions with no answer (Answer.failed), these included: the next run asks them again
    first_failure: str | None = None  # the first failed answer's error


def pending_questions(questions: list[Question], out: Path, model: str, mode: ContextMode) -> tuple[list[Question], int]:
    """The questions `out` does not answer yet (those it has only a failed answer to included), and how
    many it does. The file is read whole and checked before anything is written to it; then a
    half-written last line is mended."""
    existing = read_answers(out)
    if existing.answers and (existing.model, existing.context) != (model, str(mode)):
        raise InvalidOption("out", f"{out} holds answers of model {existing.model} with context {existing.context}; "
                                   f"name another file for {model} with context {mode}")
    if existing.partial_line is not None:
        existing = read_answers(out, repair=True)
    answered = {i for i, answer in existing.answers.items() if not answer.failed}
    pending = [q for q in questions if q.id not in answered]
    return pending, len(questions) - len(pending)


def estimate_tokens(messages: list[dict]) -> int:
    """About how many tokens the text of `messages` takes (context.estimated_tokens; images not counted)."""
    return estimated_tokens(sum(len(content_text(m["content"])) for m in messages))


# Tokens a chat template adds around each message (role markers): what a count of the text leaves out.
MESSAGE_OVERHEAD_TOKENS = 8


def counted_tokens(client: ChatClient, messages: list[dict]) -> int | None:
    """The tokens of `messages` by the server's tokenizer (their text, plus MESSAGE_OVERHEAD_TOKENS each
    for the chat template; images not counted), or None where the server has no tokenize route."""
    counted = client.count_tokens("\n".join(content_text(m["content"]) for m in messages))
    return None if counted is None else counted + MESSAGE_OVERHEAD_TOKENS * len(messages)


def answers_schema(count: int) -> dict:
    """The JSON schema of a reply answering `count` questions: the object the system prompt asks for."""
    answer = {"type": "object", "properties": {"question": {"type": "integer"}, "answer": {"type": "string"}},
              "required": ["question", "answer"], "additionalProperties": False}
    return {"type": "object", "required": ["answers"], "additionalProperties": False,
            "properties": {"answers": {"type": "array", "items": answer, "minItems": count, "maxItems": count}}}


def answer_formats(json_mode: str, count: int) -> tuple[dict | None, ...]:
    """The response_format dialects a request for `count` answers is sent with, the first the server
    takes (chat.response_formats): the answers' schema, any JSON object, or none (free text, read as well
    as it can be)."""
    return response_formats(json_mode, "answers", answers_schema(count))


@dataclass(frozen=True)
class AskOptions:
    max_tokens: int | None = None  # completion tokens per request; None: REPLY_TOKENS + ANSWER_TOKENS each
    json_mode: str = "schema"
    max_connections: int = 1  # batches asked at once

    def __post_init__(self):
        for field in ("max_tokens", "max_connections"):
            value = getattr(self, field)
            if value is not None and value <= 0:
                raise InvalidOption(field, f"must be positive, got {value}")
        answer_formats(self.json_mode, 1)

    def tokens(self, count: int) -> int:
        return self.max_tokens or REPLY_TOKENS + ANSWER_TOKENS * count


@dataclass(frozen=True)
class Request:
    """One batch with the context it is asked in (shared by every batch of that context)."""
    batch: Batch
    context: str  # the log text; empty for --context none
    images: tuple[dict, ...] = ()  # content parts shown before the log: screens and their captions (frames.py)
    retrieved_steps: tuple[int, ...] | None = None  # what a memory provider retrieved for the batch's questions

    @property
    def context_tokens(self) -> int:
        """The log text's estimated tokens (the answer record's `context_tokens`; screens not counted)."""
        return estimated_tokens(len(self.context))

    def messages(self, questions: tuple[Question, ...] | None = None) -> list[dict]:
        messages = build_messages(self.batch, self.context, questions or self.batch.questions)
        if self.images:
            messages[-1] = {"role": "user", "content": [*self.images, {"type": "text", "text": messages[-1]["content"]}]}
        return messages


def prepare_requests(con: duckdb.DuckDBPyConnection, batches: list[Batch]) -> list[Request]:
    """Each batch with its context, rendered once per context."""
    contexts: dict[tuple, str] = {}
    requests = []
    rows = EpisodeRows(con)
    for batch in batches:
        key = (batch.episode_id, batch.shown)
        if key not in contexts:
            contexts[key] = render_context(rows, batch.episode_id, batch.env, batch.shown) if batch.log else ""
        requests.append(Request(batch, contexts[key]))
    return requests


@dataclass(frozen=True)
class Asked:
    """What one request gave: its usage and, per question, (prediction, why it was not read from JSON)."""
    completion: Completion
    questions: tuple[Question, ...]
    parsed: list[tuple[str | None, str | None]]
    context_tokens: int  # of the log the questions were asked with
    too_long: bool = False  # the server refused the prompt as longer than the model's context window
    retrieved_steps: tuple[int, ...] | None = None  # the request's (Request.retrieved_steps)
    unusable: bool = False  # the reply was not a chat completion

    @property
    def failed(self) -> bool:
        """No reply to read: its questions are not asked again alone (the next run asks them)."""
        return self.too_long or self.unusable


class Answerer:
    """Asks the batches of a run (several at once with max_connections) and appends their answers to the
    answers file in the order of the batches, each batch as soon as it and every batch before it are done."""

    def __init__(self, client: ChatClient, mode: ContextMode, out: AppendLog, options: AskOptions = AskOptions(),
                 on_answers: Callable[[int], None] = lambda n: None, log: AppendLog | None = None,
                 on_usage: Callable[[int, int], None] = lambda estimated, counted: None):
        self._client = client
        self._mode = mode
        self._out = out
        self._options = options
        self._on_answers = on_answers
        self._log = log
        self._log_lock = threading.Lock()
        self._on_usage = on_usage  # called once, with the first reply's prompt tokens against their estimate
        self._usage_seen = threading.Event()
        self.summary = RunSummary()

    def _complete(self, messages: list[dict], count: int) -> Completion:
        try:
            completion = self._client.complete(messages, self._options.tokens(count),
                                               answer_formats(self._options.json_mode, count))
        except UserError as error:
            self._record_request(messages, None, str(error))
            raise
        self._record_request(messages, completion, None)
        if completion.prompt_tokens and not self._usage_seen.is_set():
            self._usage_seen.set()
            self._on_usage(estimate_tokens(messages), completion.prompt_tokens)
        return completion

    def _record_request(self, messages: list[dict], completion: Completion | None, error: str | None) -> None:
        if self._log is not None:
            with self._log_lock:
                self._log.append([{"request": completion.request if completion else None, "messages": messages,
                                   "reply": completion.text if completion else None, "error": error}])

    def _ask(self, request: Request, questions: tuple[Question, ...]) -> Asked:
        messages = request.messages(questions)
        try:
            completion = self._complete(messages, len(questions))
        except ContextTooLong as refusal:
            # The server's words give its own count; ours (four characters a token) may count fewer.
            return self._failed(request, questions, f"context too long: about {estimate_tokens(messages)} tokens "
                                f"by four characters a token; {refusal}", too_long=True)
        except UnusableReply as error:
            return self._failed(request, questions, str(error), unusable=True)
        return Asked(completion, questions, parse_reply(completion.text, len(questions)), request.context_tokens,
                     retrieved_steps=request.retrieved_steps)

    @staticmethod
    def _failed(request: Request, questions: tuple[Question, ...], error: str, **why: bool) -> Asked:
        nothing = Completion("", 0, 0, uuid.uuid4().hex[:16], 0.0)
        return Asked(nothing, questions, [(None, error)] * len(questions), request.context_tokens,
                     retrieved_steps=request.retrieved_steps, **why)

    def _answer(self, request: Request) -> list[Asked]:
        """The batch's request, then each question its reply left unanswered asked alone (where plain
        text is an answer too)."""
        asked = self._ask(request, request.batch.questions)
        if len(asked.questions) == 1 or asked.failed:
            return [asked]
        replies = [asked]
        for q, (prediction, _) in zip(asked.questions, asked.parsed):
            if prediction is None:
                replies.append(self._ask(request, (q,)))
        return replies

    def _write(self, replies: list[Asked]) -> None:
        records = []
        # The batch's request, when some of its questions were asked again alone: those answers carry it.
        batch = replies[0].completion
        unanswered = {"request": batch.request, "prompt_tokens": batch.prompt_tokens,
                      "completion_tokens": batch.completion_tokens}
        for asked in replies:
            c = self.summary
            c.requests += 1
            c.prompt_tokens += asked.completion.prompt_tokens
            c.completion_tokens += asked.completion.completion_tokens
            usage = {"prompt_tokens": asked.completion.prompt_tokens,
                     "completion_tokens": asked.completion.completion_tokens}
            batch_size = len(asked.questions)
            for q, (prediction, note) in zip(asked.questions, asked.parsed):
                if prediction is None and batch_size > 1 and not asked.failed:
                    continue  # asked again alone
                c.too_long += asked.too_long
                c.unusable += asked.unusable
                answer = Answer(q.id, self._client.model, str(self._mode), prediction or "", note,
                                asked.completion.request, batch_size, usage, round(asked.completion.seconds, 3),
                                asked.context_tokens, [unanswered] if asked is not replies[0] else [],
                                None if asked.retrieved_steps is None else list(asked.retrieved_steps))
                if answer.failed:
                    c.failed += 1
                    c.first_failure = c.first_failure or answer.error
                records.append(answer.record())
        if records:
            self._out.append(records)
            self.summary.asked += len(records)
            self._on_answers(len(records))

    def run(self, requests: list[Request]) -> RunSummary:
        """Ask `requests`; the summary counts every call's (a memory run calls it once per checkpoint)."""
        start = time.perf_counter()
        try:
            if self._options.max_connections == 1:
                for request in requests:
                    self._write(self._answer(request))
            else:
                self._run_concurrently(requests)
        finally:
            self.summary.seconds += time.perf_counter() - start
        return self.summary

    def _run_concurrently(self, requests: list[Request]) -> None:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(self._options.max_connections)
        futures = [pool.submit(self._answer, request) for request in requests]
        try:
            for future in futures:  # in batch order: the file's order does not depend on timing
                self._write(future.result())
        finally:
            # On an error or Ctrl-C, nothing more is sent; requests under way end with their timeout.
            pool.shutdown(wait=False, cancel_futures=True)
