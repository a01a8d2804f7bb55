"""Functions of text: its keywords, whether and how often a keyword is one of its words (the word rule
of dsl/conventions.py, CONVENTIONS.md, Keywords), and its first sentence."""

from __future__ import annotations

import re

from qtc.dsl import types as T
from qtc.dsl.conventions import is_keyword, keyword_sql, words, words_sql
from qtc.dsl.ir.nodes import CARD_N
from qtc.dsl.ir.sql import combine, key_columns, pcol
from qtc.dsl.reference.values import Bag
from qtc.dsl.sql import ident, sql_string

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

    def lower(self, lo, call, row):
        text, keyword = call.args[0], keyword_sql("w")
        table = lo.step_table_of(text)
        if table is not None:
            # A text column of a table with steps: its words are in the table's token index already.
            sql = f"SELECT DISTINCT episode_id, w AS v, NULL AS s FROM {lo.token_index(table, text.name)} WHERE {keyword}"
            return lo.add("words", "bag", (), sql, CARD_N, f"keywords of {text.base.name}.{text.name}", fence=True)
        inner = lo.bag(text)
        columns = ", ".join(["episode_id", *map(pcol, inner.key)])
        sql = (f"SELECT DISTINCT {columns}, w AS v, NULL AS s FROM (SELECT {key_columns('c', inner.key)}, "
               f"unnest({words_sql(inner.v)}) AS w {inner.frm.render()}) WHERE {keyword}")
        return lo.add("words", "bag", inner.key, sql, CARD_N, "keywords", fence=True)

    def reference(self, ev, call, scope):
        found = []
        for text in ev.value(call.args[0], scope).values():
            found += [w for w in words(text) if is_keyword(w) and w not in found]
        return Bag([(w, None) for w in found])


class Mentions(Function):
    name, arity, usage = "mentions", (2,), "mentions(text, keyword) -> whether the keyword is a word of the text"
    result = T.BOOLEAN
    # The SQL over the token index row `{n}` of (this row's step, the keyword), where the text is a column
    # of a table with one row per step; else over the text's words. Both give the same, nulls included.
    indexed = "CASE WHEN {text} IS NULL OR {word} IS NULL THEN NULL ELSE {n} IS NOT NULL END"
    plain = "list_contains({words}, lower({word}))"

    def type(self, c, call, types):
        return self.result if self.text_arg(c, call, types) and self.text_arg(c, call, types, 1) else None

    def lower(self, lo, call, row):
        lookup = lo.token_lookup(call.args[0], call.args[1], row)
        if lookup:
            n, word = lookup
            return combine(self.indexed.format(text=f"t.{ident(call.args[0].name)}", word=word.sql, n=n), word)
        text, word = lo.scalar(call.args[0], row), lo.scalar(call.args[1], row)
        return combine(self.plain.format(words=words_sql(text.sql), word=word.sql), text, word)

    def reference(self, ev, call, scope):
        text, keyword = (ev.value(a, scope) for a in call.args)
        return None if text is None or keyword is None else keyword.lower() in words(text)


class Occurrences(Mentions):
    name, usage = "occurrences", "occurrences(text, keyword) -> how many words of the text it is"
    result = T.INTEGER
    indexed = "CASE WHEN {text} IS NULL THEN NULL ELSE coalesce({n}, 0) END"
    plain = "len(list_filter({words}, lambda w: w = lower({word})))"

    def reference(self, ev, call, scope):
        text, keyword = (ev.value(a, scope) for a in call.args)
        return None if text is None or keyword is None else words(text).count(keyword.lower())


class FirstSentence(Function):
    name, arity, usage = "first_sentence", (1,), "first_sentence(text)"

    def type(self, c, call, types):
        return T.STRING if self.text_arg(c, call, types) else None

    def lower(self, lo, call, row):
        text = lo.scalar(call.args[0], row)
        return combine(f"coalesce(nullif(trim(regexp_extract({text.sql}, {sql_string(FIRST_SENTENCE_REGEX)}, 1)), ''), "
                       f"trim({text.sql}))", text)

    def reference(self, ev, call, scope):
        """The text up to its first sentence end, trimmed; the whole text if no sentence ends in it."""
        text = ev.value(call.args[0], scope)
        if text is None:
            return None
        end = _SENTENCE_END.search(text.lstrip())
        return (text.lstrip()[:end.end()] if end else text).strip()


FUNCTIONS = (Words(), Mentions(), Occurrences(), FirstSentence())
