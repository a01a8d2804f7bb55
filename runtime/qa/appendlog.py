"""A JSONL file that grows one whole line at a time, for results that arrive over a long run.

Records are appended as they arrive and flushed to disk (fsync) after every batch, so a crash or a
Ctrl-C loses at most the batch under way. A crash in the middle of a write can leave a last line with
no newline: reading the log for a resumed run (`repair=True`) keeps that line if it is a whole JSON
object (and ends it), and cuts it off otherwise; every other reader ignores it and says so. The repair
writes only after every line has been read and checked: a file that is not such a log is refused as it
is, never cut.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from qtc.errors import UserError
from qtc.files import jsonl_line, require_regular_file

from qtc.runtime.trace.format import _parse_line


@dataclass
class LogContents:
    records: list[tuple[str, dict]] = field(default_factory=list)  # (file:line, record)
    partial_line: int | None = None  # the number of a half-written last line, if there was one


def _whole_object(text: str) -> dict | None:
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def read_log(path: Path, *, repair: bool = False,
             check: Callable[[dict, str], None] = lambda record, where: None) -> LogContents:
    """The records of `path` (none if it does not exist), each passed to `check` (which raises a
    UserError for a record that does not belong); malformed whole lines are a UserError. With `repair`,
    a half-written last line is mended once every line has passed."""
    path = Path(path)
    if not path.exists():
        return LogContents()
    require_regular_file(path, "a JSONL file")
    data = path.read_bytes()
    complete, _, tail = data.rpartition(b"\n")
    try:
        lines = complete.decode("utf-8").split("\n")
    except UnicodeDecodeError as error:
        line = complete[:error.start].count(b"\n") + 1
        raise UserError(f"{path}:{line}: not UTF-8 text (byte {error.object[error.start]:#04x})") from None
    contents = LogContents()
    for number, line in enumerate(lines, start=1):
        if line.strip():
            where = f"{path}:{number}"
            record = _parse_line(line, where)
            check(record, where)
            contents.records.append((where, record))
    if not tail.strip():
        return contents
    number = complete.count(b"\n") + 2 if complete else 1
    contents.partial_line = number
    if repair:
        last = _whole_object(tail.decode("utf-8", "replace"))
        if last is not None:
            check(last, f"{path}:{number}")
        with path.open("r+b") as stream:
            if last is not None:
                stream.seek(0, os.SEEK_END)
                stream.write(b"\n")
                contents.records.append((f"{path}:{number}", last))
            else:
                stream.truncate(len(complete) + 1 if complete else 0)
            stream.flush()
            os.fsync(stream.fileno())
    return contents


class AppendLog:
    """Appends records to a JSONL file, durably, one batch at a time."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            require_regular_file(self.path, "a JSONL file")
        self._stream = self.path.open("a", encoding="utf-8")

    def append(self, records: list[dict]) -> None:
        # One write per batch: a crash cuts at most the last line short, which read_log repairs.
        self._stream.write("".join(jsonl_line(r)
                                   for r in records))
        self._stream.flush()
        os.fsync(self._stream.fileno())

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> "AppendLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
