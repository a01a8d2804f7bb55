"""Feeding a memory provider its episodes and asking it their questions, checkpoint by checkpoint.

Per episode: `reset`, then the steps in order, once each, from step 0 (the start) to the first
checkpoint's horizon, then that horizon's questions, then the steps to the next horizon, and so on, so one
pass over an episode serves every horizon of a `--horizon 50,100,200` set (a question without a horizon,
or with one past the episode's end, is asked at its last step). The driver alone decides what a provider
sees: when it is asked a question, it has been fed every step up to the question's horizon and none
after it; a retrieval provider's steps must be among those (else the answer is an error), so the chat
model is never shown a step past the horizon either.

Questions go to `answer` (or `retrieve`) at most `batch` at a time, all of one episode and horizon. A
provider that raises (anything but qtc's UserError, which stops the run) gives its question an error
answer naming the provider and the question; when `answer` raises on several questions, each is asked
again alone to find which. A failure in `reset` or `observe` gives an error to every question of the
episode still to come. The answers are appended as they come, so a rerun asks only what is missing and
feeds each episode that has questions left from its start again.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Callable

import duckdb

from qtc.errors import UserError
from qtc.runtime.episode_rows import EpisodeRows
from qtc.runtime.evaluate.ask import (Answerer, Batch, Request, episode_lengths,
                                      question_horizon)
from qtc.runtime.evaluate.context import Shown, render_context, shown_description
from qtc.runtime.qa.answers import Answer
from qtc.runtime.qa.appendlog import AppendLog
from qtc.runtime.qa.questions import Question

from .builtin import ContextProvider
from .feed import EpisodeFeed
from .load import LoadedProvider
from .protocol import ProviderMistake, checked_steps, question_view, read_answer

NO_TOKENS = {"prompt_tokens": 0, "completion_tokens": 0}  # qtc called no model for the answer


@dataclass
class Checkpoint:
    horizon: int
    questions: list[Question]


@dataclass
class EpisodePlan:
    episode_id: str
    env: str
    game: str
    checkpoints: list[Checkpoint]  # by horizon, ascending

    @property
    def steps(self) -> int:
        """The steps fed: 0 to the last checkpoint's horizon."""
        return self.checkpoints[-1].horizon + 1


def plan_episodes(con: duckdb.DuckDBPyConnection, questions: list[Question]) -> list[EpisodePlan]:
    """The episodes of `questions` in order of their first question, each with its checkpoints."""
    episodes = episode_lengths(con)
    by_episode: dict[str, dict[int, list[Question]]] = {}
    first: dict[str, Question] = {}
    for q in questions:
        horizon = question_horizon(episodes, q)
        first.setdefault(q.episode_id, q)
        by_episode.setdefault(q.episode_id, {}).setdefault(horizon, []).append(q)
    return [EpisodePlan(eid, q.env, q.game, [Checkpoint(h, by_episode[eid][h]) for h in sorted(by_episode[eid])])
            for eid, q in first.items()]


@dataclass
class MemoryStats:
    steps: int = 0  # steps fed
    feed_seconds: float = 0.0  # in reset and observe
    provider_seconds: float = 0.0  # in answer or retrieve
    failed: int = 0  # questions whose answer is the provider's error
    first_error: str | None = None
    written: int = 0  # answers written by the driver itself (not those of qtc's chat model)


def _failure(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())


