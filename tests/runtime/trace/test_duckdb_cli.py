"""The database `qtc load` writes opens in the released DuckDB CLI (pip install duckdb-cli), whose storage
format may be older than the duckdb library's: the real CLI binary reads it and gets the same rows."""

from __future__ import annotations

import json
import shutil
import subprocess

import duckdb
import pytest

from qtc.cli import main

QUERY = "SELECT action, count(*) AS n FROM crafter_steps GROUP BY action ORDER BY action"


@pytest.mark.skipif(shutil.which("duckdb") is None,
                    reason="the DuckDB CLI is not installed: pip install duckdb-cli (or pip install -e '.[test]')")
def test_the_duckdb_cli_opens_what_qtc_load_writes(tmp_path, crafter_trace_dir, capsys):
    db = tmp_path / "traces.duckdb"
    assert main(["load", str(crafter_trace_dir), "--db", str(db)]) == 0
    capsys.readouterr()
    cli = subprocess.run(["duckdb", "-readonly", "-json", str(db), "-c", QUERY],
                         capture_output=True, text=True, timeout=60)
    version = subprocess.run(["duckdb", "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    assert cli.returncode == 0, f"duckdb CLI {version}: {cli.stderr}"
    with duckdb.connect(str(db), read_only=True) as con:
        expected = [{"action": a, "n": n} for a, n in con.execute(QUERY).fetchall()]
    assert json.loads(cli.stdout) == expected and expected
