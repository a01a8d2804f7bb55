"""The memory-provider protocol: what the driver gives a provider and what it takes back.

A provider is an object with
- `reset(episode)`: a new episode begins; `episode` holds `episode_id`, `env`, `game` and `legend` (what
  the symbols of a Crafter step's view mean; empty for Jericho);
- `observe(step)`: the next step, in order, once: `step` (its number; 0 is the start, the state before
  step 1), `text` (the step as `qtc answer` shows it: the action, the reason, then what was observed after
  it) and, for a Crafter episode recorded with frames, `frame` (the screen after the step, an RGB array);
- and one of two ways to answer:
  - `answer(questions)`: an *answering* provider answers itself, one answer per question, each a string
    or a dict `{"answer": str, "steps": [int, ...]}` (the steps it drew on, kept in the answers file);
  - `retrieve(question)`: a *retrieval* provider returns the steps to show, best first; qtc's chat model
    answers from them, shown in step order with the prompt of `qtc answer --context`.
A question is a dict with `id`, `question`, `shown` (the question as the prompt shows it, options
included), `horizon` (the last step it may speak of: every step up to it has been observed, none after
it), `answer_type`, `options`, `category`, `episode_id` and `env`. `RetrievalProvider` keeps the steps it
is fed, so that a subclass may write `retrieve` alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from qtc.runtime.evaluate.ask import shown_question
from qtc.runtime.qa.questions import Question


class MemoryProvider(Protocol):
    """An answering provider (the shape `qtc answer --memory package.module:Class` accepts)."""

    def reset(self, episode: dict) -> None: ...

    def observe(self, step: dict) -> None: ...

    def answer(self, questions: list[dict]) -> list[str | dict]: ...


class RetrievalProvider:
    """A provider whose steps qtc's chat model answers from: write `retrieve(question)`, returning step
    numbers, best first. `self.episode` is the episode under way and `self.steps` the steps fed so far, in
    order; a subclass that keeps its own store overrides `reset` and `observe` too."""

    def reset(self, episode: dict) -> None:
        self.episode = episode
        self.steps: list[dict] = []

    def observe(self, step: dict) -> None:
        self.steps.append(step)


def question_view(question: Question, horizon: int) -> dict:
    """What a provider is told of a question: never its answer, evidence or bindings."""
    return {"id": question.id, "question": question.question, "shown": shown_question(question),
            "horizon": horizon, "answer_type": question.answer_type, "options": list(question.options),
            "category": question.category, "episode_id": question.episode_id, "env": question.env}


class ProviderMistake(Exception):
    """What a provider returned breaks the protocol (the message says how); recorded as the question's error."""


def checked_steps(steps, horizon: int) -> tuple[int, ...]:
    """A provider's steps, repeats dropped (the first kept), each a step observed (0 to `horizon`)."""
    if not isinstance(steps, (list, tuple)) or not all(type(s) is int for s in steps):
        raise ProviderMistake(f"steps must be a list of step numbers, got {steps!r:.80}")
    beyond = [s for s in steps if not 0 <= s <= horizon]
    if beyond:
        raise ProviderMistake(f"step {beyond[0]} was never observed (steps 0 to {horizon} were)")
    return tuple(dict.fromkeys(steps))


@dataclass(frozen=True)
class ProviderAnswer:
    answer: str
    steps: tuple[int, ...] | None  # None: the provider did not say


def read_answer(value, horizon: int) -> ProviderAnswer:
    """One of an answering provider's answers: a string, or {"answer": str, "steps": [int, ...]}."""
    if isinstance(value, str):
        return ProviderAnswer(value, None)
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        steps = value.get("steps")
        return ProviderAnswer(value["answer"], None if steps is None else checked_steps(steps, horizon))
    raise ProviderMistake(f"an answer must be a string or a dict with a string 'answer', got {value!r:.80}")
