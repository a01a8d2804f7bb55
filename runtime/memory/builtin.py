"""The built-in providers, all retrieval providers (qtc's chat model answers from the steps they return):

- `none`, `last:N`, `full`: the steps `qtc answer --context none|last:N|full` shows (ContextProvider),
  asked with the same prompt; `none` is the no-memory control;
- `bm25`: per question, the `k` steps observed so far whose text best matches the question by BM25
  (the bm25s library), best first.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from qtc.errors import InvalidOption
from qtc.runtime.evaluate.context import ContextMode, shown_steps

from .protocol import RetrievalProvider

_WORD = re.compile(r"\w+")


def positive_int(name: str, value: str) -> int:
    """A provider option that must be a positive whole number (options arrive as text)."""
    if not str(value).isdigit() or int(value) <= 0:
        raise InvalidOption("memory_option", f"{name}: expected a positive whole number, got {value!r}")
    return int(value)


def best(scores: np.ndarray, k: int) -> list[int]:
    """The indices of the `k` highest scores, highest first; of equal scores, the earlier index first.

    >>> best(np.array([0.5, 2.0, 0.5, 1.0]), 3)
    [1, 3, 0]
    """
    return [int(i) for i in np.lexsort((np.arange(len(scores)), -scores))[:k]]


class ContextProvider(RetrievalProvider):
    """The steps a `--context` mode shows (none, last:N or full), whatever the question."""

    def __init__(self, mode: ContextMode):
        self.mode = mode

    def retrieve(self, question: dict) -> list[int]:
        """The steps whose action the log shows, and 0 when it shows the start (evidence step 0 is the start
        state), so that evidence recall counts what the model was shown."""
        shown = shown_steps(self.mode, question["horizon"], [])
        return sorted(shown.actions | (shown.states & {0}))


def words(text: str) -> list[str]:
    """The words BM25 matches: lower-cased runs of letters and digits (so "Step 7" gives "step", "7"),
    English stop words left out.

    >>> words("Step 7: you took the brass lantern.")
    ['step', '7', 'you', 'took', 'brass', 'lantern']
    """
    return [w for w in _WORD.findall(text.lower()) if w not in _stop_words()]


@functools.cache
def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN  # bm25s is imported only when bm25 is used

    return frozenset(STOPWORDS_EN)


class BM25Provider(RetrievalProvider):
    """Per question, the top `k` steps by BM25 over their text; steps that share no word with it are never
    returned. The index is built again when steps have arrived since it was last built (at each checkpoint)."""

    def __init__(self, k: str = "10"):
        self.k = positive_int("k", k)

    def reset(self, episode: dict) -> None:
        super().reset(episode)
        self._tokens: list[list[str]] = []
        self._index = None
        self._indexed = 0

    def observe(self, step: dict) -> None:
        super().observe(step)
        self._tokens.append(words(step["text"]))

    def index(self):
        """The BM25 index of every step observed."""
        import bm25s

        if self._index is None or self._indexed != len(self._tokens):
            self._index = bm25s.BM25()
            self._index.index(self._tokens, show_progress=False)
            self._indexed = len(self._tokens)
        return self._index

    def retrieve(self, question: dict) -> list[int]:
        if not self.steps:
            return []
        scores = self.index().get_scores(words(question["question"]))
        return [self.steps[i]["step"] for i in best(scores, self.k) if scores[i] > 0]
