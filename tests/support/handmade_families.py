"""Hand-written episodes for the question families of the standard library (tests/templates/test_families.py).

Each episode is laid out below as a table a reader can check an expected answer against. The tables are
made from dsl/schema.py's DDL, as the store makes them; derived tables (item and room events, views,
collections) are written out by hand too, consistent with the steps.
"""

from __future__ import annotations

import duckdb

from qtc.dsl import schema
from qtc.dsl.conventions import command, command_direction
from qtc.runtime.spatial.udf import register_primitives
from support.handmade import HEADER_ROOM_COLUMNS, derive_room_columns

# ---- Jericho episode j2 (game "manor"): rooms 1 Hall, 2 Kitchen, 3 Garden, 4 Cellar ----
#  step action       room     inventory after       score  reason
#   1   take key     1 -> 1   key                   0      The key looks useful. Take it.
#   2   east         1 -> 2   key                   0      Go east to the kitchen.
#   3   take knife   2 -> 2   key, knife            5      A knife in the kitchen. Knife taken.
#   4   drop key     2 -> 2   knife                 5      The key is heavy.
#   5   west         2 -> 1   knife                 5      Back to the hall.
#   6   east         1 -> 2   knife                 5      Kitchen again, for the key.
#   7   take key     2 -> 2   key, knife            10     Take the key again.
#   8   north        2 -> 3   key, knife            10     (none)
#   9   take rose    3 -> 3   key, knife, rose      10     A rose! The garden is nice.
#  10   south        3 -> 2   key, knife, rose      10     Back to the kitchen.
#  11   down         2 -> 4   key, knife, rose      10     The cellar below the kitchen.
#  12   up           4 -> 2   key, knife, rose      15     Up.
J2_ROOMS = [(1, "Hall", "Hall"), (2, "Kitchen", "Kitchen"), (3, "Garden", "Garden"), (4, "Cellar", "Cellar")]
J2_STEPS = [
    # action, reason, room before, room after, direction, inventory after, score, obs after, valid actions before
    ("take key", "The key looks useful. Take it.", 1, 1, None, ["key"], 0,
     "Taken. The key is brass.", ["east", "take key"]),
    ("east", "Go east to the kitchen.", 1, 2, "east", ["key"], 0,
     "Kitchen. A knife lies here. A key hook on the wall.", ["east", "west", "drop key"]),
    ("take knife", "A knife in the kitchen. Knife taken.", 2, 2, None, ["key", "knife"], 5,
     "Taken.", ["take knife", "west", "drop key"]),
    ("drop key", "The key is heavy.", 2, 2, None, ["knife"], 5,
     "Dropped. The key falls.", ["drop key", "drop knife", "west"]),
    ("west", "Back to the hall.", 2, 1, "west", ["knife"], 5, "Hall.", ["west", "take key"]),
    ("east", "Kitchen again, for the key.", 1, 2, "east", ["knife"], 5,
     "Kitchen. There is a key here.", ["east"]),
    ("take key", "Take the key again.", 2, 2, None, ["key", "knife"], 10, "Taken.", ["take key", "north", "west"]),
    ("north", None, 2, 3, "north", ["key", "knife"], 10, "Garden. A rose grows.", ["north", "west", "down"]),
    ("take rose", "A rose! The garden is nice.", 3, 3, None, ["key", "knife", "rose"], 10,
     "Taken.", ["take rose", "south"]),
    # The valid-action finder gave nothing before step 10: was_valid must not answer "no" there.
    ("south", "Back to the kitchen.", 3, 2, "south", ["key", "knife", "rose"], 10, "Kitchen.", []),
    ("down", "The cellar below the kitchen.", 2, 4, "down", ["key", "knife", "rose"], 10,
     "Cellar. Dark and damp.", ["down", "north", "west"]),
    ("up", "Up.", 4, 2, "up", ["key", "knife", "rose"], 15, "Kitchen.", ["up"]),
]
J2_FIRST_OBSERVATION = "Hall. A key is on the floor."
J2_ITEM_EVENTS = [(1, "key", "gained", 1), (3, "knife", "gained", 2), (4, "key", "lost", 2),
                  (7, "key", "gained", 2), (9, "rose", "gained", 3)]
J2_ROOM_EVENTS = [(0, 1, "entered"), (2, 1, "left"), (2, 2, "entered"), (5, 2, "left"), (5, 1, "entered"),
                  (6, 1, "left"), (6, 2, "entered"), (8, 2, "left"), (8, 3, "entered"), (10, 3, "left"),
                  (10, 2, "entered"), (11, 2, "left"), (11, 4, "entered"), (12, 4, "left"), (12, 2, "entered")]
J2_ITEMS = ("key", "knife", "rose", "lamp", "sword")

