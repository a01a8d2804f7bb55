"""A store is shared like a package (runtime/trace/lockdown.py): the SQL a DuckDB file brings never reads
a local file into questions, reports or exports, never loads or downloads an extension, and a view or a
macro standing in for qtc's tables or functions is refused by name; a Parquet corpus's marker names qtc's
tables only. Every refusal is one line, exit 2."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading

import duckdb
import pytest

from qtc.cli import main
from qtc.runtime.trace.parquet import MARKER

SECRET = "the contents of a private file"


@pytest.fixture(scope="module")
def qtc_store(tmp_path_factory, crafter_trace_dir):
    path = tmp_path_factory.mktemp("store") / "traces.duckdb"
    assert main(["load", str(crafter_trace_dir), "--db", str(path)]) == 0
    return path


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text(SECRET)
    return path


def hostile_copy(qtc_store, tmp_path, *statements: str):
    path = tmp_path / "shared.duckdb"
    shutil.copy(qtc_store, path)
    with duckdb.connect(str(path)) as con:
        for statement in statements:
            con.execute(statement)
    return path


def refused(capsys, argv: list[str], *words: str) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and all(word in err for word in words), err
    assert SECRET not in captured.out + captured.err
    return err


def test_a_view_named_like_a_table_that_reads_a_local_file_is_refused(qtc_store, tmp_path, secret, capsys):
    store = hostile_copy(qtc_store, tmp_path, "ALTER TABLE episodes RENAME TO qtc_episodes",
                         f"CREATE VIEW episodes AS SELECT * REPLACE (content AS game) FROM qtc_episodes, "
                         f"read_text('{secret}')")
    for argv in (["sql", "SELECT game FROM episodes", str(store)],
                 ["generate", "--traces", str(store), "--out", str(tmp_path / "qa.jsonl")],
                 ["load", str(tmp_path / "none"), "--db", str(store)]):
        refused(capsys, argv, str(store), "view 'main.episodes'")
    assert not (tmp_path / "qa.jsonl").exists()


def test_a_macro_standing_in_for_a_builtin_function_is_refused(qtc_store, tmp_path, capsys):
    store = hostile_copy(qtc_store, tmp_path, "CREATE MACRO lower(x) AS 'changed'")
    refused(capsys, ["sql", "SELECT lower('A')", str(store)], "macro 'main.lower'")


@pytest.mark.parametrize("statement", ["SELECT * FROM read_text('{secret}')", "COPY episodes TO '{secret}.csv'",
                                       "SET enable_external_access = true", "SET autoinstall_known_extensions = true",
                                       "INSTALL sqlite", "ATTACH '{secret}.duckdb'"])
def test_no_statement_on_a_database_reaches_a_file_or_an_extension(qtc_store, secret, capsys, statement):
    refused(capsys, ["sql", statement.format(secret=secret), str(qtc_store)], "SQL error")
    assert not os.path.exists(f"{secret}.csv") and not os.path.exists(f"{secret}.duckdb")


def test_files_that_are_not_duckdb_databases_are_refused_unread(tmp_path, crafter_trace_dir, capsys):
    lite = tmp_path / "lite.duckdb"
    with sqlite3.connect(lite) as con:
        con.execute("CREATE TABLE episodes (episode_id TEXT)")
    csv = tmp_path / "notes.csv"
    csv.write_text("a,b\n1,2\n")
    for path in (lite, csv):
        before = path.read_bytes()
        refused(capsys, ["load", str(crafter_trace_dir), "--db", str(path)], str(path), "not a DuckDB database")
        assert path.read_bytes() == before
    refused(capsys, ["sql", "SELECT 1", str(lite)], "not a DuckDB database")


def test_a_fifo_given_as_a_database_or_a_trace_is_refused_without_waiting(tmp_path, crafter_trace_dir, capsys):
    fifo = tmp_path / "pipe.duckdb"
    os.mkfifo(fifo)
    unblock = threading.Timer(30, lambda: open(fifo, "wb").close())  # ends a hang only
    unblock.daemon = True
    unblock.start()
    try:
        refused(capsys, ["load", str(crafter_trace_dir), "--db", str(fifo)], "not a database file")
        refused(capsys, ["sql", "SELECT 1", str(fifo)], "not a database file")
        trace = tmp_path / "traces" / "pipe.jsonl"  # a FIFO among the traces, named or in a folder
        trace.parent.mkdir()
        os.mkfifo(trace)
        for source in (trace, trace.parent):
            refused(capsys, ["load", str(source), "--db", str(tmp_path / "x.duckdb")], f"{trace}: not a trace file")
    finally:
        unblock.cancel()


@pytest.mark.parametrize("edit", [
    lambda tables: tables.update({"episodes AS SELECT 1; CREATE VIEW x": ["episode_id"]}),
    lambda tables: tables.update({"../../elsewhere": ["episode_id"]}),
    lambda tables: tables.update({"episodes": ['episode_id" FROM read_text(\'/etc/hostname\') --']}),
    lambda tables: tables.clear() or tables.update({"x": 1}),
])
def test_a_corpus_marker_names_qtcs_tables_and_plain_columns_only(tmp_path, crafter_trace_dir, capsys, edit):
    corpus = tmp_path / "corpus"
    assert main(["load", str(crafter_trace_dir), "--parquet", str(corpus)]) == 0
    marker = json.loads((corpus / MARKER).read_text())
    edit(marker["tables"])
    (corpus / MARKER).write_text(json.dumps(marker))
    capsys.readouterr()
    refused(capsys, ["sql", "SELECT count(*) FROM episodes", str(corpus)], str(corpus / MARKER))


@pytest.mark.parametrize("folder", ["corpus", "corpus[1]*?"])  # issue 32, item 13: a glob's characters are the name's
def test_a_corpus_reads_its_own_files_only(tmp_path, crafter_trace_dir, secret, capsys, folder):
    corpus = tmp_path / folder
    assert main(["load", str(crafter_trace_dir), "--parquet", str(corpus)]) == 0
    capsys.readouterr()
    assert main(["sql", "SELECT count(*) FROM episodes", str(corpus), "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["count_star()", "1"]
    refused(capsys, ["sql", f"SELECT * FROM read_text('{secret}')", str(corpus)], "SQL error")
