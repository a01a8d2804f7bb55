"""Arrow at the runtime's meeting with DuckDB: the language's storage types as Arrow types (the tables
built in Python at load, the spatial primitives' results), a statement's rows as an Arrow table, and
the rows of a table that a mask picks.

Nothing here imports pyarrow.compute (Table.filter and Table.take do): its import alone costs a fifth of
a second, a good part of a run's start-up."""

from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pyarrow as pa

from qtc.dsl import types as T

_STORAGE = {"BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(), "VARCHAR": pa.string(),
            T.DISPLACEMENT.storage: pa.struct([("dx", pa.int64()), ("dy", pa.int64())])}


def arrow_type(type_: T.Type) -> pa.DataType:
    """The Arrow type of a value of `type_`, as DuckDB stores it."""
    if isinstance(type_, T.ListOf):
        return pa.list_(arrow_type(type_.element))
    return _STORAGE[type_.storage]


def arrow_rows(con: duckdb.DuckDBPyConnection, sql: str, params=None) -> pa.Table:
    """The rows of `sql` (with its parameters) as an Arrow table, the statement bound once.
    con.sql(sql).to_arrow_table(), which DuckDB's warning recommends, binds it twice (once for the
    relation's schema, again to run it): a quarter of a small statement's CPU. The copy the warning is
    about is of the result, which the caller keeps whole anyway. Read through a reader: DuckDB 2.0's
    to_arrow_table on an executed result reads its rows back through a second statement, ~8 ms of
    each small statement (the same tables: every template's on five Jericho walkthroughs, -3 to -5%
    of their CPU; Crafter -2%)."""
    result = con.execute(sql, params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return result.to_arrow_reader().read_all()


def rows_where(table: pa.Table, mask: np.ndarray) -> pa.Table:
    """The rows of `table` where the boolean `mask` (one per row) holds, in order: a slice of each run of
    them, joined, so that nothing is copied and pyarrow.compute is not imported. Meant for rows that lie in
    few runs (a slice costs tens of microseconds; a mask of a thousand runs is several times slower than
    Table.filter), as a generation statement's rows at one cap and each episode's first view do."""
    edges = np.flatnonzero(np.diff(np.concatenate(([False], mask, [False])).astype(np.int8)))
    return pa.concat_tables([table.slice(start, stop - start) for start, stop in zip(edges[::2], edges[1::2])]
                            or [table.slice(0, 0)])