class MemoryDriver:
    """Runs a provider over planned episodes and appends an answer record per question to `out`; a
    retrieval provider's questions are asked of qtc's chat model through `answerer`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, provider: LoadedProvider, out: AppendLog, model: str,
                 batch: int, answerer: Answerer | None = None, on_answers: Callable[[int], None] = lambda n: None):
        if provider.retrieval and answerer is None:
            raise UserError(f"--memory {provider.name} needs qtc's chat model (--model): it retrieves steps "
                            "and the model answers from them")
        self._con = con
        self._rows = EpisodeRows(con)
        self._provider = provider
        self._out = out
        self._model = model
        self._batch = batch
        self._answerer = answerer
        self._on_answers = on_answers
        self.stats = MemoryStats()

    def run(self, plans: list[EpisodePlan]) -> MemoryStats:
        for plan in plans:
            self._episode(plan)
        return self.stats

    def _episode(self, plan: EpisodePlan) -> None:
        feed = EpisodeFeed(self._con, self._rows, plan.episode_id, plan.env, plan.game)
        instance = self._provider.instance
        fed = -1  # the last step fed
        for number, checkpoint in enumerate(plan.checkpoints):
            start = time.perf_counter()
            try:
                if fed < 0:
                    instance.reset(dict(feed.episode))
                for step in feed.steps(fed + 1, checkpoint.horizon):
                    fed = step["step"]
                    instance.observe(step)
                    self.stats.steps += 1
            except UserError:
                raise
            except Exception as error:
                where = f"observe of step {fed}" if fed >= 0 else "reset"
                for later in plan.checkpoints[number:]:
                    self._write([self._failed(q, f"{where} of episode {plan.episode_id}: {_failure(error)}", 0.0)
                                 for q in later.questions])
                return
            finally:
                self.stats.feed_seconds += time.perf_counter() - start
            for i in range(0, len(checkpoint.questions), self._batch):
                chunk = checkpoint.questions[i:i + self._batch]
                if self._provider.retrieval:
                    self._retrieve(plan, chunk, checkpoint.horizon)
                else:
                    self._answer(chunk, checkpoint.horizon)

    def _failed(self, q: Question, what: str, seconds: float) -> dict:
        self.stats.failed += 1
        error = f"memory provider {self._provider.name} failed on question {q.id}: {what}"
        self.stats.first_error = self.stats.first_error or error
        return Answer(q.id, self._model, str(self._provider.spec), "", error, uuid.uuid4().hex[:16], 1, NO_TOKENS,
                      round(seconds, 3)).record()

    def _write(self, records: list[dict]) -> None:
        if records:
            self._out.append(records)
            self.stats.written += len(records)
            self._on_answers(len(records))

    def _answer(self, chunk: list[Question], horizon: int) -> None:
        start = time.perf_counter()
        try:
            replies = self._provider.instance.answer([question_view(q, horizon) for q in chunk])
        except UserError:
            raise
        except Exception as error:
            seconds = time.perf_counter() - start
            self.stats.provider_seconds += seconds
            if len(chunk) > 1:  # which question it failed on: each asked alone
                for q in chunk:
                    self._answer([q], horizon)
            else:
                self._write([self._failed(chunk[0], _failure(error), seconds)])
            return
        seconds = time.perf_counter() - start
        self.stats.provider_seconds += seconds
        if not isinstance(replies, (list, tuple)) or len(replies) != len(chunk):
            count = len(replies) if isinstance(replies, (list, tuple)) else type(replies).__name__
            self._write([self._failed(q, f"answer() returned {count} answer(s) for {len(chunk)} question(s)",
                                      seconds) for q in chunk])
            return
        request = uuid.uuid4().hex[:16]
        records = []
        for q, reply in zip(chunk, replies):
            try:
                answer = read_answer(reply, horizon)
            except ProviderMistake as mistake:
                records.append(self._failed(q, str(mistake), seconds))
                continue
            records.append(Answer(q.id, self._model, str(self._provider.spec), answer.answer, None, request,
                                  len(chunk), NO_TOKENS, round(seconds, 3), None, [],
                                  None if answer.steps is None else list(answer.steps)).record())
        self._write(records)

    def _describe(self, horizon: int, shown: Shown) -> tuple[str, bool]:
        """How the log is described in the prompt, and whether there is a log at all (not for `none`)."""
        instance = self._provider.instance
        if isinstance(instance, ContextProvider):  # the prompt of the --context mode it stands for
            return shown_description(instance.mode, horizon, shown), instance.mode.kind != "none"
        return (f"the steps memory {self._provider.name} retrieved of steps 1 to {horizon}, in step order; "
                "the others are not shown"), True

    def _retrieve(self, plan: EpisodePlan, chunk: list[Question], horizon: int) -> None:
        groups: dict[tuple[int, ...], list[Question]] = {}  # questions that retrieved the same steps
        failures = []
        for q in chunk:
            start = time.perf_counter()
            try:
                steps = checked_steps(self._provider.instance.retrieve(question_view(q, horizon)), horizon)
            except UserError:
                raise
            except ProviderMistake as mistake:
                failures.append(self._failed(q, f"retrieve(): {mistake}", time.perf_counter() - start))
                continue
            except Exception as error:
                failures.append(self._failed(q, _failure(error), time.perf_counter() - start))
                continue
            finally:
                self.stats.provider_seconds += time.perf_counter() - start
            groups.setdefault(steps, []).append(q)
        self._write(failures)
        requests = []
        for steps, questions in groups.items():
            shown = Shown.of_steps(steps)
            description, log = self._describe(horizon, shown)
            context = render_context(self._rows, plan.episode_id, plan.env, shown) if log else ""
            requests.append(Request(Batch(plan.episode_id, plan.env, shown, description, tuple(questions), log),
                                    context, retrieved_steps=steps))
        self._answerer.run(requests)
