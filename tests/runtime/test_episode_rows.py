"""One episode's rows read by their range of row ids: the same rows as a filter on the episode, however
the store's rows lie."""

from __future__ import annotations

import duckdb

from qtc.runtime.episode_rows import EpisodeRows

SPATIAL_TABLES = ("crafter_map_init", "crafter_map_changes", "crafter_view", "crafter_creatures", "crafter_steps",
                  "jericho_steps")


def test_interleaved_episodes_read_only_their_own_rows():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (episode_id VARCHAR, step INTEGER)")
    con.execute("INSERT INTO t VALUES ('a', 1), ('b', 1), ('a', 2), ('c', 1), ('a', 3)")
    con.execute("CREATE TABLE u (episode_id VARCHAR, step INTEGER, word VARCHAR)")
    con.execute("INSERT INTO u VALUES ('c', 1, 'x'), ('a', 2, 'two'), ('b', 1, 'one')")
    rows = EpisodeRows(con.cursor())
    assert rows.execute("SELECT step FROM {t} ORDER BY step", "a").fetchall() == [(1,), (2,), (3,)]
    assert rows.execute("SELECT step FROM {t}", "b").fetchall() == [(1,)]
    assert rows.execute("SELECT step FROM {t}", "z").fetchall() == []
    joined = "SELECT t.step, u.word FROM {t} t LEFT JOIN {u} u USING (step) WHERE t.step <= $last ORDER BY t.step"
    assert rows.execute(joined, "a", last=2).fetchall() == [(1, None), (2, "two")]
    assert rows.has("u", "b") and not rows.has("u", "z")
    # Several episodes at once: one range spanning theirs, and only their rows within it.
    assert sorted(rows.execute_many("SELECT episode_id, step FROM {t}", ["a", "c"]).fetchall()) == [
        ("a", 1), ("a", 2), ("a", 3), ("c", 1)]
    assert rows.execute_many("SELECT step FROM {u}", ["z"]).fetchall() == []


def test_a_view_has_no_row_ids_and_is_filtered_by_the_episode():
    """As a Parquet corpus read in place is: its tables are views."""
    con = duckdb.connect()
    con.execute("CREATE VIEW v AS SELECT * FROM (VALUES ('a', 1), ('b', 1), ('a', 2)) t(episode_id, step)")
    rows = EpisodeRows(con.cursor())
    assert rows.execute("SELECT step FROM {v} ORDER BY step", "a").fetchall() == [(1,), (2,)]
    assert rows.has("v", "b") and not rows.has("v", "z")
    assert sorted(rows.execute_many("SELECT step FROM {v}", ["a", "b"]).fetchall()) == [(1,), (1,), (2,)]


def test_every_episode_of_a_store_reads_as_its_filter_does(trace_db):
    rows = EpisodeRows(trace_db.cursor())
    episodes = [e for (e,) in trace_db.execute("SELECT episode_id FROM episodes").fetchall()]
    for table in SPATIAL_TABLES:
        for episode in episodes:
            ranged = rows.execute(f"SELECT * FROM {{{table}}} ORDER BY ALL", episode).fetchall()
            filtered = trace_db.execute(f"SELECT * FROM {table} WHERE episode_id = ? ORDER BY ALL",
                                        [episode]).fetchall()
            assert ranged == filtered, (table, episode)
        together = rows.execute_many(f"SELECT * FROM {{{table}}} ORDER BY ALL", episodes[::2]).fetchall()
        assert together == trace_db.execute(f"SELECT * FROM {table} WHERE list_contains(?, episode_id) ORDER BY ALL",
                                            [episodes[::2]]).fetchall(), table
