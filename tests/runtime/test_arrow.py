"""Arrow at the runtime's meeting with DuckDB: a statement's rows as one bind gives them, the rows a mask
picks as Table.filter would, and neither imports pyarrow.compute (a fifth of a second of start-up)."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import numpy as np
import pyarrow as pa

from qtc.dsl import types as T
from qtc.runtime.arrow import arrow_rows, arrow_type, rows_where


def test_arrow_rows_are_the_rows_of_the_statement_with_its_parameters():
    con = duckdb.connect()
    sql = "SELECT i, [i, $step] AS l FROM range(4) t(i) WHERE i >= $step ORDER BY i"
    assert arrow_rows(con, sql, {"step": 2}).equals(con.sql(sql, params={"step": 2}).to_arrow_table())
    assert arrow_rows(con, "SELECT 1 AS one").to_pylist() == [{"one": 1}]


def test_rows_where_keeps_the_rows_the_mask_picks_in_order():
    table = pa.table({"n": list(range(7)), "s": list("abcdefg")})
    for mask in ([True] * 7, [False] * 7, [True, True, False, True, False, False, True],
                 [False, True, False, True, True, True, False]):
        picked = rows_where(table, np.array(mask))
        assert picked.schema == table.schema
        assert picked.to_pylist() == [row for row, keep in zip(table.to_pylist(), mask) if keep]
    assert rows_where(table.slice(0, 0), np.array([], dtype=bool)).num_rows == 0


def test_storage_types_map_to_arrow_as_duckdb_returns_them():
    con = duckdb.connect()
    for type_, storage in ((T.INTEGER, "BIGINT"), (T.FLOAT, "DOUBLE"), (T.BOOLEAN, "BOOLEAN"), (T.STRING, "VARCHAR"),
                           (T.DISPLACEMENT, T.DISPLACEMENT.storage), (T.ListOf(T.STRING), "VARCHAR[]"),
                           (T.ListOf(T.DISPLACEMENT), f"{T.DISPLACEMENT.storage}[]")):
        assert arrow_type(type_) == arrow_rows(con, f"SELECT NULL::{storage} AS v").schema.field("v").type


def test_nothing_here_imports_pyarrow_compute():
    probe = ("import sys, numpy as np, duckdb, pyarrow as pa; from qtc.runtime.arrow import arrow_rows, rows_where; "
             "rows_where(arrow_rows(duckdb.connect(), 'SELECT 1 AS a'), np.array([True])); "
             "print('pyarrow.compute' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "False\n"
