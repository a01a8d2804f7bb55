"""EMemBench's agent-loop logs (InternLM/EMemBench): each environment it ran has its own format, a record in
its own module (emembench_format.py: emembench_jericho.py, emembench_crafter.py), listed in
EMEMBENCH_FORMATS. EMemBench ran no TextWorld game: a TextWorld trace has no format to be written in.
docs/trace-format.md ("EMemBench logs") describes both formats.

`write_emembench` writes a qtc episode in its environment's format (EMemBench's own generator then reads
it); `find_logs` and `read_log` read them for `qtc import emembench` (emembench_import.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from qtc.errors import UserError
from qtc.files import jsonl_line, write_text_atomic
from qtc.runtime.trace.format import read_episode

from .emembench_crafter import CrafterFormat
from .emembench_format import EmembenchFormat, EmembenchLog
from .emembench_jericho import JerichoFormat

EMEMBENCH_FORMATS: dict[str, EmembenchFormat] = {fmt.env: fmt for fmt in (JerichoFormat(), CrafterFormat())}


def write_emembench(trace_path: Path, out_dir: Path) -> Path:
    """Write the episode of `trace_path` in its environment's EMemBench log format under `out_dir`; returns
    the log file. The run is named by the agent, so `qtc import emembench` gives the episode back under its
    own identifier."""
    episode = read_episode(trace_path)
    env = episode.header["env"]
    if env not in EMEMBENCH_FORMATS:
        raise UserError(f"{trace_path}: a {env} episode: EMemBench logs only "
                        f"{' and '.join(EMEMBENCH_FORMATS)} runs")
    path, rows = EMEMBENCH_FORMATS[env].write(Path(trace_path), episode.header, episode.steps, Path(out_dir))
    write_text_atomic(path, "".join(jsonl_line(row) for row in rows))
    return path


def format_of(path: Path) -> EmembenchFormat | None:
    """The format whose logs are named as `path` is, if any."""
    return next((fmt for fmt in EMEMBENCH_FORMATS.values() if fmt.is_log(path)), None)


def find_logs(directory: Path) -> list[Path]:
    """The EMemBench logs under `directory` (at any depth), in path order."""
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{directory}: no such folder")
    found = sorted(path for path in directory.rglob("*") if path.is_file() and format_of(path))
    if not found:
        layouts = ", ".join(fmt.layout for fmt in EMEMBENCH_FORMATS.values())
        raise UserError(f"{directory}: no EMemBench logs in it ({layouts})")
    return found


def field(row: dict, name: str, where: str):
    """The value of a dotted field of a row; a UserError naming the file, line and field if it is missing."""
    value = row
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            raise UserError(f"{where}: missing field '{name}'")
        value = value[part]
    return value


def read_log(path: Path) -> EmembenchLog:
    """Read and check one log (found by find_logs): every step row has the fields the import needs, steps
    run 1, 2, ...; a UserError names the file, the line and the field at fault."""
    path = Path(path)
    fmt = format_of(path)
    rows, lines = [], []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            raise UserError(f"{path}:{number}: not JSON ({error.msg} at column {error.colno})") from None
        if not isinstance(row, dict):
            raise UserError(f"{path}:{number}: expected a JSON object")
        if row.get("final") is True:
            continue
        where = f"{path}:{number}"
        for name in fmt.required:
            field(row, name, where)
        if row["step"] != len(rows) + 1:
            raise UserError(f"{where}: field 'step': expected {len(rows) + 1}, got {row['step']!r}")
        rows.append(row)
        lines.append(number)
    if not rows:
        raise UserError(f"{path}: no steps logged")
    log = EmembenchLog(path, fmt.env, fmt.run_name(path), rows, lines, None)
    fmt.check(log)
    return log
