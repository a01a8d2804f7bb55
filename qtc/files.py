"""Atomic file writes: a reader sees the old file or the whole new one, never half of one; JSONL
lines, as every qtc output writes them; and the check that a file to read is a regular file.

The new file gets the permissions any other tool would give it (0666 less the umask); a temporary file
from `tempfile` alone would be 0600, unreadable to the rest of a group sharing the outputs.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterator

from qtc.errors import UserError


def _umask() -> int:
    mask = os.umask(0)  # the only way to read it; set straight back
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` to write to; on success it replaces `path`, else it is removed.

    A process killed outright (SIGKILL, a power cut) cannot remove its temporary file; its name holds the
    writer's process id, and the next write to `path` removes those of processes no longer running."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    os.close(handle)
    try:
        yield Path(temporary)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _remove_orphans(path: Path) -> None:
    """Remove the temporary files beside `path` left by writers that are gone (on this machine)."""
    for orphan in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = orphan.name[len(path.name) + 2:].split(".", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                orphan.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def write_text_atomic(path: Path, text: str) -> None:
    with atomic_path(path) as temporary, open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())


# Characters JSON leaves unescaped that other readers take for line breaks (Python's str.splitlines,
# JavaScript's line terminators): written raw, they would split a record in two there.
_RAW_LINE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def jsonl_line(value, sort_keys: bool = False) -> str:
    r"""One JSONL line, "\n" included: compact JSON, non-ASCII text as it is but for the line breaks
    other readers split at, escaped. Readers split JSONL at "\n" only.

    >>> line = jsonl_line({"reason": "go\u2028north"})
    >>> line.splitlines() == [line[:-1]], json.loads(line)["reason"] == "go\u2028north"
    (True, True)
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    for raw, escaped in _RAW_LINE_BREAKS.items():
        text = text.replace(raw, escaped)
    return text + "\n"


def require_regular_file(path: Path, what: str) -> None:
    """A UserError unless `path` (which exists) is a regular file: opening a FIFO waits for a writer (or,
    to append, for a reader), and a device never ends. `what` names the file expected ("a trace file")."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise UserError(f"{path}: not {what} (a folder, a FIFO or a device)")
