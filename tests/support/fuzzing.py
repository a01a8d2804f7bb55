"""Helpers of the fuzz tests: the mutations of templates and the corruptions of traces (one seeded
`random.Random` drives each, so the quick Hypothesis tests and the deep run mutate alike), `qtc compile`
run on a text, and a trace written and loaded back."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

import duckdb

import qtc.cli
from qtc.cli import main
from qtc.dsl import schema
from qtc.runtime.trace.store import load_traces

from support.ground_truth import TEMPLATES
from support.strategies import LIST_EDITS, edited, jericho_episode, write_episodes

SOURCES = sorted(path.read_text() for path in TEMPLATES.rglob("*.qtpl"))
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?|\.\.|[=!<>]=|\s+|.', re.S)
TOKENS = sorted({t for source in SOURCES for t in TOKEN.findall(source) if not t.isspace()})
ERROR_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): error: ")
# Each template of the library alone, with the env its folder names: a mutant of one template compiles
# and generates in a fraction of the time its whole file takes.
BLOCKS = sorted((path.parent.name, block) for path in TEMPLATES.rglob("*.qtpl")
                for block in re.split(r"(?m)^(?=template )", path.read_text()) if block.startswith("template "))
TEMPLATE_EDITS = ("drop", "repeat", "swap", "replace", "insert", "cut")


def mutated(source: str, chance: random.Random) -> str:
    """`source` with one to four token-level mutations: drop, repeat, swap or replace a token (by one of
    the library's), insert a stray character, or cut the text short."""
    tokens = TOKEN.findall(source)
    for _ in range(chance.randint(1, 4)):
        if not tokens:
            break
        i, j = chance.randrange(len(tokens)), chance.randrange(len(tokens))
        kind = chance.choice(TEMPLATE_EDITS)
        if kind in LIST_EDITS:
            tokens = edited(tokens, kind, i, j)
        elif kind == "replace":
            tokens[i] = chance.choice(TOKENS)
        elif kind == "insert":
            tokens.insert(i, _stray_character(chance))
        else:
            tokens = tokens[:i]
    return "".join(tokens)


def _stray_character(chance: random.Random) -> str:
    """Mostly a character of the language's own, sometimes any character that UTF-8 can write."""
    if chance.random() < 0.5:
        return chance.choice("{}()[]<>=!|.,:;$\"'#-+*/%\n\t ")
    while True:
        character = chr(chance.choice([chance.randrange(0x80), chance.randrange(0x110000)]))
        if not 0xD800 <= ord(character) <= 0xDFFF:
            return character


# ---- corrupted traces ----

# Values of the wrong type, numbers beyond what the store holds, and text that is hard to print, as
# JSON text (some are not JSON Python writes: 1e400, NaN, a lone surrogate's escape).
WRONG_VALUES = ("null", "true", "false", "0", "-1", "1.5", '""', '"x"', "[]", "[null]", "{}", '{"a": 1}', "[1, 2]")
HUGE_NUMBERS = ("9223372036854775807", "9223372036854775808", "-9223372036854775809", "1" + "0" * 40, "1e308",
                "1e400", "-1e400", "NaN", "-0.0", "4294967296", "2147483648")
HOSTILE_TEXT = (r"\u0000", r"\ud800", r"\udfff x", "\u202e", "\ufeff", "\u2028", "\u0085", "e\u0301",
                "\U0001F600", r"\ud83d\ude00", "{{ x }}", "{% raw %}", "%s%n", "'; DROP TABLE episodes; --",
                r"\\", r"\n", "\r", "x" * 1000)
TRACE_CORRUPTIONS = ("flip", "cut", "drop", "repeat", "swap", "wrong_type", "huge", "nudge", "nest", "unicode",
                     "missing", "extra", "repeat_element", "duplicate_key")


def corrupted(data: bytes, chance: random.Random) -> tuple[str, bytes]:
    """A trace file's bytes with one corruption, and its kind: bytes flipped, the file cut short, a line
    dropped, repeated or swapped, or within a line's JSON a value replaced (a wrong type, a huge number,
    a number moved by a little, an array nested deep, hostile text), a field removed or added, an array
    element repeated, or a key given twice."""
    kind = chance.choice(TRACE_CORRUPTIONS)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    i, j = chance.randrange(len(lines)), chance.randrange(len(lines))
    if kind == "flip":
        flipped = bytearray(data)
        for _ in range(chance.randint(1, 3)):
            flipped[chance.randrange(len(flipped))] ^= chance.randint(1, 255)
        return kind, bytes(flipped)
    if kind == "cut":
        return kind, data[:chance.randrange(len(data))]
    if kind in LIST_EDITS:
        return kind, b"\n".join(edited(lines, kind, i, j)) + b"\n"
    lines[i] = _corrupted_line(json.loads(lines[i]), kind, chance).encode("utf-8")
    return kind, b"\n".join(lines) + b"\n"


def _corrupted_line(record: dict, kind: str, chance: random.Random) -> str:
    """One JSON line changed by `kind`; values that Python's json cannot write are spliced in as text."""
    places = list(_places(record, ()))
    if kind == "nudge":
        places = [(p, v) for p, v in places if type(v) in (int, float)] or places
    elif kind == "repeat_element":
        places = [(p, v) for p, v in places if isinstance(v, list) and v] or places
    path, value = chance.choice(places)
    *parent_path, key = path
    parent = _at(record, parent_path)
    spliced = None  # JSON text to put in place of the value
    if kind == "missing" or (kind in ("extra", "duplicate_key") and not isinstance(parent, dict)):
        del parent[key]
    elif kind == "extra":
        parent[f"extra_{chance.randrange(3)}"] = value
    elif kind == "repeat_element" and isinstance(value, list) and value:
        value.insert(chance.randrange(len(value) + 1), json.loads(json.dumps(chance.choice(value))))
    elif kind == "nudge" and type(value) in (int, float):
        parent[key] = value + chance.choice((-2, -1, 1, 2, 7, -value - 1, 2**62))
    elif kind == "duplicate_key":
        spliced = json.dumps(chance.choice((value, None, 0, "x")))
    else:
        spliced = {"huge": lambda: chance.choice(HUGE_NUMBERS),
                   "nest": lambda: "[" * (depth := chance.choice((64, 1000, 100_000))) + "]" * depth,
                   "unicode": lambda: '"' + "".join(chance.choices(HOSTILE_TEXT, k=chance.randint(1, 3))) + '"',
                   }.get(kind, lambda: chance.choice(WRONG_VALUES))()
    if spliced is None:
        return json.dumps(record, ensure_ascii=False)
    marker = "\x00qtc-fuzz\x00"
    if kind == "duplicate_key":  # the key given twice: the value as written, then another
        parent[key] = marker
        name = json.dumps(key)
        text = json.dumps(record, ensure_ascii=False)
        return text.replace(f"{name}: {json.dumps(marker)}", f"{name}: {json.dumps(value)}, {name}: {spliced}", 1)
    parent[key] = marker
    return json.dumps(record, ensure_ascii=False).replace(json.dumps(marker), spliced, 1)


def _places(value, path: tuple):
    """(path, value) of every value inside a JSON record, its fields and array elements."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield (*path, key), item
        yield from _places(item, (*path, key))


def _at(record, path):
    for key in path:
        record = record[key]
    return record


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


def unplaced_errors(stderr: str, text: str) -> list[str]:
    """The error lines of `qtc compile`'s stderr that do not name a place within `text` (file:line:column)
    or do not quote that line of `text` below, or a placeholder if there is no error line at all. Lines
    are counted as qtc reads the file: "\r\n", "\r" and "\n" each end one (and nothing else: not U+2028,
    a form feed or U+001C, where Python's splitlines would break)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    printed = stderr.split("\n")
    errors = [(line, printed[i + 1] if i + 1 < len(printed) else "") for i, line in enumerate(printed)
              if ": error: " in line]
    unplaced = []
    for line, quoted in errors:
        match = ERROR_LINE.match(line)
        number = int(match["line"]) if match else 0
        if not (match and 1 <= number <= len(lines) and int(match["column"]) >= 1
                and quoted == f" {number} | {lines[number - 1]}"):
            unplaced.append(line)
    return unplaced if errors else ["(no error line)"]


def grammar_refuses(text: str) -> str | None:
    """Lark's own error for `text` parsed whole by qtc's grammar (what the parser's recovery must also
    find), or None if the grammar takes it."""
    from lark.exceptions import UnexpectedInput

    from qtc.dsl.parse import _parser

    try:
        _parser().parse(text.replace("\r\n", "\n").replace("\r", "\n"))
    except UnexpectedInput as error:
        return str(error).split("\n")[0]
    except RecursionError:  # nested past Python's recursion: qtc refuses it as too deep
        return "nested too deeply"
    return None


def assert_reported(text: str) -> None:
    code, stderr, _ = compile_text(text)
    assert code in (0, 1, 2), code
    if code == 1:
        assert not unplaced_errors(stderr, text), stderr
    if code == 2:  # a file with no template at all
        assert "no .qtpl templates found" in stderr or "error:" in stderr, stderr
    if code == 0:
        assert grammar_refuses(text) is None, f"compiled, but the grammar refuses it: {grammar_refuses(text)}"


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


# ---- running qtc as a user would, and telling a refusal from a traceback ----

@dataclass
class Outcome:
    """What one qtc command did: its exit code and stderr, or the traceback that escaped it."""
    code: int | None
    stderr: str
    traceback: str | None = None  # "<exception type> at <file>:<line>", the innermost frame of qtc's own


def run_in_process(argv: list[str]) -> Outcome:
    """`qtc ARGV` through the command line's own code path, in this process (fast); an exception that
    escapes it is what a user would have seen as a traceback."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse
            code = exit_.code
        except Exception as error:  # noqa: BLE001 (the escape is the finding)
            return Outcome(None, err.getvalue(), _traceback_place(error))
    return Outcome(code, err.getvalue())


def run_subprocess(argv: list[str]) -> Outcome:
    """`qtc ARGV` as a separate process, the console script a user runs: its exit code and stderr."""
    done = subprocess.run([str(Path(sys.executable).with_name("qtc")), *argv], capture_output=True, text=True,
                          timeout=600)
    trace = "Traceback (most recent call last)" in done.stderr
    return Outcome(done.returncode, done.stderr, done.stderr.strip().splitlines()[-1] if trace else None)


def _traceback_place(error: BaseException) -> str:
    own = [frame for frame in traceback.extract_tb(error.__traceback__)
           if QTC_SOURCE in Path(frame.filename).parents and QTC_SOURCE / "tests" not in Path(frame.filename).parents]
    frame = own[-1] if own else traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__} at {Path(frame.filename).name}:{frame.lineno}"


QTC_SOURCE = Path(qtc.cli.__file__).resolve().parent.parent  # the repository (qtc/ is its command line)


_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def message_shape(message: str, path: Path | str) -> str:
    """A refusal with its file, numbers and quoted values masked: refusals of one kind share a shape."""
    return _VARYING.sub("_", message.replace(str(path), "FILE")).strip()
