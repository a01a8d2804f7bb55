"""A JSONL file that grows one whole line at a time, for results that arrive over a long run.

Records are appended as they arrive and flushed to disk (fsync) after every batch, so a crash or a
Ctrl-C loses at most the batch under way. A crash in the middle of a write can leave a last line with
no newline: reading the log for a resumed run (`repair=True`) keeps that line if it is a whole JSON
object (and ends it), and cuts it off otherwise; every other reader ignores it and says so.
"""

from __future__ import annotations

from qtc.files import jsonl_line
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from qtc.runtime.trace.format import _parse_line


@dataclass
class LogContents:
    records: list[tuple[str, dict]] = field(default_factory=list)  # (file:line, record)
    partial_line: int | None = None  # the number of a half-written last line, if there was one


def _whole_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def read_log(path: Path, *, repair: bool = False) -> LogContents:
    """The records of `path` (none if it does not exist); malformed whole lines are a UserError."""
    path = Path(path)
    if not path.exists():
        return LogContents()
    data = path.read_bytes()
    complete, _, tail = data.rpartition(b"\n")
    contents = LogContents()
    if tail.strip():
        contents.partial_line = complete.count(b"\n") + 2 if complete else 1
        if repair:
            with path.open("r+b") as stream:
                if _whole_object(tail.decode("utf-8", "replace")):
                    stream.seek(0, os.SEEK_END)
                    stream.write(b"\n")
                    complete = data
                else:
                    stream.truncate(len(complete) + 1 if complete else 0)
                stream.flush()
                os.fsync(stream.fileno())
    for number, line in enumerate(complete.decode("utf-8").split("\n"), start=1):
        if line.strip():
            where = f"{path}:{number}"
            contents.records.append((where, _parse_line(line, where)))
    return contents


class AppendLog:
    """Appends records to a JSONL file, durably, one batch at a time."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
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
