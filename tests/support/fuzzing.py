"""Helpers of the fuzz tests: `qtc compile` run on a text, and a trace written and loaded back."""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path

import duckdb

from qtc.cli import main
from qtc.dsl import schema
from qtc.runtime.trace.store import load_traces

from support.ground_truth import TEMPLATES
from support.strategies import jericho_episode, write_episodes

SOURCES = sorted(path.read_text() for path in TEMPLATES.rglob("*.qtpl"))
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?|\.\.|[=!<>]=|\s+|.', re.S)
TOKENS = sorted({t for source in SOURCES for t in TOKEN.findall(source) if not t.isspace()})
ERROR_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): error: ")


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


STEP_COLUMNS = [c.name for c in schema.JERICHO_STEPS.recorded_columns]


def loaded_steps(con) -> list[dict]:
    relation = con.sql(f"SELECT {', '.join(STEP_COLUMNS)} FROM jericho_steps ORDER BY step")
    return [dict(zip(relation.columns, row)) for row in relation.fetchall()]


def load_trace(path: Path):
    con = duckdb.connect()
    load_traces(con, [path])
    return con


def round_trip(reason: str) -> str:
    """A one-step episode with this reason, written by the recorder's writer and loaded back."""
    episode = jericho_episode([(("idle", "look"), reason, 0)])
    with tempfile.TemporaryDirectory() as directory:
        (path,) = write_episodes([episode], Path(directory))
        return loaded_steps(load_trace(path))[0]["reason"]
