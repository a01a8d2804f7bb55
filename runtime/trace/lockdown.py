"""Connections to trace stores, which are shared like packages: a store's SQL (a view, a macro, a default)
runs as data, never as a way to the machine. DuckDB reads no file but a database's or a corpus's own
(external access off from the first query: a view of `read_text('/etc/...')` fails; a store of trace files
is made by qtc here, from files Python read), loads and installs no extension on its own (a SQLite
file named .duckdb is refused, not met by a download), and a database holding a view or a macro (which
could stand in for one of qtc's tables or a built-in function and change answers) is refused by name.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import duckdb

from qtc.errors import UserError
from qtc.files import require_regular_file
from qtc.processes import interruptible

# Set when a connection is made, before it runs anything.
_SAFE_CONFIG = {"enable_external_access": False, "autoload_known_extensions": False,
                "autoinstall_known_extensions": False}
_MAGIC = b"DUCK"  # bytes 8 to 11 of every DuckDB database file

# The code a database may hold, as (what, SQL listing its names): a view or a macro could stand in for one
# of qtc's tables or for a built-in function its SQL calls. A table qtc does not make is never read.
_CODE_OBJECTS = (
    ("view", "SELECT schema_name || '.' || view_name FROM duckdb_views() "
             "WHERE database_name = current_database() AND NOT internal"),
    ("macro", "SELECT DISTINCT schema_name || '.' || function_name FROM duckdb_functions() "
              "WHERE database_name = current_database() AND NOT internal"),
)


def check_duckdb_file(path: Path) -> None:
    """A UserError unless `path` is missing, empty (DuckDB makes a database of it) or a DuckDB database;
    a FIFO or a device is refused unopened (opening a FIFO waits for a writer)."""
    try:
        require_regular_file(path, "a database file")
        with open(path, "rb") as file:
            head = file.read(12)
    except FileNotFoundError:
        return
    except OSError as error:
        raise UserError(f"{path}: cannot open database: {error.strerror or error}") from None
    if head and head[8:12] != _MAGIC:
        raise UserError(f"{path}: not a DuckDB database (give a .duckdb file made by `qtc load --db`)")


def connect_file(path: Path, read_only: bool, config: dict) -> duckdb.DuckDBPyConnection:
    """A connection to the database at `path`, reading nothing else, holding qtc's tables only."""
    check_duckdb_file(path)
    try:
        con = interruptible(duckdb.connect(str(path), read_only=read_only, config=_SAFE_CONFIG | config))
    except duckdb.Error as error:
        raise UserError(f"{path}: cannot open database: {str(error).splitlines()[0]}") from None
    try:
        check_objects(con, path)
    except BaseException:
        con.close()
        raise
    return con


def connect_memory(readable: os.PathLike | str | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection. Given the folder of a corpus (`readable`), it reads no file but those
    under it; without, it is the store of trace files qtc loads itself, and a user's `qtc sql` on it may
    read their own files (join a QA file, say): no SQL but qtc's and the user's runs there."""
    con = interruptible(duckdb.connect(config={k: v for k, v in _SAFE_CONFIG.items() if k != "enable_external_access"}))
    if readable is not None:
        # The folder is allowed before access is turned off (DuckDB takes it only while access is on), as
        # it is named and as a glob names it (DuckDB checks the pattern it is given: parquet.attach_corpus).
        folder = os.path.abspath(readable)
        con.execute("SET allowed_directories = ?", [[os.path.join(path, "") for path in (folder, glob.escape(folder))]])
        con.execute("SET enable_external_access = false")
    return con


def check_objects(con: duckdb.DuckDBPyConnection, source: os.PathLike | str) -> None:
    """A UserError naming the first view or macro of the database: qtc makes tables only."""
    for what, sql in _CODE_OBJECTS:
        found = con.execute(sql + " ORDER BY 1 LIMIT 1").fetchone()
        if found:
            raise UserError(f"{source}: holds a {what} {found[0]!r}, which qtc does not make: a store made by "
                            "`qtc load` holds tables only, and qtc runs no SQL a store brings")


def lock(con: duckdb.DuckDBPyConnection) -> None:
    """No later statement changes the connection's settings (external access, extensions, limits)."""
    con.execute("SET lock_configuration = true")
