"""The parser and checker under fuzzing: random mutations of the library's templates, and random soups
of the language's tokens, never make `qtc compile` raise; every failure is reported as positioned
errors (file:line:column, within the file), and whatever compiles, compiles to SQL.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples
from support.fuzzing import SOURCES, TOKENS, assert_reported, mutated

def mutated_sources() -> st.SearchStrategy:
    """A library file with one to four token-level mutations (fuzzing.mutated, which the deep run uses too)."""
    return st.tuples(st.sampled_from(SOURCES), st.randoms(use_true_random=False)).map(lambda drawn: mutated(*drawn))


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
