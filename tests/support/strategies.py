"""Hypothesis strategies for random, valid episodes of both games, written as real trace files.

An episode is drawn as a short list of the agent's intents (move this way, take that item, mine the
cell ahead); the game state is then played forward by a few plain rules, so every trace is consistent
(inventories follow the takes and drops, the player only walks onto walkable cells, the map changes
where cells are mined or built on) and shrinks to a few readable steps. `write_episodes` writes the
episodes with the recorder's EpisodeWriter, so they reach the store exactly as recorded traces do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from qtc.dsl import crafter_data
from qtc.dsl.room_names import display_names, titles as room_titles
from qtc.runtime.trace.format import EpisodeWriter, episode_id

# ---- shared ----

# Reasons are made of these words, so keywords repeat across steps: keywords, stop words, short
# words, digits, and capitals (keywords are matched case-insensitively).
REASON_WORDS = ("find", "tree", "Tree", "forest", "explore", "explored", "lamp", "water", "north",
                "before", "then", "the", "it", "2nd", "1234", "dark", "zombie", "stone", "Stone")
SEPARATORS = (" ", " ", ", ", ". ", "! ", "? ", "-", "'", " (", ") ", "\n", "...")

reasons = st.one_of(
    st.none(),
    st.lists(st.tuples(st.sampled_from(REASON_WORDS), st.sampled_from(SEPARATORS)), min_size=1, max_size=6)
    .map(lambda parts: "".join(word + sep for word, sep in parts)))


def step_lists(steps: st.SearchStrategy, min_steps: int, max_steps: int) -> st.SearchStrategy:
    """Lists of steps whose length is drawn first, uniformly: long episodes are as likely as short ones
    (range questions need 10 to 50 steps), and shrinking a length cuts the episode at once."""
    return st.integers(min_steps, max_steps).flatmap(lambda n: st.lists(steps, min_size=n, max_size=n))


@dataclass
class TraceEpisode:
    """A drawn episode: its header and step records, exactly as a trace file holds them."""
    header: dict
    steps: list[dict]
    summary: list[str] = field(default_factory=list)  # one line per step, for failure reports

    @property
    def episode_id(self) -> str:
        return self.header["episode_id"]

    def __repr__(self) -> str:
        lines = "\n".join(f"    {line}" for line in self.summary)
        return f"TraceEpisode({self.episode_id}, {len(self.steps)} steps)\n{lines}"

    def _repr_pretty_(self, printer, cycle) -> None:  # how Hypothesis shows a falsifying example
        printer.text(repr(self))


def write_episodes(episodes: list[TraceEpisode], directory: Path) -> list[Path]:
    """Write each episode as a trace file (through the recorder's writer) into `directory`."""
    paths = []
    for episode in episodes:
        header = {k: v for k, v in episode.header.items() if k not in ("format", "format_version")}
        identity = {k: header[k] for k in ("episode_id", "env", "game", "seed", "agent")}
        writer = EpisodeWriter(directory, episode.episode_id, identity)
        for step in episode.steps:
            writer.write_step(step)
        paths.append(writer.finish(header))
    return paths


def distinct_seeds(episodes: st.SearchStrategy, min_size=1, max_size=2) -> st.SearchStrategy:
    """Lists of episodes with different ids (episode strategies take the seed as their argument)."""
    return st.lists(st.integers(0, 9), min_size=min_size, max_size=max_size, unique=True).flatmap(
        lambda seeds: st.tuples(*(episodes(seed) for seed in seeds)).map(list))


# ---- Jericho ----

JERICHO_GAME = "tinyzork"
# Item names: no name is a prefix of another, so a suffix added to one (tests/property/test_metamorphic.py)
# keeps every order between names. The brass bell (last, so the others keep their objects and rooms) shares
# a keyword with the brass key, and a command names an item by its last word ("take key"), so the bell is
# a confusable false premise beside a key got (CONVENTIONS.md, Answers).
ITEMS = ("brass key", "egg", "lamp", "leaflet", "rope", "sword", "brass bell")
ROOMS = {10: ("West of House", "West of House"), 20: ("Forest", "Forest (1)"), 21: ("Forest", "Forest (2)"),
         30: ("Clearing", "Clearing"), 40: ("Attic", "Attic")}
DIRECTIONS = ("north", "south", "east", "west", "up", "down")
IDLE_ACTIONS = ("look", "wait", "open mailbox", "inventory")
# The object tree: the player, the rooms (their numbers above), each item; an item not carried at the
# start lies in a room of its own (ITEM_ROOMS), "look" names the items lying in the player's room.
PLAYER = 1
ITEM_OBJECTS = {item: 100 + i for i, item in enumerate(ITEMS)}
ITEM_ROOMS = {"brass key": 10, "egg": 20, "lamp": 21, "leaflet": 30, "rope": 40, "sword": 10, "brass bell": 40}
NO_DIRECTION_MOVE = "climb tree"  # a move whose command names no direction
# Commands the parser refuses, with its reply (CONVENTIONS.md, Rejected commands).
REFUSED = {"frobnicate": 'I don\'t know the word "frobnicate".', "take": "What do you want to take?"}

jericho_intents = st.one_of(
    st.tuples(st.just("move"), st.sampled_from(DIRECTIONS + (NO_DIRECTION_MOVE,)), st.sampled_from(sorted(ROOMS))),
    st.tuples(st.just("take"), st.sampled_from(ITEMS)),
    st.tuples(st.just("drop"), st.sampled_from(ITEMS)),
    st.tuples(st.just("idle"), st.sampled_from(IDLE_ACTIONS)),
    st.tuples(st.just("refused"), st.sampled_from(sorted(REFUSED))),
)


@st.composite
def jericho_episodes(draw, seed: int = 0, min_steps: int = 1, max_steps: int = 40) -> TraceEpisode:
    room = draw(st.sampled_from(sorted(ROOMS)))
    inventory = draw(st.sets(st.sampled_from(ITEMS), max_size=2))
    intents = draw(step_lists(st.tuples(jericho_intents, reasons, st.sampled_from((0, 0, 0, 5, 10))),
                              min_steps, max_steps))
    # Most drawn episodes say which steps changed nothing; some are as recorded before they did.
    return jericho_episode(intents, room, inventory, with_valid_actions=draw(st.booleans()), seed=seed,
                           with_changes=draw(st.sampled_from((True, True, True, False))))


def visited_names(visited: list[int]) -> dict[int, str]:
    """The display names the recorder gives rooms visited in this order: titles that two share numbered."""
    return display_names({r: ROOMS[r][0] for r in visited})


def jericho_episode(intents: list[tuple], room: int = 10, inventory=(), with_valid_actions: bool = False,
                    seed: int = 0, with_changes: bool = True) -> TraceEpisode:
    """A Jericho episode played from `intents`: ((kind, *what), reason, reward) per step. A step changed
    the world when it moved an object or changed the score (CONVENTIONS.md, Changes); a refused command
    scores nothing."""
    inventory = sorted(inventory)
    initial = {"observation": f"{ROOMS[room][1]}.", "room": room, "inventory": inventory, "score": 0, "moves": 0}
    parents = {PLAYER: room, **{num: 0 for num in ROOMS},
               **{ITEM_OBJECTS[item]: PLAYER if item in inventory else ITEM_ROOMS[item] for item in ITEMS}}
    tree = [{"object": num, "parent": parent, "name": next((i for i, n in ITEM_OBJECTS.items() if n == num), None)}
            for num, parent in sorted(parents.items())]
    object_moves, unchanged_steps = [], []
    visited = [room]
    steps, summary, score, observation = [], [], 0, initial["observation"]
    for number, ((kind, *what), reason, reward) in enumerate(intents, start=1):
        before, inventory_before, parents_before = room, inventory, dict(parents)
        action, direction = what[0], None
        reward = 0 if kind == "refused" else reward
        if kind == "move":
            room = what[1]
            direction = what[0] if room != before and what[0] != NO_DIRECTION_MOVE else None
            parents[PLAYER] = room
        elif kind == "take":  # ("take", item, *also): the things after the first come with it (its contents)
            action = f"take {what[0].split()[-1]}"
            inventory = sorted(set(inventory) | set(what))
            for item in what:
                parents[ITEM_OBJECTS[item]] = PLAYER
        elif kind == "drop":
            action = f"drop {what[0]}"
            if what[0] in inventory:
                parents[ITEM_OBJECTS[what[0]]] = room
            inventory = sorted(set(inventory) - {what[0]})
        moves = [{"step": number, "object": num, "parent": parent}
                 for num, parent in sorted(parents.items()) if parents_before[num] != parent]
        object_moves += moves
        if not moves and reward == 0:
            unchanged_steps.append(number)
        if room not in visited:
            visited.append(room)
        score += reward
        after = REFUSED[action] if kind == "refused" else f"{ROOMS[room][1]}. You {action}."
        lying = [item for item in ITEMS if parents[ITEM_OBJECTS[item]] == room]
        if action == "look" and lying:
            after += f" You see: {', '.join(lying)}."
        steps.append({
            "step": number, "action": action, "reason": reason, "obs_before": observation, "obs_after": after,
            "reward": reward, "score": score, "moves": number, "room_before": before, "room_after": room,
            "moved": room != before, "direction": direction, "inventory_before": inventory_before,
            "inventory_after": inventory, "valid_actions": sorted(IDLE_ACTIONS) if with_valid_actions else None,
            "done": False})
        summary.append(f"{number:>2} {action:<14} {before}->{room} inv={','.join(inventory) or '-'} "
                       f"score={score} reason={reason!r}")
        observation = after
    header = {
        "episode_id": episode_id(JERICHO_GAME, "random", seed), "env": "jericho", "game": JERICHO_GAME,
        "seed": seed, "agent": "random", "n_steps": len(steps), "ended_by": "step_limit",
        "death_step": None, "death_cause": None, "rom": f"{JERICHO_GAME}.z5",
        "vocab": {"item": list(ITEMS), "direction": list(DIRECTIONS)},
        "rooms": [{"room": r, "name": ROOMS[r][0], "display_name": name} for r, name in visited_names(visited).items()],
        "unvisited_rooms": [{"room": r, "name": ROOMS[r][0], "display_name": ROOMS[r][0]}
                            for r in sorted(set(ROOMS) - set(visited))
                            if [o for o in ROOMS if ROOMS[o][0] == ROOMS[r][0]] == [r]],  # a name no other room has
        "initial": initial,
        "objects": {"player": PLAYER, "tree": tree, "moves": object_moves},
        "unchanged_steps": unchanged_steps if with_changes else None,
    }
    start = f"start in {initial['room']} inv={','.join(initial['inventory']) or '-'}"
    return TraceEpisode(header, steps, [start, *summary])


# ---- Crafter ----

MATERIALS = crafter_data.MATERIALS
STATS = crafter_data.STATS
DRIFTING = tuple(s for s in STATS if s != "health")
# Crafter's view is 9 x 7; a 5 x 3 view keeps what the player has seen apart from the true map on
# maps this small (cells=seen), and keeps the view table, and so the reference evaluator, small.
VIEW_WIDTH, VIEW_HEIGHT = 5, 3
DAMAGE_CAUSES = (("zombie", True), ("skeleton", True), ("starvation", False), ("thirst", False))
CREATURE_KINDS = ("zombie", "skeleton", "cow")
FACING_OFFSETS = {name: offset for offset, name in crafter_data.FACINGS.items()}


@st.composite
def crafter_maps(draw) -> list[list[str]]:
    """A small map (rows[y][x] material names) that holds every material at least once."""
    width, height = draw(st.integers(4, 8)), draw(st.integers(4, 7))
    cells = draw(st.lists(st.sampled_from(MATERIALS), min_size=width * height, max_size=width * height))
    for material in MATERIALS:
        if material not in cells:  # put it on the first cell whose material occurs elsewhere too
            spare = next(i for i, m in enumerate(cells) if cells.count(m) > 1)
            cells[spare] = material
    return [cells[y * width:(y + 1) * width] for y in range(height)]


# How food, drink and energy change in a step (health only falls through damage).
DRIFTS = ((0, 0, 0), (-1, 0, 0), (0, -1, 0), (0, 0, -1), (1, 1, 1))
RESTED = (1, 1, 1)  # a step that also gives back a point of health
NO_DAMAGE = (None,) * 7  # damage in about one step of eight, so that episodes tend to live 40 steps
CREATURE_PLACES = tuple((kind, i, j) for kind in CREATURE_KINDS for i in range(0, VIEW_WIDTH, 2)
                        for j in range(0, VIEW_HEIGHT, 2))

crafter_intents = st.tuples(
    st.sampled_from(crafter_data.ACTIONS),
    reasons,
    st.sampled_from(DRIFTS),
    st.sampled_from(NO_DAMAGE) | st.tuples(st.sampled_from(DAMAGE_CAUSES), st.integers(1, 2)),  # damage taken
    st.lists(st.sampled_from(CREATURE_PLACES), max_size=1),  # a creature in view
    st.booleans(),  # whether a `do` on grass finds a sapling
)


class CrafterWorld:
    """The little game the Crafter strategy plays: walkability, mining and building by Crafter's data."""

    def __init__(self, rows: list[list[str]], x: int, y: int):
        self.rows = [list(row) for row in rows]
        self.x, self.y, self.facing = x, y, "down"
        self.inventory = {k: (9 if k in STATS else 0) for k in crafter_data.INVENTORY_KEYS}

    def material(self, x: int, y: int) -> str | None:
        inside = 0 <= y < len(self.rows) and 0 <= x < len(self.rows[0])
        return self.rows[y][x] if inside else None

    def view(self) -> dict:
        x0, y0 = self.x - VIEW_WIDTH // 2, self.y - VIEW_HEIGHT // 2
        return {"x": x0, "y": y0, "rows": [[self.material(x0 + i, y0 + j) for i in range(VIEW_WIDTH)]
                                           for j in range(VIEW_HEIGHT)]}

    def act(self, action: str, sapling: bool) -> tuple[list[str], list[dict]]:
        """Play one action; returns the achievements it counts and the cells it changed."""
        dx, dy = FACING_OFFSETS[self.facing]
        if action.startswith("move_"):
            self.facing = action.removeprefix("move_")
            dx, dy = FACING_OFFSETS[self.facing]
            if self.material(self.x + dx, self.y + dy) in crafter_data.WALKABLE:
                self.x, self.y = self.x + dx, self.y + dy
            return [], []
        tx, ty = self.x + dx, self.y + dy
        target = self.material(tx, ty)
        if action == "do" and target in crafter_data.COLLECT and (target != "grass" or sapling):
            rule = crafter_data.COLLECT[target]
            for item, amount in rule["receive"].items():
                self.inventory[item] = min(9, self.inventory[item] + amount)
            return [f"collect_{item}" for item in rule["receive"]], self._change(tx, ty, rule["leaves"])
        if action.startswith("place_"):
            thing = action.removeprefix("place_")
            rule = crafter_data.PLACE[thing]
            if target not in rule["where"]:
                return [], []
            for item, amount in rule["uses"].items():
                self.inventory[item] = max(0, self.inventory[item] - amount)
            return [action], self._change(tx, ty, thing) if rule["type"] == "material" else []
        if action.startswith("make_"):
            made = action.removeprefix("make_")
            self.inventory[made] = min(9, self.inventory[made] + 1)
            return [action], []
        return [], []

    def _change(self, x: int, y: int, after: str) -> list[dict]:
        before, self.rows[y][x] = self.rows[y][x], after
        return [{"x": x, "y": y, "before": before, "after": after}] if before != after else []


def _creatures(placed: list[tuple[str, int, int]], view: dict) -> list[dict]:
    """Creatures placed in the view, sorted as the recorder sorts them."""
    seen = [{"creature": kind, "x": view["x"] + i, "y": view["y"] + j, "health": 3} for kind, i, j in placed]
    return sorted(seen, key=lambda c: (c["y"], c["x"], c["creature"]))


def _describe_changes(changes: list[dict]) -> str:
    return " ".join(f"{c['x']},{c['y']}:{c['after']}" for c in changes)


@st.composite
def crafter_episodes(draw, seed: int = 0, min_steps: int = 1, max_steps: int = 40) -> TraceEpisode:
    rows = draw(crafter_maps())
    walkable = [(x, y) for y, row in enumerate(rows) for x, m in enumerate(row) if m in crafter_data.WALKABLE]
    start = draw(st.sampled_from(walkable))
    return crafter_episode(rows, start, draw(step_lists(crafter_intents, min_steps, max_steps)), seed)


def crafter_episode(rows: list[list[str]], start: tuple[int, int], intents: list[tuple], seed: int = 0) -> TraceEpisode:
    """A Crafter episode played on the map `rows` from `start`, one intent per step (see crafter_intents)."""
    world = CrafterWorld(rows, *start)
    initial = {"x": world.x, "y": world.y, "facing": world.facing, "terrain": world.material(world.x, world.y),
               "inventory": dict(world.inventory), "view": world.view(), "creatures": []}
    steps, summary = [], []
    death_step = death_cause = None
    for number, (action, reason, drift, hurt, placed, sapling) in enumerate(intents, start=1):
        before = {"x": world.x, "y": world.y, "facing": world.facing, "terrain": world.material(world.x, world.y)}
        achievements, changes = world.act(action, sapling)
        for stat, change in zip(DRIFTING, drift):
            world.inventory[stat] = max(0, min(9, world.inventory[stat] + change))
        if drift == RESTED:
            world.inventory["health"] = min(9, world.inventory["health"] + 1)
        damage = []
        if hurt is not None:
            (cause, attack), amount = hurt
            amount = min(amount, world.inventory["health"])
            if amount:
                world.inventory["health"] -= amount
                damage = [{"amount": amount, "cause": cause, "attack": attack}]
        view = world.view()
        dead = world.inventory["health"] == 0
        steps.append({
            "step": number, "action": action, "reason": reason, "reward": float(len(achievements)),
            "x_before": before["x"], "y_before": before["y"], "x_after": world.x, "y_after": world.y,
            "facing_before": before["facing"], "facing_after": world.facing,
            "terrain_before": before["terrain"], "terrain_after": world.material(world.x, world.y),
            "daylight": round(1 - number / 100, 2), "sleeping": action == "sleep", "done": dead,
            "inventory": dict(world.inventory), "view": view, "creatures": _creatures(placed, view),
            "achievements": achievements, "map_changes": changes, "damage": damage})
        summary.append(f"{number:>2} {action:<18} ({before['x']},{before['y']})->({world.x},{world.y}) "
                       f"{' '.join(achievements)} {_describe_changes(changes)} "
                       f"hp={world.inventory['health']} reason={reason!r}")
        if dead:
            death_step, death_cause = number, damage[-1]["cause"] if damage else "unknown"
            break
    materials = [None, *MATERIALS]
    header = {
        "episode_id": episode_id("crafter", "random", seed), "env": "crafter", "game": "crafter",
        "seed": seed, "agent": "random", "n_steps": len(steps),
        "ended_by": "death" if death_step else "step_limit", "death_step": death_step, "death_cause": death_cause,
        "ordered_objects": True, "vocab": crafter_data.vocabulary(),
        "map_init": {"materials": materials, "rows": [[materials.index(m) for m in row] for row in rows]},
        "initial": initial,
    }
    map_lines = [" ".join(m[:4] for m in row) for row in rows]
    return TraceEpisode(header, steps, [*map_lines, f"start {start}", *summary])

EPISODES = {"jericho": jericho_episodes, "crafter": crafter_episodes}


def episode_sets(env: str, min_steps: int = 1) -> st.SearchStrategy:
    """One episode of up to 30 steps, and sometimes a second, short one (maybe empty)."""
    envs = list(EPISODES) if env == "any" else [env]
    return st.tuples(
        st.sampled_from(envs).flatmap(lambda e: EPISODES[e](seed=0, min_steps=min_steps, max_steps=30)),
        st.lists(st.sampled_from(envs).flatmap(lambda e: EPISODES[e](seed=1, min_steps=0, max_steps=8)),
                 max_size=1),
    ).map(lambda drawn: [drawn[0], *drawn[1]])


def horizons(episodes: list[TraceEpisode]) -> st.SearchStrategy:
    """No horizon, or one anywhere from the first step to past the longest episode."""
    longest = max(len(e.steps) for e in episodes)
    return st.none() | st.integers(1, longest + 2)


def seeded_episode(env: str, seed: int, n_steps: int = 30) -> TraceEpisode:
    """An episode whose intents come from a seeded pseudo-random generator, not from Hypothesis: a
    fixed, rich example that covers every template (tests/property/test_reference_differential.py checks that)."""
    chance = random.Random(seed)
    words = lambda: chance.choice([None, *(" ".join(chance.choices(REASON_WORDS, k=4)) + "." for _ in range(3))])  # noqa: E731
    if env == "jericho":
        intents = []
        for _ in range(n_steps):
            kind = chance.choice(["move", "move", "take", "drop", "idle"])
            what = {"move": lambda: (chance.choice(DIRECTIONS + (NO_DIRECTION_MOVE,)), chance.choice(sorted(ROOMS))),
                    "take": lambda: (chance.choice(ITEMS),), "drop": lambda: (chance.choice(ITEMS),),
                    "idle": lambda: (chance.choice(IDLE_ACTIONS),)}[kind]()
            intents.append(((kind, *what), words(), chance.choice((0, 0, 0, 5, 10))))
        return jericho_episode(intents, chance.choice(sorted(ROOMS)), (), with_valid_actions=True, seed=seed)
    width, height = 8, 7
    cells = [chance.choice(MATERIALS) for _ in range(width * height)]
    cells[:len(MATERIALS)] = MATERIALS
    rows = [cells[y * width:(y + 1) * width] for y in range(height)]
    start = chance.choice([(x, y) for y, row in enumerate(rows) for x, m in enumerate(row) if m in crafter_data.WALKABLE])
    intents = [(chance.choice(crafter_data.ACTIONS[:6] * 3 + crafter_data.ACTIONS), words(), chance.choice(DRIFTS),
                chance.choice([*NO_DAMAGE, *((cause, 1) for cause in DAMAGE_CAUSES)]),
                chance.sample(CREATURE_PLACES, chance.randint(0, 1)), chance.random() < 0.5)
               for _ in range(n_steps)]
    return crafter_episode(rows, start, intents, seed)


def truncated(episode: TraceEpisode, horizon: int) -> TraceEpisode:
    """The episode as if recording had stopped after step `horizon` (a death after it never happened)."""
    if len(episode.steps) <= horizon:
        return episode
    died = episode.header["death_step"] is not None and episode.header["death_step"] <= horizon
    header = {**episode.header, "n_steps": horizon, "ended_by": "step_limit",
              "death_step": episode.header["death_step"] if died else None,
              "death_cause": episode.header["death_cause"] if died else None}
    # Jericho lists the rooms seen, in order of first visit, numbered among them. A room first entered
    # after the horizon is in no list (the recorder would list it as unvisited under the game's short name
    # only where no other room shares its words).
    if "rooms" in header:
        seen = {episode.header["initial"]["room"]} | {s["room_after"] for s in episode.steps[:horizon]}
        titles = dict(zip((r["room"] for r in header["rooms"]), room_titles([r["display_name"] for r in header["rooms"]])))
        names = display_names({r["room"]: titles[r["room"]] for r in header["rooms"] if r["room"] in seen})
        header["rooms"] = [{**r, "display_name": names[r["room"]]} for r in header["rooms"] if r["room"] in seen]
    if "objects" in header:  # and the tree's changes up to the horizon
        objects = header["objects"]
        header["objects"] = {**objects, "moves": [m for m in objects["moves"] if m["step"] <= horizon]}
    if header.get("unchanged_steps"):
        header["unchanged_steps"] = [step for step in header["unchanged_steps"] if step <= horizon]
    return TraceEpisode(header, episode.steps[:horizon], episode.summary)


LIST_EDITS = ("drop", "repeat", "swap")


def edited(items: list, edit: str, i: int, j: int) -> list:
    """`items` with item i dropped, repeated, or swapped with item j (for the fuzzers' corruptions)."""
    items = list(items)
    if edit == "drop":
        del items[i]
    elif edit == "repeat":
        items.insert(i, items[i])
    else:
        items[i], items[j] = items[j], items[i]
    return items
