"""The parser and checker under fuzzing: random mutations of the library's templates, and random soups
of the language's tokens, never make `qtc compile` raise; every failure is reported as positioned
errors (file:line:column, within the file), and whatever compiles, compiles to SQL.
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path

from ground_truth import TEMPLATES
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_profiles import examples
from strategies import LIST_EDITS, edited

from qtc.cli import main

SOURCES = sorted(path.read_text() for path in TEMPLATES.rglob("*.qtpl"))
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?|\.\.|[=!<>]=|\s+|.', re.S)
TOKENS = sorted({t for source in SOURCES for t in TOKEN.findall(source) if not t.isspace()})
ERROR_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): error: ")


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


def compile_text(text: str) -> tuple[int, str, int]:
    """Run `qtc compile` on `text` as a crafter template file; (exit code, stderr, number of lines)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "crafter" / "fuzzed.qtpl"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(["compile", str(path)])
    return code, err.getvalue(), text.count("\n") + 1


def assert_reported(text: str) -> None:
    code, stderr, lines = compile_text(text)
    assert code in (0, 1, 2), code
    if code == 1:
        errors = [ERROR_LINE.match(line) for line in stderr.splitlines() if ": error: " in line]
        assert errors and all(errors), stderr
        for error in errors:
            assert 1 <= int(error["line"]) <= lines and int(error["column"]) >= 1, error.group(0)
    if code == 2:  # a file with no template at all
        assert "no .qtpl templates found" in stderr or "error:" in stderr, stderr


@examples(25)
@given(mutated_sources())
def test_mutated_templates_get_positioned_errors(text):
    assert_reported(text)


@examples(25)
@given(token_soups)
def test_token_soups_get_positioned_errors(text):
    assert_reported(text)
