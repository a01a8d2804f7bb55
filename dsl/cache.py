"""What qtc keeps between runs in the user's cache folder, so that a process need not redo it: Crafter's
game data (crafter_data.py) and compiled libraries (library.py, cached_library), each in a file named by
the hash of everything it was made from. A cache file is only ever a copy of what qtc computes again
when it is missing, unreadable or stale, so it is written atomically and any failure to read or write it
is ignored. The folder is $QTC_CACHE_DIR, else $XDG_CACHE_HOME/qtc, else ~/.cache/qtc; QTC_CACHE_DIR set
to an empty value keeps nothing.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def folder() -> Path | None:
    """The cache folder, or None when caching is off."""
    chosen = os.environ.get("QTC_CACHE_DIR")
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "qtc"


def digest(*parts: bytes | str) -> str:
    """A hex digest of the parts, each length-prefixed (so that no two lists of parts share one)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()[:32]


def read(name: str) -> bytes | None:
    """The cache file `name`, or None if there is none (or no cache, or it cannot be read)."""
    place = folder()
    if place is None:
        return None
    try:
        return (place / name).read_bytes()
    except OSError:
        return None


def write(name: str, data: bytes) -> None:
    """Keep `data` as the cache file `name` (atomically: a reader sees the whole file or none)."""
    place = folder()
    if place is None:
        return
    try:
        place.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=place, prefix=f".{name}.")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, place / name)
    except OSError:
        return
