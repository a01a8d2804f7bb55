"""The spatial state of episodes read together (a query per table for them all, udf.py's SpatialData) is
the state each has read alone."""

from __future__ import annotations

from qtc.runtime.spatial.grid import CrafterMaps
from qtc.runtime.spatial.udf import SpatialData


def test_episodes_read_together_are_each_episode_read_alone(trace_db):
    episodes = [e for (e,) in trace_db.execute("SELECT episode_id FROM episodes ORDER BY ALL").fetchall()]
    together = SpatialData(trace_db).episodes(episodes)
    alone = SpatialData(trace_db)
    for episode in episodes:
        one, other = together[episode].state, alone.episode(episode).state
        assert type(one) is type(other), episode
        if isinstance(one, CrafterMaps):
            assert one.names == other.names and one.positions == other.positions
            assert (one.initial == other.initial).all()
            for cells in ("all", "seen"):
                assert (one.maps[cells]._cells == other.maps[cells]._cells).all(), (episode, cells)
        elif one is not None:
            last = max(step for (step,) in trace_db.execute(
                "SELECT step FROM jericho_steps WHERE episode_id = ? UNION ALL SELECT 0", [episode]).fetchall())
            assert one.graph_before(last + 1).rooms == other.graph_before(last + 1).rooms, episode


def test_reading_ahead_reads_the_other_episodes_of_the_environment(trace_db):
    (episode, env), = trace_db.execute("SELECT episode_id, env FROM episodes ORDER BY ALL LIMIT 1").fetchall()
    (count,), = trace_db.execute("SELECT count(*) FROM episodes WHERE env = ?", [env]).fetchall()
    data = SpatialData(trace_db, ahead=True)
    data.episode(episode)
    assert len(data._episodes) == count
