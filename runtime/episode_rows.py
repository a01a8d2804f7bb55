"""One episode's rows of a trace store's tables, read without scanning the whole tables.

A filter `episode_id = ?` scans every row of a table: DuckDB's per-row-group statistics of a text column
keep only a short prefix, and episode ids share long ones ("crafter-scripted-..."). Asked once per episode,
as the spatial primitives do, that makes a store's time grow with the square of its episodes. A store
holds each episode's rows together (qtc load appends them trace by trace), so the rows of an episode lie
within one range of row ids, which DuckDB turns into row groups skipped; each table's ranges are read once
(one pass, grouped by episode). The episode filter stays beside the range, so rows of other episodes
inside it are never read as this one's: the range decides speed, never answers. A view (a Parquet corpus
read in place, its files partitioned by episode, so that the filter alone reads one episode's files) has
no row ids and is filtered by the episode alone.

The ranges are those of the tables when first read: an EpisodeRows serves a store that does not change
while it is used (a generation run, a page built).
"""

from __future__ import annotations

import string

import duckdb


class EpisodeRows:
    """Runs queries over one episode's rows: `{table}` in a query stands for that table's rows of the
    episode bound as `$episode`."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection):
        self.cursor = cursor
        self._ranges: dict[str, dict[str, tuple[int, int]] | None] = {}

    def has(self, table: str, episode: str) -> bool:
        """Whether `table` has rows of `episode`."""
        return bool(self.execute(f"SELECT 1 FROM {{{table}}} LIMIT 1", episode).fetchall())

    def execute(self, sql: str, episode: str, **parameters) -> duckdb.DuckDBPyConnection:
        """The cursor, having run `sql` with each `{table}` replaced by the episode's rows of that table,
        `$episode` and the named `parameters` bound."""
        return self._run(sql, [episode], "episode_id = $episode", {"episode": episode, **parameters})

    def execute_many(self, sql: str, episodes: list[str], **parameters) -> duckdb.DuckDBPyConnection:
        """As `execute`, for the rows of every episode of `episodes` (bound as `$episodes`): one query for
        them all, each table read over the one range of row ids that holds all their rows."""
        return self._run(sql, episodes, "list_contains($episodes, episode_id)", {"episodes": episodes, **parameters})

    def _run(self, sql: str, episodes: list[str], belongs: str, bound: dict) -> duckdb.DuckDBPyConnection:
        sources = {}
        for number, table in enumerate(sorted({name for _, name, _, _ in string.Formatter().parse(sql) if name})):
            ranges = self._table_ranges(table)
            if ranges is None:
                sources[table] = f"(SELECT * FROM {table} WHERE {belongs})"
                continue
            spans = [ranges[episode] for episode in episodes if episode in ranges]
            bound[f"first{number}"] = min((first for first, _ in spans), default=0)
            bound[f"last{number}"] = max((last for _, last in spans), default=-1)
            sources[table] = (f"(SELECT * FROM {table} WHERE rowid BETWEEN $first{number} AND $last{number} "
                              f"AND {belongs})")
        return self.cursor.execute(sql.format(**sources), bound)

    def _table_ranges(self, table: str) -> dict[str, tuple[int, int]] | None:
        """Each episode's first and last row id in `table`; None for a view."""
        if table not in self._ranges:
            is_table = self.cursor.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                                           [table]).fetchone()[0]
            self._ranges[table] = {episode: (first, last) for episode, first, last in self.cursor.execute(
                f"SELECT episode_id, min(rowid), max(rowid) FROM {table} GROUP BY episode_id").fetchall()
            } if is_table else None
        return self._ranges[table]
