"""QA set files: JSONL or Parquet with the same columns (docs/qa-format.md), written atomically.

In Parquet, `bindings` is a struct with a field for every parameter name in the file, null where a
question has no such parameter: what pyarrow (and so datasets) infers from the JSONL file. An Arrow map
would be closer to a JSON object, but the datasets library cannot load one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from qtc.errors import UserError
from qtc.files import atomic_path, jsonl_line, write_text_atomic

from .format import FIELDS

SUFFIXES = (".jsonl", ".parquet")

_COLUMN_TYPES = {
    "accepted_answers": pa.list_(pa.string()), "adversarial": pa.bool_(), "evidence": pa.list_(pa.int64()),
    "horizon": pa.int64(), "seed": pa.int64(), "options": pa.list_(pa.string()),
}


def check_output_path(path: Path) -> None:
    if path.suffix not in SUFFIXES:
        raise UserError(f"{path}: the output must end in .jsonl or .parquet")
    if path.is_dir():
        raise UserError(f"{path}: is a folder; name the output file")


def summary_path(out: Path) -> Path:
    """Where the summary of a QA set goes: beside it, `qa.jsonl` -> `qa.summary.json`."""
    return out.with_name(out.stem + ".summary.json")


def write_qa(path: Path, records: list[dict]) -> None:
    if path.suffix == ".parquet":
        _write_parquet(path, records)
    else:
        lines = (jsonl_line(record) for record in records)
        write_text_atomic(path, "".join(lines))


def write_summary(path: Path, summary: dict) -> None:
    write_text_atomic(path, json.dumps(summary, ensure_ascii=False, indent=2) + "\n")


def write_qa_set(path: Path, records: list[dict], summary: dict) -> Path:
    """A QA set and its summary, as a pair: the old summary is removed first, so a run killed between the
    two writes leaves a set without a summary, never beside the summary of another set. Returns the
    summary's path."""
    summary_file = summary_path(path)
    summary_file.unlink(missing_ok=True)
    write_qa(path, records)
    write_summary(summary_file, summary)
    return summary_file


def made_with(summary: dict) -> dict:
    """The options a QA set was generated with, from its summary (several horizons: their list)."""
    if "checkpoints" in summary:
        options = summary["checkpoints"][0]["options"]
        horizons = [checkpoint["options"]["horizon"] for checkpoint in summary["checkpoints"]]
    else:
        options, horizons = summary["options"], [summary["options"]["horizon"]]
    return {**{k: v for k, v in options.items() if k != "horizon"}, "horizons": horizons}


def _write_parquet(path: Path, records: list[dict]) -> None:
    names = sorted({name for record in records for name in record["bindings"]})
    if not names:
        raise UserError(f"{path}: no question has a parameter, and Parquet cannot hold an empty "
                        "bindings struct; write .jsonl instead")
    types = {**_COLUMN_TYPES, "bindings": pa.struct([(name, pa.string()) for name in names])}
    schema = pa.schema([(name, types.get(name, pa.string())) for name in FIELDS])
    table = pa.Table.from_pylist(records, schema=schema)
    import pyarrow.parquet as pq  # here: its import (a file system layer with SSL) is slow, and JSONL needs none

    with atomic_path(path) as temporary:
        pq.write_table(table, temporary)
