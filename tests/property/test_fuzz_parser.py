"""The parser and checker under fuzzing: random mutations of the library's templates, and random soups
of the language's tokens, never make `qtc compile` raise; every failure is reported as positioned
errors (file:line:column, within the file), and whatever compiles, compiles to SQL.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples
from support.fuzzing import SOURCES, TOKEN, TOKENS, assert_reported
from support.strategies import LIST_EDITS, edited

@st.composite
def mutated_sources(draw) -> str:
    """A library file with one to four token-level mutations: drop, repeat, swap or replace a token,
    insert a stray character, or cut the file short."""
    tokens = TOKEN.findall(draw(st.sampled_from(SOURCES)))
    for _ in range(draw(st.integers(1, 4))):
        i, j = draw(st.integers(0, len(tokens) - 1)), draw(st.integers(0, len(tokens) - 1))
        kind = draw(st.sampled_from([*LIST_EDITS, "replace", "insert", "cut"]))
        if kind in LIST_EDITS:
            tokens = edited(tokens, kind, i, j)
        elif kind == "replace":
            tokens[i] = draw(st.sampled_from(TOKENS))
        elif kind == "insert":
            tokens.insert(i, draw(st.characters(codec="utf-8", exclude_categories=["Cs"])))
        else:
            tokens = tokens[:i]
        if not tokens:
            break
    return "".join(tokens)


token_soups = st.lists(st.sampled_from(TOKENS) | st.sampled_from([" ", "\n", "{", "}", "template x {"]),
                       max_size=60).map(" ".join)


@examples(25)
@given(mutated_sources())
def test_mutated_templates_get_positioned_errors(text):
    assert_reported(text)


@examples(25)
@given(token_soups)
def test_token_soups_get_positioned_errors(text):
    assert_reported(text)
