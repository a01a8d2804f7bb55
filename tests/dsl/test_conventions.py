"""The word rule of CONVENTIONS.md (Keywords), defined once in dsl/conventions.py as Python and as SQL:
both readings agree on edge cases, and the compiled SQL agrees with the reference evaluator on them."""

import doctest

import duckdb
import pytest

from qtc.dsl import conventions
from qtc.dsl.conventions import is_keyword, keyword_sql, words, words_sql
from support.ground_truth import differences, library, reference_candidates, sql_candidates, store_of
from support.strategies import jericho_episode

TEXTS = [
    "Take the brass-lantern, then GO north 2x!",
    "\u212aeyboard here",  # KELVIN SIGN: lowercases to 'k', but is not an ASCII letter
    "\u0130stanbul",  # LATIN CAPITAL LETTER I WITH DOT ABOVE: lowercases to 'i' (with a combining dot in Python)
    "Caf\u00e9 na\u00efve",
    "room 1234 and 42nd",
    "",
    "  --  ",
    None,
]


def test_the_doctests_of_conventions_pass():
    failed, attempted = doctest.testmod(conventions)
    assert attempted and not failed


@pytest.mark.parametrize("text", TEXTS)
def test_the_sql_words_are_the_python_words(text):
    con = duckdb.connect()
    (sql_words,) = con.execute(f"SELECT {words_sql('?')}", [text]).fetchone()
    assert (sql_words or []) == list(words(text))


@pytest.mark.parametrize("text", TEXTS[:5])
def test_the_sql_keyword_filter_is_the_python_one(text):
    con = duckdb.connect()
    found = con.execute(f"SELECT list_filter({words_sql('?')}, lambda w: {keyword_sql('w')})", [text]).fetchone()[0]
    assert found == [w for w in words(text) if is_keyword(w)]


def test_words_are_split_before_they_are_lowercased():
    compiled = next(c for c in library() if c.id == "jericho.keyword_in_reason_step")
    store = store_of([jericho_episode([(("idle", "look"), "\u212aeyboard here", 0)])])
    assert not differences(sql_candidates(store.con, compiled, None), reference_candidates(store, compiled, None))
