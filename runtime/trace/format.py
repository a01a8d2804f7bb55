"""The trace file format (docs/trace-format.md): one episode per JSONL file, header line first.

Line 1 is the episode header (metadata, the state before the first action, the game's vocabulary);
every further line is one step, numbered from 1. The header is written last, once the episode has
ended, so a finished file is replaced into place atomically; while recording, lines stream to a
`.jsonl.partial` file that a crash leaves behind as a clearly marked partial episode.

The reader validates every line against its environment's field specs (its trace record: environment.py)
and raises a UserError naming the file, the line and the field, so that nothing malformed reaches the
store. For loading, `read_text` hands a file's step lines to DuckDB (runtime/trace/store.py), with the
specs translated for it (environment.duckdb_structure, `shape_fits`, `duckdb_checks_sql`); a file DuckDB
cannot vouch for goes back to read_episode (`read_text_carefully`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from qtc.dsl import schema
from qtc.errors import UserError

from qtc.files import jsonl_line, require_regular_file, write_text_atomic
from .registry import TRACE_ENVIRONMENTS

FORMAT = "qtc-trace"
FORMAT_VERSION = schema.FORMAT_VERSION
# What `qtc load` derives from traces of this format: raised whenever a change of qtc makes the derived
# tables of the same traces differ (2, in 0.8.0: room titles in introduced_items; 3, in 0.9.0: TextWorld's
# named_items; 4: TextWorld's sightings leave out what a locked container holds; 5: TextWorld's doors are in
# view from both rooms they link), so that a store or corpus made before is refused with a message, not read
# for questions of the old rules.
DERIVATIONS = 5


def derived_by_other_rules(source: object, remedy: str) -> UserError:
    """The refusal of a store or corpus whose stamp is not DERIVATIONS (`remedy`: how to make it again)."""
    return UserError(f"{source}: made by an earlier qtc, whose tables derived from the traces differ from this "
                     f"one's: {remedy}")
SUFFIX = ".jsonl"
PARTIAL_SUFFIX = ".jsonl.partial"

# A field spec is a type name ("int", "float", "bool", "str", "any"), ("list", spec),
# ("dict", spec) for a mapping of string keys to spec, ("null", spec) for an optional value, or a
# dict {field: spec} for a JSON object with exactly those fields required. Each environment's step line and
# header are its trace record's (environment.py, registry.py).
# Header fields added to format version 1 after its first traces, by environment, with what a trace
# recorded before one was added lacks: it reads with null there, and `qtc load` says so.
ADDED_HEADER_FIELDS = {name: env.added_header_fields for name, env in TRACE_ENVIRONMENTS.items()}

ENDINGS = ("done", "death", "step_limit", "walkthrough_end", "interrupted", "crashed")
# Endings of an episode cut short by the recording, not by the game: recorded again by the next run.
UNFINISHED = ("interrupted", "crashed")

_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
                    float: "number", type(None): "null"}


def _type_error(where: str, field: str, wanted: str, value) -> UserError:
    got = _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
    return UserError(f"{where}: field '{field}': expected {wanted}, got {got}")


def _check(value, spec, where: str, field: str) -> None:
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            raise _type_error(where, field, "object", value)
        for name, sub in spec.items():
            path = f"{field}.{name}" if field else name
            if name not in value:
                raise UserError(f"{where}: missing field '{path}'")
            _check(value[name], sub, where, path)
    elif isinstance(spec, tuple):
        kind, sub = spec
        if kind == "null":
            if value is not None:
                _check(value, sub, where, field)
        elif kind == "list":
            if not isinstance(value, list):
                raise _type_error(where, field, "array", value)
            if sub == "int" and all(type(item) is int for item in value) and (
                    not value or -2**63 <= min(value) and max(value) < 2**63):
                return  # the common case (a map's rows), without a call per item
            for i, item in enumerate(value):
                _check(item, sub, where, f"{field}[{i}]")
        else:  # dict
            if not isinstance(value, dict):
                raise _type_error(where, field, "object", value)
            for key, item in value.items():
                _check(item, sub, where, f"{field}.{key}")
    elif spec == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _type_error(where, field, "integer", value)
        if not -2**63 <= value < 2**63:
            raise UserError(f"{where}: field '{field}': integer out of range (64 bits)")
    elif spec == "float":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _type_error(where, field, "number", value)
        if not math.isfinite(value):
            raise UserError(f"{where}: field '{field}': {value} is not a finite number")
    elif spec == "bool":
        if not isinstance(value, bool):
            raise _type_error(where, field, "boolean", value)
    elif spec == "str":
        if not isinstance(value, str):
            raise _type_error(where, field, "string", value)
        if not value.isascii() and _SURROGATE.search(value):
            raise UserError(f"{where}: field '{field}': not valid Unicode (a lone surrogate)")


@dataclass
class Episode:
    path: Path
    header: dict
    steps: list[dict]


def _parse_line(text: str, where: str) -> dict:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"{where}: not valid JSON ({error.msg} at column {error.colno}); "
                        "the file may be truncated") from None
    except RecursionError:
        raise UserError(f"{where}: JSON nested too deeply to be a trace record") from None
    if not isinstance(record, dict):
        raise UserError(f"{where}: expected a JSON object")
    return record


def _check_header(header: dict, where: str) -> str:
    if header.get("format") != FORMAT:
        raise UserError(f"{where}: not a qtc trace header (field 'format' must be \"{FORMAT}\")")
    if header.get("partial"):
        raise UserError(f"{where}: partial recording (interrupted before its end); "
                        "record it again or delete it")
    version = header.get("format_version")
    if version != FORMAT_VERSION:
        raise UserError(f"{where}: field 'format_version': unsupported version {version!r} "
                        f"(this qtc reads version {FORMAT_VERSION})")
    env = header.get("env")
    if env not in schema.ENVS:
        raise UserError(f"{where}: field 'env': unknown environment {env!r} (expected one of "
                        f"{', '.join(schema.ENVS)})")
    record = TRACE_ENVIRONMENTS[env]
    for name in record.added_header_fields:
        header.setdefault(name, None)
    _check(header, record.header_spec, where, "")
    if header["ended_by"] not in ENDINGS:
        raise UserError(f"{where}: field 'ended_by': unknown ending {header['ended_by']!r}")
    record.check_header(header, where)
    return env


def _read_lines(path: Path, read: Callable[..., str]) -> list[str]:
    """The lines `read` (the file's text, or its first line) holds, split at "\n" only: qtc writes no other
    line break (qtc.files.jsonl_line), and a reason holding U+2028 stays one line."""
    if path.name.endswith(PARTIAL_SUFFIX):
        raise UserError(f"{path}: partial recording (interrupted before its end); "
                        "record it again or delete it")
    try:
        lines = read(encoding="utf-8").split("\n")
    except UnicodeDecodeError as error:
        raise _not_utf8(path, error) from None
    except OSError as error:
        raise UserError(f"{path}: cannot read trace: {error}") from None
    if lines[-1] == "":
        lines.pop()
    return lines


def _not_utf8(path: Path, error: UnicodeDecodeError) -> UserError:
    """The line and column of the first byte that is not UTF-8, found in the whole file (a text stream's
    error counts from the chunk it decoded)."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as whole:
        error = whole
    before = data[:error.start]
    line, column = before.count(b"\n") + 1, error.start - before.rfind(b"\n")
    return UserError(f"{path}:{line}: not UTF-8 text (byte 0x{data[error.start]:02x} at column {column}: "
                     f"{error.reason})")


def _header(path: Path, lines: list[str]) -> dict:
    if not lines:
        raise UserError(f"{path}:1: empty file, expected a trace header")
    header = _parse_line(lines[0], f"{path}:1")
    _check_header(header, f"{path}:1")
    return header


def read_header(path: Path) -> dict:
    """The header of one episode file, read and checked without reading its steps; a UserError names
    the fault as read_episode would."""
    path = Path(path)

    def first_line(encoding: str) -> str:
        with path.open(encoding=encoding) as file:
            return file.readline()
    return _header(path, _read_lines(path, first_line))


def read_episode(path: Path) -> Episode:
    """Read and validate one episode file; a UserError names the file, line and field at fault."""
    path = Path(path)
    lines = _read_lines(path, path.read_text)
    header = _header(path, lines)
    record = TRACE_ENVIRONMENTS[header["env"]]
    steps = []
    for number, text in enumerate(lines[1:], start=2):
        where = f"{path}:{number}"
        step = _parse_line(text, where)
        _check(step, record.step_spec, where, "")
        record.check_step(step, where)
        if step["step"] != len(steps) + 1:
            raise UserError(f"{where}: field 'step': expected {len(steps) + 1}, got {step['step']}")
        steps.append(step)
    if len(steps) != header["n_steps"]:
        raise UserError(f"{path}:1: field 'n_steps': header says {header['n_steps']} steps, "
                        f"the file holds {len(steps)} (truncated?)")
    return Episode(path, header, steps)


def trace_files(paths) -> tuple[list[Path], list[Path]]:
    """The complete episode files named by `paths` (files or folders), and the partial ones found."""
    complete, partial = [], []
    for path in map(Path, paths):
        if path.is_dir():
            complete += sorted(path.glob(f"*{SUFFIX}"))
            partial += sorted(path.glob(f"*{PARTIAL_SUFFIX}"))
        elif path.exists():
            complete.append(path)
        else:
            raise UserError(f"{path}: no such file or directory")
    for path in complete:
        require_regular_file(path, "a trace file")
    return complete, partial


# ---- the fast reader: files as text, their step lines read by DuckDB (runtime/trace/store.py) ----

# Line breaks that str.splitlines() (and so read_episode) also breaks lines at.
_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@dataclass
class TraceText:
    """A trace file as text: its header, read and checked, and its step lines, each a JSON object for
    DuckDB to read and check against its environment's step spec."""
    path: Path
    header: dict
    steps: list[str]


def read_text(path: Path) -> TraceText | None:
    """The trace as text, or None if something in it needs read_episode: to name what is wrong, or to
    read it the way Python's json does."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if path.name.endswith(PARTIAL_SUFFIX) or any(character in text for character in _LINE_BREAKS):
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    try:
        header = _parse_line(lines[0], f"{path}:1") if lines else None
        if header is not None:
            _check_header(header, f"{path}:1")
    except UserError:
        return None
    if header is None or header["n_steps"] != len(lines) - 1:
        return None
    return TraceText(path, header, lines[1:])


def read_text_carefully(path: Path) -> TraceText:
    """The trace read by read_episode (a UserError names the file, line and field at fault), its steps
    written back as Python read them."""
    episode = read_episode(path)
    return TraceText(episode.path, episode.header, [_dump(step) for step in episode.steps])


_SHAPES = {"int": {"UBIGINT", "BIGINT", "HUGEINT"}, "float": {"UBIGINT", "BIGINT", "HUGEINT", "DOUBLE"},
           "bool": {"BOOLEAN"}, "str": {"VARCHAR"}}


def shape_fits(shape, spec, in_list: bool = False) -> bool:
    """Whether DuckDB's json_structure of a value shows only the JSON types `spec` allows. Outside
    lists a shape is exact (NULL is a null); inside one it merges the elements (NULL: empty or all
    null, JSON: types that disagree), so nulls in lists are checked by `duckdb_checks_sql`."""
    if spec == "any":
        return True
    if isinstance(spec, tuple) and spec[0] == "null":
        return shape == "NULL" or shape_fits(shape, spec[1], in_list)
    if shape == "NULL":
        return in_list
    if isinstance(spec, dict):
        return isinstance(shape, dict) and all(shape_fits(shape[name], sub, in_list)
                                                for name, sub in spec.items() if name in shape)
    if isinstance(spec, tuple) and spec[0] == "list":
        return isinstance(shape, list) and shape_fits(shape[0], spec[1], True)
    if isinstance(spec, tuple):  # dict: an empty object's shape is JSON
        return (shape == "JSON" and not in_list) or (
            isinstance(shape, dict) and all(shape_fits(sub, spec[1], in_list) for sub in shape.values()))
    return isinstance(shape, str) and shape in _SHAPES[spec]


def duckdb_checks_sql(expression: str, spec, in_list: bool = False, depth: int = 0) -> str | None:
    """A DuckDB condition for what json_transform_strict and json_structure leave unchecked in a value
    read with duckdb_structure: no null inside a list where `spec` allows none, and no key twice in an
    object with any keys (Python's json keeps the last, DuckDB the first). None if nothing is left."""
    nullable = isinstance(spec, tuple) and spec[0] == "null"
    spec = spec[1] if nullable else spec
    below = None
    if isinstance(spec, dict):
        checks = [duckdb_checks_sql(f'{expression}."{name}"', sub, in_list, depth) for name, sub in spec.items()]
        below = " AND ".join(check for check in checks if check) or None
    elif isinstance(spec, tuple) and spec[0] == "list":
        element = f"e{depth}"
        inner = duckdb_checks_sql(element, spec[1], True, depth + 1)
        if inner:
            below = f"coalesce(list_bool_and(list_transform({expression}, lambda {element}: {inner})), true)"
    elif isinstance(spec, tuple):  # dict: kept as JSON text
        below = f"len(json_keys({expression})) = len(list_distinct(json_keys({expression})))"
        if spec[1] == "int":  # json_structure calls 2**63 UBIGINT, as it does 5: each value must fit 64 bits
            value = f"v{depth}"
            below += (f" AND coalesce(list_bool_and(list_transform(json_extract({expression}, '$.*'), "
                      f"lambda {value}: try_cast({value} AS BIGINT) IS NOT NULL)), true)")
    elif spec == "float":  # DuckDB reads 1e400 as infinity, and NaN as NaN: Python's reading refuses both
        below = f"isfinite({expression})"
    if nullable:
        return f"({expression} IS NULL OR {below})" if below else None
    checks = ([f"{expression} IS NOT NULL"] if in_list else []) + ([below] if below else [])
    return " AND ".join(checks) or None


def episode_id(game: str, agent: str, seed: int) -> str:
    """The identifier (and file stem) of an episode: one per game, agent and seed."""
    return f"{game}-{agent}-s{seed}"


def parse_episode_id(text: str, game: str) -> tuple[str, int] | None:
    """(agent, seed) of an identifier `episode_id` made for `game`, or None for another one. The game is
    given, not read: a game's name may hold hyphens as an agent's may (a TextWorld game of your own,
    `my-game.z8`).

    >>> parse_episode_id("zork1-walkthrough-s3", "zork1"), parse_episode_id("my-game-my-agent-s0", "my-game")
    (('walkthrough', 3), ('my-agent', 0))
    >>> parse_episode_id("handmade", "zork1")
    """
    match = re.fullmatch(re.escape(game) + r"-(?P<agent>.+)-s(?P<seed>-?\d+)", text)
    return (match["agent"], int(match["seed"])) if match else None


def episode_path(directory: Path, episode_id: str) -> Path:
    return Path(directory) / f"{episode_id}{SUFFIX}"


def is_complete(path: Path) -> bool:
    """Whether `path` holds a finished episode (one that ended, not one interrupted or crashed)."""
    if not path.exists():
        return False
    with path.open(encoding="utf-8") as stream:
        try:
            header = json.loads(stream.readline())
        except json.JSONDecodeError:
            return False
    return header.get("format_version") == FORMAT_VERSION and header.get("ended_by") not in UNFINISHED


def _dump(record: dict) -> str:
    return jsonl_line(record)[:-1]


class EpisodeWriter:
    """Streams steps to `<id>.jsonl.partial`; `finish(header)` writes `<id>.jsonl` atomically."""

    def __init__(self, directory: Path, episode_id: str, partial_header: dict):
        self.path = episode_path(directory, episode_id)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.partial_path = self.path.with_name(f"{episode_id}{PARTIAL_SUFFIX}")
        self._lines: list[str] = []
        self._stream = self.partial_path.open("w", encoding="utf-8")
        self._stream.write(_dump({"format": FORMAT, "format_version": FORMAT_VERSION, "partial": True,
                                  **partial_header}) + "\n")

    def write_step(self, record: dict) -> None:
        line = _dump(record)
        self._lines.append(line)
        self._stream.write(line + "\n")
        self._stream.flush()

    def finish(self, header: dict) -> Path:
        lines = [_dump({"format": FORMAT, "format_version": FORMAT_VERSION, **header}), *self._lines]
        write_text_atomic(self.path, "\n".join(lines) + "\n")
        self._stream.close()
        self.partial_path.unlink()
        return self.path
