"""Functions of text: its keywords, whether and how often a keyword is one of its words (the word rule
of dsl/conventions.py, CONVENTIONS.md, Keywords), the values confusable with others (sharing a keyword:
CONVENTIONS.md, Confusable false premises), and its first sentence."""

from __future__ import annotations

import re

from qtc.dsl import types as T
from qtc.dsl.conventions import is_keyword, keyword_sql, words, words_sql
from qtc.dsl.ir.nodes import CARD_N
from qtc.dsl.ir.sql import combine, key_columns, key_match, pcol
from qtc.dsl.reference.values import Bag
from qtc.dsl.sql import ident, sql_string

from .record import Function

# The first sentence (CONVENTIONS.md, First sentence). A sentence ends at a run of '.', '!' or '?' and
# closing quotes or brackets (a run starts with a '.', '!' or '?', then has any of them), when the text ends there or goes on after whitespace with
# anything but a lowercase ASCII letter ("Wait... then look." and "e.g. the lamp" go on; "0.5" is no
# end, nothing follows the '.' but a digit); never at the '.' of an abbreviation below ("Mr. Smith").
# Blank text has no first sentence. The rule is written twice from these constants: as one RE2 pattern
# for SQL (`first_sentence_sql`) and as a left-to-right scan for the reference reading.
SENTENCE_WHITESPACE = " \t\n\r\f\v"
SENTENCE_TERMINATORS = ".!?"
SENTENCE_CLOSERS = "\"')]\u201d\u2019"
# "etc." is not here: before a capital it ends a sentence, before a lowercase word the sentence goes on.
ABBREVIATIONS = ("e.g", "i.e", "prof", "mrs", "mr", "ms", "dr", "st", "jr", "sr", "vs", "cf", "viz")


def _abbreviation_regex(lowercase_first: bool) -> str:
    """Any abbreviation with its final '.', at a word start; letters in either case (the first lowercase if asked)."""
    def letter(c: str, first: bool) -> str:
        return c if first and lowercase_first else f"[{c.upper()}{c}]"
    return r"\b(?:" + "|".join("".join(letter(c, i == 0) if c.isalpha() else re.escape(c) for i, c in enumerate(a))
                              + r"\." for a in ABBREVIATIONS) + ")"


# SENTENCE_WHITESPACE as the inside of an RE2 character class.
_WS = SENTENCE_WHITESPACE.encode("unicode_escape").decode()


def _first_sentence_regex() -> str:
    ws, marks = f"[{_WS}]", re.escape(SENTENCE_TERMINATORS + SENTENCE_CLOSERS)
    run = f"[{re.escape(SENTENCE_TERMINATORS)}][{marks}]*"
    abbreviation, lower_abbreviation = _abbreviation_regex(False), _abbreviation_regex(True)
    # A terminator run that ends nothing: a lowercase letter after whitespace, or any other character
    # right after it (taken with it, so that an abbreviation starting there is read as one).
    goes_on = f"{run}(?:{ws}+(?:{lower_abbreviation}|[a-z])|{abbreviation}|[^{_WS}{marks}])"
    # Every piece of the body tries an abbreviation first; no piece can consume a sentence end, so the
    # greedy body stops at the first one, or takes the whole text.
    body = f"(?:{abbreviation}|[^{re.escape(SENTENCE_TERMINATORS)}]|{goes_on})*"
    return f"^{ws}*({body}(?:{run})?)(?:{ws}+[^a-z{_WS}]|{ws}*$)"


FIRST_SENTENCE_REGEX = _first_sentence_regex()


def first_sentence_sql(text_sql: str) -> str:
    """`first_sentence` in DuckDB SQL over the SQL of a text: null for a null or blank text."""
    extracted = f"regexp_extract({text_sql}, {sql_string(FIRST_SENTENCE_REGEX)}, 1)"
    return f"nullif(regexp_replace({extracted}, {sql_string(f'[{_WS}]+$')}, ''), '')"


