"""Paraphrasing question wording through a model, keeping the meaning, with every rewrite checked.

A share of the questions (chosen by seeded hashes of their ids) is sent to the model one distinct text
at a time. A rewrite is kept only if it passes every check of `rejection`: it is still a question, it
holds the same numbers, every quoted value, every name (a binding's value, a capitalized word) and
words of the same meaning for order, quantity, negation and direction (before, after, first, most,
not, left, ...). Otherwise the original text stays. Results are cached by (model, original text) in an append log, so a rerun asks nothing twice.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from qtc.errors import InvalidOption

from qtc.runtime.qa.appendlog import AppendLog, read_log
from qtc.runtime.chat import ChatClient, json_values, strip_fences
from qtc.runtime.qa.questions import Question
from .sampling import seeded_key
from qtc.runtime.trace.format import _check

# Words that carry a question's meaning about order, position, quantity, negation or direction, in
# groups of synonyms: a paraphrase must use the same groups as the original.
MEANING_GROUPS = tuple(frozenset(group.split("|")) for group in (
    "before|prior after first second third last|final next previous|preceding not|never "
    "most|greatest|largest|maximum|highest least|fewest|smallest|minimum|lowest longest shortest earliest "
    "latest tie|ties|tied consecutive distinct|different|unique net left right up down north south east west "
    "northeast northwest southeast southwest").split())
MAX_LENGTH_RATIO = 3  # a rewrite this many times longer than the original has stopped paraphrasing
REPLY_TOKENS = 256
SYSTEM_PROMPT = (
    "You rewrite questions. Rewrite the question you are given with different wording and exactly the "
    "same meaning. Keep every number, every quoted value and every name exactly as written; keep words "
    "such as before, after, first, last, between, most and not; keep it a question. Reply with one JSON "
    'object and nothing else: {"paraphrase": "..."}')

CACHE_SPEC = {"model": "str", "question": "str", "paraphrase": "str"}

_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def _meaning(text: str) -> set[frozenset]:
    words = set(re.findall(r"[a-z0-9]+", text.lower().replace("n't", " not")))
    return {group for group in MEANING_GROUPS if group & words}


def _contains(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words, ignoring case."""
    return re.search(rf"(?<![a-z0-9]){re.escape(phrase.lower())}(?![a-z0-9])", text.lower()) is not None


def _names(question: Question) -> set[str]:
    """The names a question's text shows: its bindings' values (as written, or with underscores as
    spaces) and its capitalized words after the first."""
    names = {form for value in question.bindings.values() for form in (value, value.replace("_", " "))
             if not value.isdigit() and _contains(question.question, form)}
    return names | set(re.findall(r"(?<=\s)[A-Z][\w'-]*", question.question))


def rejection(question: Question, paraphrase: str) -> str | None:
    """Why `paraphrase` may not replace the question's text, or None if it may."""
    original = question.question
    if not paraphrase.strip():
        return "empty"
    if original.rstrip().endswith("?") and not paraphrase.rstrip().endswith("?"):
        return "not a question"
    if len(paraphrase) > MAX_LENGTH_RATIO * len(original):
        return "too long"
    if Counter(re.findall(r"\d+", original)) != Counter(re.findall(r"\d+", paraphrase)):
        return "changes a number"
    for match in _QUOTED.finditer(original):
        if (match.group(1) or match.group(2)) not in paraphrase:
            return f"drops a quoted value: {match.group(0)}"
    for name in sorted(_names(question)):
        if not _contains(paraphrase, name):
            return f"drops a name: {name!r}"
    changed = _meaning(original) ^ _meaning(paraphrase)
    if changed:
        return f"changes a word of meaning: {'|'.join(sorted(min(changed, key=sorted)))!r}"
    return None


def read_reply(text: str) -> str:
    """The rewrite in a reply: a JSON object's `paraphrase` (or `question`), else the reply's text."""
    for value in json_values(text).values:
        if isinstance(value, dict):
            for key in ("paraphrase", "question"):
                if isinstance(value.get(key), str):
                    return value[key].strip()
    return strip_fences(text).strip().strip("\"'").strip()


def selected(questions: list[Question], ratio: float, seed: int) -> set[str]:
    """The ids of round(ratio x n) questions, chosen by seeded hashes of their ids."""
    if not 0 < ratio <= 1:
        raise InvalidOption("ratio", f"must be in (0, 1], got {ratio}")
    ranked = sorted(questions, key=lambda q: seeded_key(seed, "paraphrase", q.id))
    return {q.id for q in ranked[:round(ratio * len(questions))]}


@dataclass
class ParaphraseSummary:
    selected: int
    asked: int  # distinct texts sent to the model in this run (the others were cached)
    accepted: int = 0
    rejected: Counter = field(default_factory=Counter)  # by kind of rejection


def paraphrase_questions(questions: list[Question], client: ChatClient, cache_path: Path, ratio: float,
                         seed: int, on_text: Callable[[], None] = lambda: None,
                         on_total: Callable[[int], None] = lambda n: None) -> tuple[list[Question], ParaphraseSummary]:
    """The questions with accepted paraphrases in place of their texts, and what happened."""
    chosen = selected(questions, ratio, seed)
    cache = {}
    for where, record in read_log(cache_path, repair=True).records:
        _check(record, CACHE_SPEC, where, "")
        cache[(record["model"], record["question"])] = record["paraphrase"]
    texts = sorted({q.question for q in questions if q.id in chosen})
    missing = [t for t in texts if (client.model, t) not in cache]
    on_total(len(missing))
    with AppendLog(cache_path) as log:
        for text in missing:
            messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": f"Question: {text}"}]
            rewrite = read_reply(client.complete(messages, REPLY_TOKENS).text)
            log.append([{"model": client.model, "question": text, "paraphrase": rewrite}])
            cache[(client.model, text)] = rewrite
            on_text()
    summary = ParaphraseSummary(selected=len(chosen), asked=len(missing))
    result = []
    for q in questions:
        if q.id in chosen:
            reason = rejection(q, cache[(client.model, q.question)])
            if reason is None:
                summary.accepted += 1
                q = replace(q, question=cache[(client.model, q.question)])
            else:
                summary.rejected[reason.partition(":")[0]] += 1
        result.append(q)
    return result, summary
