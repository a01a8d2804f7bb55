"""Frames: the screens of a Crafter episode, kept beside its trace as `<id>.frames.npz`.

The archive (NumPy's compressed .npz) holds one array, `frames`, of shape (n_steps + 1, 64, 64, 3) and
type uint8 (RGB): frame 0 is the screen before step 1, frame t the screen after step t, which is also
what the agent saw before step t+1; so frame t shows the state of step t's state block in a context.
Compressed, a daytime screen (mostly repeated textures) takes 0.4-0.9 KB and a night one (Crafter's
random noise) about 5.8 KB, against 12 KB raw (docs/trace-format.md has the measurements).

`qtc load` records where each episode's frames are in the table `episode_frames` (episode_id, path,
frames, height, width); an episode without frames has no row, and a store loaded before frames existed
has no table: both read as "no frames". `episode_frames` reads an episode's frames, `png_bytes` makes
one a PNG.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from qtc.errors import UserError
from qtc.files import atomic_path

from .format import SUFFIX

FRAMES_SUFFIX = ".frames.npz"
TABLE = "episode_frames"
_MEMBER = "frames.npy"  # the array's name inside the archive


def frames_path(trace_path: Path) -> Path:
    """Where the frames of the episode written to `trace_path` are kept."""
    trace_path = Path(trace_path)
    return trace_path.with_name(trace_path.name.removesuffix(SUFFIX) + FRAMES_SUFFIX)


def write_frames(trace_path: Path, frames: list[np.ndarray]) -> Path:
    """Write an episode's frames beside its trace, atomically (a reader sees the old archive or the new)."""
    path = frames_path(trace_path)
    with atomic_path(path) as temporary, open(temporary, "wb") as out:
        np.savez_compressed(out, frames=np.stack(frames).astype(np.uint8, copy=False))
        out.flush()
        os.fsync(out.fileno())
    return path


def remove_frames(trace_path: Path) -> None:
    """Remove frames left beside a trace by an earlier recording (a new one without frames replaces it)."""
    with contextlib.suppress(FileNotFoundError):
        frames_path(trace_path).unlink()


def _shape(path: Path) -> tuple[tuple[int, ...], np.dtype]:
    """The array's shape and type, read from its header without decompressing the frames; a UserError if
    the header claims more bytes than the archive holds (a header may claim 65,536 x 65,536 frames)."""
    try:
        with zipfile.ZipFile(path) as archive, archive.open(_MEMBER) as member:
            version = np.lib.format.read_magic(member)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read_header(member)
            stored = archive.getinfo(_MEMBER).file_size - member.tell()
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as error:
        raise UserError(f"{path}: not a frames archive ({error})") from None
    if math.prod(shape) * dtype.itemsize != stored:
        raise UserError(f"{path}: not a frames archive (its header says {shape} of {dtype}, {stored} bytes follow)")
    return shape, dtype


@dataclass(frozen=True)
class Frames:
    """Where an episode's frames are, and their size."""
    episode_id: str
    path: Path
    count: int
    height: int
    width: int


def find_frames(traces) -> list[Frames]:
    """The frames kept beside the given traces (format.TraceText), each checked against its trace: one
    RGB uint8 frame for the start and one per step."""
    found = []
    for trace in traces:
        path = frames_path(trace.path)
        if not path.exists():
            continue
        shape, dtype = _shape(path)
        expected = trace.header["n_steps"] + 1
        if len(shape) != 4 or shape[3] != 3 or dtype != np.uint8:
            raise UserError(f"{path}: expected an array of RGB frames (frames, height, width, 3) of uint8, "
                            f"got shape {shape} of {dtype}")
        if shape[0] != expected:
            raise UserError(f"{path}: holds {shape[0]} frames; its trace {trace.path} has "
                            f"{trace.header['n_steps']} steps, so {expected} frames (the start and each step)")
        found.append(Frames(trace.header["episode_id"], path.resolve(), shape[0], shape[1], shape[2]))
    return found


def record_frames(con: duckdb.DuckDBPyConnection, found: list[Frames]) -> None:
    """Record in the store where the frames are (the table is made even when there are none)."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (episode_id VARCHAR, path VARCHAR, frames BIGINT, "
                "height BIGINT, width BIGINT)")
    if found:
        con.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?)",
                        [(f.episode_id, str(f.path), f.count, f.height, f.width) for f in found])


def frames_file(con: duckdb.DuckDBPyConnection, episode_id: str) -> Path | None:
    """The frames archive of an episode, or None when it was recorded without frames."""
    try:
        row = con.execute(f"SELECT path FROM {TABLE} WHERE episode_id = ?", [episode_id]).fetchone()
    except (duckdb.CatalogException, duckdb.InvalidInputException):  # a store loaded before frames were
        # recorded (with no such table, DuckDB looks for a Python object of its name, and finds this module's
        # function episode_frames when called from here)
        return None
    return None if row is None else Path(row[0])


@functools.lru_cache(maxsize=4)
def _read(path: Path, modified: float) -> np.ndarray:
    _shape(path)  # the store names the file: its header is checked against its size before it is read
    with np.load(path) as archive:
        return archive["frames"]


def episode_frames(con: duckdb.DuckDBPyConnection, episode_id: str) -> np.ndarray:
    """Every frame of an episode (index t: the screen after step t, 0 the start); a clear error when the
    episode has none or its archive is gone."""
    path = frames_file(con, episode_id)
    if path is None:
        raise UserError(f"episode {episode_id!r} has no frames: record it with `qtc play crafter --frames` "
                        f"(they are kept beside the trace as <id>{FRAMES_SUFFIX}) and load it again")
    try:
        return _read(path, path.stat().st_mtime)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise UserError(f"{path}: cannot read the frames of episode {episode_id!r} ({error})") from None


def png_bytes(image: np.ndarray) -> bytes:
    """An RGB array as PNG bytes."""
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(image).save(out, format="PNG")
    return out.getvalue()