def first_sentence(text: str | None) -> str | None:
    """The reference reading of the rule: a scan from the left, sentence end by sentence end.

    >>> first_sentence('Mr. Smith said "Go north." That is odd.')
    'Mr. Smith said "Go north."'
    >>> first_sentence("My score is 0.5 points, i.e. low. Wait... then look.")
    'My score is 0.5 points, i.e. low.'
    >>> first_sentence("  ") is None
    True
    """
    if text is None:
        return None
    text = text.lstrip(SENTENCE_WHITESPACE)
    n, pos = len(text), 0
    while pos < n:
        skip = _abbreviation_at(text, pos)
        if skip:
            pos += skip
            continue
        if text[pos] not in SENTENCE_TERMINATORS:
            pos += 1
            continue
        end = pos
        while end < n and text[end] in SENTENCE_TERMINATORS + SENTENCE_CLOSERS:
            end += 1
        after = end
        while after < n and text[after] in SENTENCE_WHITESPACE:
            after += 1
        if after == n or (after > end and not "a" <= text[after] <= "z"):
            return text[:end]
        pos = after
    return text.rstrip(SENTENCE_WHITESPACE) or None


def _abbreviation_at(text: str, pos: int) -> int:
    """The length of the abbreviation (with its '.') that starts a word at `pos`, or 0."""
    if pos and (text[pos - 1].isascii() and (text[pos - 1].isalnum() or text[pos - 1] == "_")):
        return 0
    for abbreviation in ABBREVIATIONS:
        written = abbreviation + "."
        if text[pos:pos + len(written)].lower() == written and text[pos:pos + len(written)].isascii():
            return len(written)
    return 0


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


class Confusable(Function):
    name, arity = "confusable", (2,)
    usage = "confusable(rel.column, rel.column) -> the values of the first that share a keyword with a value of the second"

    def type(self, c, call, types):
        for position in (0, 1):
            if not self.need(c, call, position, isinstance(types[position], T.Bag)
                             and types[position].element in T.TEXTUAL, "a column of text (rel.column)", types[position]):
                return None
        return types[0]

    def lower(self, lo, call, row):
        # An equi-join on the keywords: each value's keywords against the like-values' keywords, so the
        # cost is the two sides' words, not their product.
        values = lo.bag(call.args[0], lo.keyed(lo.fp(call)))
        like = lo.domain(call.args[1])
        like_key = lo.node_key(like)
        like_words = lo.add("like_words", "bag", like_key,
                            f"SELECT DISTINCT {key_columns('l', like_key)}, w FROM (SELECT *, unnest({words_sql('v')}) "
                            f"AS w FROM {like}) l WHERE {keyword_sql('w')}", CARD_N, "keywords of the likes", fence=True)
        key = values.key
        sql = (f"SELECT DISTINCT {', '.join(['episode_id', *map(pcol, key)])}, v, s FROM (SELECT "
               f"{key_columns('c', key)}, {values.v} AS v, {values.s} AS s, unnest({words_sql(values.v)}) AS w "
               f"{values.frm.render()}) c SEMI JOIN {like_words} y ON {key_match('y', like_key)} AND y.w = c.w "
               f"WHERE {keyword_sql('c.w')}")
        return lo.add("confusable", "bag", key, sql, CARD_N, "values sharing a keyword", fence=True)

    def reference(self, ev, call, scope):
        values, like = (ev.value(a, scope) for a in call.args)
        like_words = {w for text in like.values() for w in words(text) if is_keyword(w)}
        return Bag(list(dict.fromkeys((v, s) for v, s in values.items
                                      if v is not None and any(is_keyword(w) and w in like_words for w in words(v)))))


class FirstSentence(Function):
    name, arity, usage = "first_sentence", (1,), "first_sentence(text)"

    def type(self, c, call, types):
        return T.STRING if self.text_arg(c, call, types) else None

    def lower(self, lo, call, row):
        text = lo.scalar(call.args[0], row)
        return combine(first_sentence_sql(text.sql), text)

    def reference(self, ev, call, scope):
        return first_sentence(ev.value(call.args[0], scope))


FUNCTIONS = (Words(), Mentions(), Occurrences(), Confusable(), FirstSentence())