# Episodes for room_with_most_gains, only their gains matter (rooms 5 Attic, 6 Shed): the template must
# answer the room with the most distinct items, or not ask.
#  jdup:     Attic: apple, apple (regained), bread; Shed: cup     -> Attic (2 distinct items to 1)
#  jtie:     Attic: apple, apple;               Shed: cup         -> a tie (1 to 1): not asked
#  jmislead: Attic: apple x3;                   Shed: bread, cup  -> Shed, but gain events favour the Attic
#                                                                    and cannot show it: not asked
GAIN_EPISODES = {
    "jdup": [(1, "apple", 5), (3, "apple", 5), (4, "bread", 5), (5, "cup", 6)],
    "jtie": [(1, "apple", 5), (3, "apple", 5), (4, "cup", 6)],
    "jmislead": [(1, "apple", 5), (3, "apple", 5), (5, "apple", 5), (6, "bread", 6), (7, "cup", 6)],
}

# ---- Crafter episode c2: a 6 x 3 map, the player walks along row y=1 ----
#        x=0    1      2      3      4      5
#  y=0:  tree   tree   grass  water  grass  tree
#  y=1:  grass  grass  grass  sand   sand   grass   (a table is placed at (5,1) by step 12)
#  y=2:  grass  stone  grass  grass  grass  grass
#
#  step action        x,y after  terrain after  wood  health  reason
#   0                 1,1        grass          0     9
#   1   move_right    2,1        grass          0     9       Find water. The water is east.
#   2   move_right    3,1        sand           0     9       Walk to the water
#   3   do            3,1        sand           0     9       Drink water            (drink 5 -> 6)
#   4   move_left     2,1        grass          0     9       Go back to the tree
#   5   move_left     1,1        grass          0     9       Walk to the tree
#   6   move_up       1,1        grass          0     9       Face the tree          (blocked by the tree)
#   7   do            1,1        grass          1     9       Collect wood from the tree
#   8   do            1,1        grass          2     9       Collect more wood
#   9   move_right    2,1        grass          2     7       (none)                 (a zombie hits: -2)
#  10   move_right    3,1        sand           2     6       Walk east              (thirst: -1, no attack)
#  11   move_right    4,1        sand           2     6       Walk east again
#  12   place_table   4,1        sand           0     0       Place a table          (a zombie kills you)
#
# The view after each step is the 3 x 3 square around the player, on the map as it is after that step.
C2_MAP = ["tree tree grass water grass tree", "grass grass grass sand sand grass", "grass stone grass grass grass grass"]
C2_ACTIONS = ["move_right", "move_right", "do", "move_left", "move_left", "move_up", "do", "do", "move_right",
              "move_right", "move_right", "place_table"]
C2_REASONS = ["Find water. The water is east.", "Walk to the water", "Drink water", "Go back to the tree",
              "Walk to the tree", "Face the tree", "Collect wood from the tree", "Collect more wood", None,
              "Walk east", "Walk east again", "Place a table"]
C2_X = [1, 2, 3, 3, 2, 1, 1, 1, 1, 2, 3, 4, 4]  # after step 0..12; y is always 1
C2_WOOD = [0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 0]
C2_HEALTH = [9, 9, 9, 9, 9, 9, 9, 9, 9, 7, 6, 6, 0]
C2_DRINK = [5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6]
C2_TABLE_STEP, C2_TABLE_CELL = 12, (5, 1)
C2_ACHIEVEMENTS = [(3, "collect_drink", True), (7, "collect_wood", True), (8, "collect_wood", False),
                   (12, "place_table", True)]
C2_COLLECTIONS = [(3, "drink", "water"), (7, "wood", "tree"), (8, "wood", "tree")]
C2_DAMAGE = [(9, 2, "zombie", True), (10, 1, "thirst", False), (12, 6, "zombie", True)]
# Crafter episode c3: one step, after which the player died of a cause the recorder could not tell.
C3_DEATH = (1, "unknown")
CRAFTER_VOCAB = {
    "action": ("noop", "move_left", "move_right", "move_up", "move_down", "do", "sleep", "place_table"),
    "item": ("wood", "stone", "sapling", "coal"),
    "stat": ("health", "food", "drink", "energy"),
    "material": ("water", "grass", "stone", "sand", "tree", "lava", "table", "coal", "iron", "diamond",
                 "furnace", "path"),
    "achievement": ("collect_drink", "collect_wood", "place_table", "eat_cow", "defeat_zombie"),
}


def c2_map_after(step: int) -> dict[tuple[int, int], str]:
    """The material of every cell after `step` (0: at reset)."""
    cells = {(x, y): material for y, row in enumerate(C2_MAP) for x, material in enumerate(row.split())}
    if step >= C2_TABLE_STEP:
        cells[C2_TABLE_CELL] = "table"
    return cells


def make_families_db() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for statement in schema.ddl():
        con.execute(statement)
    register_primitives(con)
    _add_jericho(con)
    _add_crafter(con)
    return con


