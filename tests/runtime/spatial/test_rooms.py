"""The Jericho room-graph primitives: against brute force on random move lists, on a hand-drawn map,
and in DuckDB on a recorded zork1 episode."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from qtc.runtime.spatial.rooms import RoomGraph, RoomHistory

INFINITE = 10**9
DIRECTIONS = ("north", "south", "east", "west", None)


def floyd_warshall(rooms, moves) -> dict:
    distance = {(a, b): 0 if a == b else INFINITE for a in rooms for b in rooms}
    for before, _, after in moves:
        if before != after:
            distance[before, after] = min(distance[before, after], 1)
    for middle, a, b in itertools.product(rooms, rooms, rooms):
        distance[a, b] = min(distance[a, b], distance[a, middle] + distance[middle, b])
    return distance


def brute_follow(moves, room, directions):
    """A move that left the player where it was is a direction tried in vain: never followed."""
    for direction in directions:
        ends = {after for before, d, after in moves if before == room and d == direction}
        if len(ends) != 1 or room in ends:
            return None
        room = ends.pop()
    return room


moves_lists = st.lists(st.tuples(st.integers(1, 6), st.sampled_from(DIRECTIONS), st.integers(1, 6)), max_size=14)


@settings(max_examples=200, deadline=None)
@given(moves_lists, st.lists(st.integers(1, 6), min_size=1, max_size=3), st.integers(0, 4))
def test_graph_matches_brute_force(attempts, stays, k):
    moves = [m for m in attempts if m[0] != m[2]]  # a move changes the room; the others failed
    stays = stays + [a for a, _, b in attempts if a == b]  # where a failed attempt was made
    graph = RoomGraph.from_moves(stays, moves, [(a, d) for a, d, b in attempts if a == b and d])
    rooms = sorted(set(stays) | {m[0] for m in moves} | {m[2] for m in moves})
    distance = floyd_warshall(rooms, moves)
    for a, b in itertools.product(range(1, 8), repeat=2):
        known = a in rooms and b in rooms and distance[a, b] < INFINITE
        assert graph.path_length(a, b) == (distance[a, b] if known else None)
        assert graph.reachable_within(a, b, k) == ((distance[a, b] <= k) if known else None)
    for a in range(1, 8):
        expected = sum(1 for b in rooms if b != a and distance[a, b] <= k) if a in rooms else None
        assert graph.rooms_within(a, k) == expected
        named = sorted({d for _, d, _ in moves if d is not None})
        for length in (3, 2, 1, 0):  # longest first: the shorter ones are then read from what it found
            expected_walks = sorted(list(p) for p in itertools.product(named, repeat=length)
                                    if brute_follow(attempts, a, p) is not None) if a in rooms else []
            assert graph.walks(a, length) == expected_walks
            for walk in expected_walks:
                assert graph.follow(a, walk) == brute_follow(attempts, a, walk)
    for a, b, c in itertools.product(rooms, repeat=3):
        ab, ac = distance[a, b], distance[a, c]
        expected = None if b == c or INFINITE in (ab, ac) or ab == ac else (b if ab < ac else c)
        assert graph.closer(a, b, c) == expected


def test_hand_drawn_graph():
    # Kitchen(1) -west-> Living(2) -down-> Cellar(3); back up from the cellar is never taken.
    # Kitchen -east-> Yard(4) and, once, -east-> Garden(5): the east exit is ambiguous.
    moves = [(1, "west", 2), (2, "down", 3), (2, "east", 1), (1, "east", 4), (4, "west", 1), (1, "east", 5),
             (5, None, 4)]
    graph = RoomGraph.from_moves([1], moves)
    assert graph.path_length(1, 3) == 2
    assert graph.path_length(3, 1) is None  # never went up: unknowable, not "no"
    assert graph.reachable_within(3, 1, 5) is None
    assert graph.reachable_within(1, 3, 1) is False
    assert graph.reachable_within(1, 3, 2) is True
    assert graph.rooms_within(1, 1) == 3  # Living, Yard, Garden
    assert graph.rooms_within(3, 4) == 0
    assert graph.rooms_within(6, 1) is None  # never there
    assert graph.follow(1, ["west", "down"]) == 3
    assert graph.follow(1, ["east"]) is None  # east led to two rooms
    assert graph.follow(5, ["west"]) is None  # the Garden-to-Yard move named no direction
    assert graph.path_length(5, 4) == 1
    assert graph.walks(1, 2) == [["west", "down"], ["west", "east"]]
    assert graph.closer(2, 3, 4) == 3  # the Cellar is one move from the Living room, the Yard two
    assert graph.closer(2, 1, 3) is None  # a tie: both one move away


def test_walks_of_a_graph_that_grows():
    """A graph's walks are found once, and found again after a room, a move or a failure is added."""
    graph = RoomGraph.from_moves([1], [(1, "west", 2)])
    assert graph.walks(1, 1) == [["west"]] and graph.walks(1, 2) == []
    graph.add_move(2, "down", 3)
    assert graph.walks(1, 2) == [["west", "down"]]
    graph.add_failure(1, "west")  # an exit that once failed cannot be followed
    assert graph.walks(1, 1) == [] and graph.walks(2, 1) == [["down"]]


