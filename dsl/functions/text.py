"""Functions of text: its keywords, whether and how often a keyword is one of its words (the word rule
of dsl/conventions.py, CONVENTIONS.md, Keywords), and its first sentence."""

from __future__ import annotations

import re

from qtc.dsl import types as T
from qtc.dsl.conventions import is_keyword, keyword_sql, words, words_sql
from qtc.dsl.reference.values import Bag
from qtc.dsl.sql import sql_string

from .record import Function

FIRST_SENTENCE_REGEX = r"^\s*([^.!?]*[.!?]+)(\s|$)"
# The reference reading: a sentence ends at a run of '.', '!' or '?' followed by whitespace or the end.
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")


class Words(Function):
    name, arity, usage = "words", (1,), "words(relation.text_column) -> the keywords in it"

    def type(self, c, call, types):
        if not self.bag_arg(c, call, types) or not self.need(c, call, 0, types[0].element in T.TEXTUAL, "text",
                                                             types[0]):
            return None
        return T.Bag(T.KEYWORD)

    def sql(self, cx, call, row):
        q, r = cx.alias(), cx.alias()
        return (f"SELECT DISTINCT {r}.w AS v, NULL AS s FROM (SELECT unnest({words_sql(q + '.v')}) AS w "
                f"FROM ({cx.bag(call.args[0])}) {q}) {r} WHERE {keyword_sql(r + '.w')}")

    def reference(self, ev, call, scope):
        found = []
        for text in ev.value(call.args[0], scope).values():
            found += [w for w in words(text) if is_keyword(w) and w not in found]
        return Bag([(w, None) for w in found])


class Mentions(Function):
    name, arity, usage = "mentions", (2,), "mentions(text, keyword) -> whether the keyword is a word of the text"
    result = T.BOOLEAN

    def type(self, c, call, types):
        return self.result if self.text_arg(c, call, types) and self.text_arg(c, call, types, 1) else None

    def sql(self, cx, call, row):
        text, keyword = (cx.scalar(a, row) for a in call.args)
        return f"list_contains({words_sql(text)}, lower({keyword}))"

    def reference(self, ev, call, scope):
        text, keyword = (ev.value(a, scope) for a in call.args)
        return None if text is None or keyword is None else keyword.lower() in words(text)


class Occurrences(Mentions):
    name, usage = "occurrences", "occurrences(text, keyword) -> how many words of the text it is"
    result = T.INTEGER

    def sql(self, cx, call, row):
        text, keyword = (cx.scalar(a, row) for a in call.args)
        return f"len(list_filter({words_sql(text)}, lambda w: w = lower({keyword})))"

    def reference(self, ev, call, scope):
        text, keyword = (ev.value(a, scope) for a in call.args)
        return None if text is None or keyword is None else words(text).count(keyword.lower())


class FirstSentence(Function):
    name, arity, usage = "first_sentence", (1,), "first_sentence(text)"

    def type(self, c, call, types):
        return T.STRING if self.text_arg(c, call, types) else None

    def sql(self, cx, call, row):
        text = cx.scalar(call.args[0], row)
        return (f"coalesce(nullif(trim(regexp_extract({text}, {sql_string(FIRST_SENTENCE_REGEX)}, 1)), ''), "
                f"trim({text}))")

    def reference(self, ev, call, scope):
        """The text up to its first sentence end, trimmed; the whole text if no sentence ends in it."""
        text = ev.value(call.args[0], scope)
        if text is None:
            return None
        end = _SENTENCE_END.search(text.lstrip())
        return (text.lstrip()[:end.end()] if end else text).strip()


FUNCTIONS = (Words(), Mentions(), Occurrences(), FirstSentence())