def _add_jericho(con) -> None:
    con.execute("INSERT INTO episodes (episode_id, env, game, seed, agent, n_steps, ended_by) "
                "VALUES ('j2', 'jericho', 'manor', 1, 'handmade', 12, 'step_limit')")
    con.executemany("INSERT INTO vocab VALUES ('manor', 'item', ?)", [(item,) for item in J2_ITEMS])
    observation, inventory = J2_FIRST_OBSERVATION, []
    for step, (action, reason, before, after, direction, inv_after, score, obs_after, valid) in enumerate(
            J2_STEPS, start=1):
        con.execute("INSERT INTO jericho_steps VALUES ('j2', ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, FALSE, NULL, NULL)",
                    [step, action, command(action), reason, observation, obs_after, score, step, before, after,
                     before != after, direction, command_direction(action), inventory, inv_after, valid])
        observation, inventory = obs_after, inv_after
    con.executemany(f"INSERT INTO jericho_rooms {HEADER_ROOM_COLUMNS} VALUES ('j2', ?, ?, ?, TRUE)", J2_ROOMS)
    con.executemany("INSERT INTO jericho_item_events VALUES ('j2', ?, ?, ?, ?)", J2_ITEM_EVENTS)
    con.executemany("INSERT INTO jericho_room_events VALUES ('j2', ?, ?, ?)", J2_ROOM_EVENTS)
    for episode, gains in GAIN_EPISODES.items():
        con.execute("INSERT INTO episodes (episode_id, env, game, seed, agent, n_steps, ended_by) "
                    "VALUES (?, 'jericho', 'manor', 1, 'handmade', 8, 'step_limit')", [episode])
        con.executemany(f"INSERT INTO jericho_rooms {HEADER_ROOM_COLUMNS} VALUES (?, ?, ?, ?, TRUE)",
                        [(episode, 5, "Attic", "Attic"), (episode, 6, "Shed", "Shed")])
        con.executemany("INSERT INTO jericho_item_events VALUES (?, ?, ?, 'gained', ?)",
                        [(episode, step, item, room) for step, item, room in gains])
    derive_room_columns(con)


def _add_crafter(con) -> None:
    con.execute("INSERT INTO episodes (episode_id, env, game, seed, agent, n_steps, ended_by, death_step, "
                "death_cause) VALUES ('c2', 'crafter', 'crafter', 1, 'handmade', 12, 'death', 12, 'zombie')")
    con.executemany("INSERT INTO vocab VALUES ('crafter', ?, ?)",
                    [(kind, value) for kind, values in CRAFTER_VOCAB.items() for value in values])
    con.executemany("INSERT INTO crafter_map_init VALUES ('c2', ?, ?, ?)",
                    [(x, y, material) for (x, y), material in c2_map_after(0).items()])
    con.execute("INSERT INTO crafter_map_changes VALUES ('c2', ?, ?, ?, 'grass', 'table')",
                [C2_TABLE_STEP, *C2_TABLE_CELL])
    for step, action in enumerate(C2_ACTIONS, start=1):
        before, after = c2_map_after(0)[(C2_X[step - 1], 1)], c2_map_after(0)[(C2_X[step], 1)]
        con.execute("INSERT INTO crafter_steps VALUES ('c2', ?, ?, ?, 0, ?, 1, ?, 1, 'right', 'right', ?, ?, "
                    "1.0, FALSE, ?, NULL)", [step, action, C2_REASONS[step - 1], C2_X[step - 1], C2_X[step],
                                       before, after, step == len(C2_ACTIONS)])
    for step in range(len(C2_X)):
        counts = {"wood": C2_WOOD[step], "stone": 0, "sapling": 0, "health": C2_HEALTH[step],
                  "food": 9, "drink": C2_DRINK[step], "energy": 9}
        con.executemany("INSERT INTO crafter_inventory VALUES ('c2', ?, ?, ?)",
                        [(step, item, count) for item, count in counts.items()])
        cells = c2_map_after(step)
        con.executemany("INSERT INTO crafter_view VALUES ('c2', ?, ?, ?, ?)",
                        [(step, x, y, cells[(x, y)]) for x in range(C2_X[step] - 1, C2_X[step] + 2)
                         for y in range(3) if (x, y) in cells])
        if step >= 1:
            for item, counts_by_step in (("wood", C2_WOOD), ("health", C2_HEALTH), ("drink", C2_DRINK)):
                change = counts_by_step[step] - counts_by_step[step - 1]
                if change:
                    con.execute("INSERT INTO crafter_item_events VALUES ('c2', ?, ?, ?, ?)",
                                [step, item, "gained" if change > 0 else "lost", abs(change)])
    con.executemany("INSERT INTO crafter_achievements VALUES ('c2', ?, ?, ?)", C2_ACHIEVEMENTS)
    con.executemany("INSERT INTO crafter_collections VALUES ('c2', ?, ?, ?)", C2_COLLECTIONS)
    con.executemany("INSERT INTO crafter_damage VALUES ('c2', ?, ?, ?, ?)", C2_DAMAGE)
    con.execute("INSERT INTO episodes (episode_id, env, game, seed, agent, n_steps, ended_by, death_step, "
                "death_cause) VALUES ('c3', 'crafter', 'crafter', 1, 'handmade', 1, 'death', ?, ?)", list(C3_DEATH))