def test_long_walks_round_a_cycle():
    """A walk may be longer than Python's recursion limit: round and round two rooms."""
    graph = RoomGraph.from_moves([1], [(1, "east", 2), (2, "west", 1)])
    assert graph.walks(1, 1201) == [["east", "west"] * 600 + ["east"]]


def test_recorded_zork1_paths_against_brute_force(trace_db):
    episode, = trace_db.execute("SELECT episode_id FROM episodes WHERE env = 'jericho'").fetchall()[0]
    steps = trace_db.execute("SELECT step, room_before, direction, room_after, moved FROM jericho_steps "
                             "WHERE episode_id = ? ORDER BY step", [episode]).fetchall()
    for j in range(2, len(steps) + 1, 3):
        moves = [(before, d, after) for s, before, d, after, moved in steps if moved and s < j]
        rooms = sorted({r for s, before, _, after, _ in steps if s <= j for r in (before,)} |
                       {r for m in moves for r in (m[0], m[2])})
        distance = floyd_warshall(rooms, moves)
        finish = steps[j - 1][1]
        for i in range(1, j):
            start = steps[i - 1][1]
            got = trace_db.execute("SELECT qtc_path_length(?, ?, ?, ?)", [episode, j, start, finish]).fetchall()[0][0]
            assert got == distance[start, finish]
            assert got <= j - i  # the way the player actually went is one path


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.sampled_from(DIRECTIONS), st.integers(1, 5)), max_size=12),
       st.lists(st.integers(0, 14), min_size=1, max_size=10))
def test_graph_versions_match_a_rebuild_from_every_step(moves, asked):
    """The graph before a step, read from the one versioned graph (steps asked in any order), is the
    graph built from the steps up to it: every room, distance, exit and walk."""
    steps = [(step, before, direction if before != after else None, after, before != after, direction)
             for step, (before, direction, after) in enumerate(moves, start=1)]
    history = RoomHistory(steps)
    for t in asked:
        graph = history.graph_before(t)
        rebuilt = RoomGraph.from_moves(
            [before for s, before, *_ in steps if s <= t],
            [(before, d, after) for s, before, d, after, moved, _ in steps if moved and s < t],
            [(before, tried) for s, before, _, _, moved, tried in steps if not moved and tried and s < t])
        for a in range(0, 7):
            assert graph.distances_from(a) == rebuilt.distances_from(a)
            assert graph.rooms_within(a, 2) == rebuilt.rooms_within(a, 2)
            assert graph.walks(a, 2) == rebuilt.walks(a, 2)
            assert all(graph.follow(a, [d]) == rebuilt.follow(a, [d]) for d in DIRECTIONS if d)
