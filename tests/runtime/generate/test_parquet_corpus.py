"""`qtc load --parquet DIR`: the tables as Parquet partitioned by game and episode, read in place by
`qtc generate` (the bytes of the trace files), `qtc sql` and DuckDB itself; written whole, never over
an existing folder.
"""

from __future__ import annotations

import shutil

import duckdb
import pytest

from support.recordings import SMALL_RUN_FLAGS
from qtc.cli import main


def test_a_parquet_corpus_is_read_in_place_as_the_traces_are(tmp_path, small_traces, one_process_output, capsys):
    corpus = tmp_path / "corpus"
    assert main(["load", *map(str, small_traces), "--parquet", str(corpus)]) == 0
    episodes = sorted(path.stem for path in small_traces)
    steps = corpus / "crafter_steps" / "game=crafter"
    assert sorted(p.name for p in steps.iterdir()) == [f"episode_id={e}" for e in episodes if e.startswith("crafter")]
    assert sorted(p.name for p in (corpus / "vocab").iterdir()) == ["game=crafter", "game=zork1"]

    out = tmp_path / "qa.jsonl"
    assert main(["generate", "--traces", str(corpus), "--out", str(out), *SMALL_RUN_FLAGS]) == 0
    assert (out.read_bytes(), out.with_name("qa.summary.json").read_bytes()) == one_process_output

    capsys.readouterr()
    assert main(["sql", "SELECT count(*) AS episodes FROM episodes", str(corpus)]) == 0
    assert "6" in capsys.readouterr().out
    files = str(corpus / "jericho_steps" / "**" / "*.parquet")
    by_episode = duckdb.sql(f"SELECT episode_id, count(*) FROM read_parquet('{files}', hive_partitioning = true) "
                            "GROUP BY ALL ORDER BY 1").fetchall()
    assert by_episode == [(e, 15) for e in episodes if e.startswith("zork1")]


def test_a_corpus_is_never_written_over_an_existing_folder(tmp_path, crafter_trace_dir, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    assert main(["load", str(crafter_trace_dir), "--parquet", str(corpus)]) == 2
    assert capsys.readouterr().err == (f"qtc load: error: {corpus}: already exists; give a new folder "
                                       "(a corpus is written whole)\n")
    assert not any(corpus.iterdir())


def _damaged(corpus, damage: str) -> None:
    partitions = sorted((corpus / "crafter_steps" / "game=crafter").iterdir())
    if damage == "missing":
        shutil.rmtree(partitions[0])
    elif damage == "repeated":
        shutil.copytree(partitions[0], partitions[0].with_name(partitions[0].name + "_copy"))
    elif damage == "cut":
        (data,) = partitions[0].glob("*.parquet")
        data.write_bytes(data.read_bytes()[:100])
    else:  # foreign: Parquet of another table
        import pyarrow as pa
        import pyarrow.parquet as pq

        (data,) = partitions[0].glob("*.parquet")
        pq.write_table(pa.table({"x": [1, 2]}), data)


@pytest.mark.parametrize("damage, message", [
    ("missing", "holds 0 rows, written with"), ("repeated", "a partition is missing or repeated"),
    ("cut", "not the Parquet qtc wrote: Invalid Input Error"), ("foreign", "not the Parquet qtc wrote: Binder Error")])
def test_a_corpus_with_a_partition_lost_repeated_or_corrupted_is_refused(tmp_path, crafter_trace_dir, capsys,
                                                                          damage, message):
    """Issue 32, items 6 and 10: the QA set changed silently, or DuckDB's errors came out as tracebacks."""
    corpus = tmp_path / "corpus"
    assert main(["load", str(crafter_trace_dir), "--parquet", str(corpus)]) == 0
    _damaged(corpus, damage)
    capsys.readouterr()
    assert main(["generate", "--traces", str(corpus), "--out", str(tmp_path / "qa.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"qtc generate: error: {corpus / 'crafter_steps'}: ") and message in err, err
    assert len(err.splitlines()) == 1
