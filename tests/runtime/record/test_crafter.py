"""The Crafter recorder against the live game: state at every step, the rebuilt map, events, damage."""

from __future__ import annotations

from collections import Counter

import numpy as np

from qtc.dsl import crafter_data
from qtc.runtime.trace.store import open_store
from qtc.runtime.trace.format import read_episode

from support.recordings import CRAFTER_STEPS, MAP_CHECK_STEPS
from support.staged import staged_episode, zombie_next_to_player


def test_every_step_matches_the_live_game(crafter_recording):
    episode = read_episode(crafter_recording.path)
    assert len(episode.steps) == episode.header["n_steps"] == len(crafter_recording.live) - 1 <= CRAFTER_STEPS
    assert episode.header["initial"]["inventory"] == crafter_recording.live[0]["inventory"]
    for record in episode.steps:
        before, after = crafter_recording.live[record["step"] - 1], crafter_recording.live[record["step"]]
        assert (record["x_before"], record["y_before"]) == (before["x"], before["y"])
        assert (record["x_after"], record["y_after"]) == (after["x"], after["y"])
        assert record["facing_after"] == crafter_data.FACINGS[after["facing"]]
        assert record["terrain_after"] == after["terrain"]
        assert record["inventory"] == after["inventory"]
        assert record["sleeping"] == after["sleeping"]
        assert record["daylight"] == after["daylight"]
        increments = Counter({k: after["achievements"][k] - before["achievements"][k]
                              for k in crafter_data.ACHIEVEMENTS})
        assert Counter(record["achievements"]) == +increments
        lost = sum(d["amount"] for d in record["damage"])
        assert lost >= before["health"] - after["health"]


def test_map_rebuilt_from_changes_equals_the_live_map(crafter_recording):
    con = open_store(crafter_recording.path)
    for step in MAP_CHECK_STEPS:
        rows = con.execute("""
            SELECT i.x, i.y, coalesce(
                (SELECT c.material_after FROM crafter_map_changes c
                 WHERE c.episode_id = i.episode_id AND c.x = i.x AND c.y = i.y AND c.step <= ?
                 ORDER BY c.step DESC LIMIT 1), i.material)
            FROM crafter_map_init i""", [step]).fetchall()
        rebuilt = np.empty(crafter_recording.maps[step].shape, dtype=object)
        for x, y, material in rows:
            rebuilt[x, y] = material
        assert (rebuilt == crafter_recording.maps[step]).all(), f"map differs at step {step}"


def test_view_is_the_map_around_the_player(crafter_recording):
    con = open_store(crafter_recording.path)
    step = MAP_CHECK_STEPS[3]
    live = crafter_recording.maps[step]
    cells = con.execute("SELECT x, y, material FROM crafter_view WHERE step = ?", [step]).fetchall()
    x, y = con.execute("SELECT x_after, y_after FROM crafter_steps WHERE step = ?", [step]).fetchone()
    # A 9 x 7 window centred on the player, cut at the map's edges.
    assert {(cx, cy) for cx, cy, _ in cells} == {
        (cx, cy) for cx in range(x - 4, x + 5) for cy in range(y - 3, y + 4) if 0 <= cx < 64 and 0 <= cy < 64}
    assert all(live[x, y] == material for x, y, material in cells)


def test_events_come_from_crafter_counters(trace_db):
    collections = dict(trace_db.execute(
        "SELECT item, count(*) FROM crafter_collections GROUP BY item").fetchall())
    assert collections["wood"] >= 3
    # A table is an achievement only where the map really changed to a table at that step.
    placed = trace_db.execute("SELECT step FROM crafter_achievements WHERE achievement = 'place_table'").fetchall()
    tables = trace_db.execute("SELECT step FROM crafter_map_changes WHERE material_after = 'table'").fetchall()
    assert placed and placed == tables
    # Collections at the inventory cap count although the inventory does not grow.
    at_cap = trace_db.execute("""
        SELECT count(*) FROM crafter_collections c JOIN crafter_inventory i
          ON i.episode_id = c.episode_id AND i.step = c.step - 1 AND i.item = c.item
        WHERE i.count = 9""").fetchone()[0]
    gained = trace_db.execute("SELECT count(*) FROM crafter_item_events WHERE item = 'stone' AND change = "
                              "'gained'").fetchone()[0]
    stone = trace_db.execute("SELECT count(*) FROM crafter_collections WHERE item = 'stone'").fetchone()[0]
    assert stone == gained + at_cap
    firsts = trace_db.execute("SELECT achievement, count(*) FROM crafter_achievements WHERE first "
                              "GROUP BY achievement HAVING count(*) > 1").fetchall()
    assert firsts == []


def test_death_is_the_step_health_reached_zero(tmp_path):
    def weak_beside_a_zombie(session):
        zombie_next_to_player(session)
        session.env._player.health = 3
    episode = staged_episode(tmp_path, weak_beside_a_zombie, "noop", 20)
    died = episode.header["n_steps"]
    assert episode.steps[-1]["inventory"]["health"] == 0 and died < 20
    con = open_store(tmp_path)
    assert con.execute("SELECT ended_by, death_step, death_cause, n_steps FROM episodes").fetchone() == (
        "death", died, "zombie", died)
    fatal = con.execute("SELECT cause, attack FROM crafter_damage WHERE step = ?", [died]).fetchall()
    assert fatal[-1] == ("zombie", True)


def test_lava_kills_and_is_the_cause(tmp_path):
    def lava_to_the_left(session):
        session.env._world[session.env._player.pos + (-1, 0)] = "lava"
    episode = staged_episode(tmp_path, lava_to_the_left, "move_left", 10)
    assert episode.header["ended_by"] == "death"
    assert (episode.header["death_step"], episode.header["death_cause"]) == (1, "lava")
    assert episode.steps[0]["damage"] == [{"amount": 9, "cause": "lava", "attack": False}]


def test_zombie_attack_is_an_attack(tmp_path):
    episode = staged_episode(tmp_path, zombie_next_to_player, "noop", 3)
    damage = [d for s in episode.steps for d in s["damage"]]
    assert damage and damage[0]["cause"] == "zombie" and damage[0]["attack"] is True


def test_starvation_is_not_an_attack(tmp_path):
    def starving(session):
        session.env._player.inventory["food"] = 0
    episode = staged_episode(tmp_path, starving, "noop", 20)
    damage = [(s["step"], d) for s in episode.steps for d in s["damage"]]
    assert damage[0][1] == {"amount": 1, "cause": "starvation", "attack": False}
    assert episode.header["ended_by"] == "step_limit" and episode.header["death_step"] is None
