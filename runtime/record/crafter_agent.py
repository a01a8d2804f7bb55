"""The scripted Crafter agent: a seeded policy that tries to live long, and says why it acts.

It knows only what the recorder shows it (the local view, the creatures in it, its inventory, the
daylight, whether it sleeps) and its memory of every cell it has seen. Each step it takes the most
urgent of its goals:

1. asleep: wait to wake up;
2. a zombie or skeleton next to it: fight (a zombie follows whoever flees);
3. sealed in a shelter: eat a ripe plant of its home or drink from water by the wall, sleep, or wait
   for daylight (or a plant about to ripen, or a zombie to go), then dig its way out; in its home it
   stays (sleeping whenever not fully rested) but for food no plant will give in time, or one outing a
   day in full daylight, healthy and fed, for a tool or material seen near home away from tunnels;
   leaving its home, it fills the pocket behind it with stone;
4. its home (crafter_farm.py): once it holds the saplings and the stone (and wood for tables), plant
   and wall in three plants round a shelter's pocket that has water in its wall: food that grows again
   and drink, without going out;
5. thirst or hunger: walk to the nearest water it has seen and drink until full; chase a cow in view
   (else go where it last saw one: a cow far from the player stands still, or to grass not seen
   lately, near its home if it has one), or go home to eat a ripe plant;
6. night (or, once it has a home, the light falling), low energy or low health: go home if near (it
   keeps two stones for its door), else dig a two-cell pocket into stone, or wall one
   in with placed stone, and seal it with a stone placed from inside (zombies walk only on grass, sand
   and path and hit only from a next cell; arrows stop at stone);
7. tools: a table, then the pickaxes and swords Crafter's recipes allow, a furnace for the iron ones;
8. materials: wood, stone (shelters and tools), coal, iron, diamond, when seen; saplings for its home,
   and a site for it by water (exploring for one);
9. else rest in its shelter, or explore: walk to the nearest seen ground next to unseen cells (within
   HOME_RANGE of its home once it has one).

Its reason for each step is that goal and its plan, made from the state that chose the action
("drink: drink 3/9, water 4 steps away"). It never walks into lava (routes cross walkable cells only).
Everything is computed from its seed and the states it was shown, so recordings are reproducible.
"""

from __future__ import annotations

import heapq
import random

from qtc.dsl import crafter_data as data

from .choice import Choice
from .crafter_farm import (HOMEWARD, HUNGER_STEPS, HUNGRY, PLANT_FOOD, RIPE, SAPLINGS, SITE_RETRY, SITE_SEARCH, WOUNDED,
                           Farm, HomeBuilding, moved as _step)

Cell = tuple[int, int]

# Zombies spawn on grass as the light fails (Env._balance_chunk): one a chunk below 0.83, up to 3 at full
# dark, and they linger after (they leave as the light comes back, all of them above 0.84). The agent
# shelters once the light falls below DUSK and stays until it is back to DAWN (of each 300-step day,
# about step 140 to step 7 of the next); while it falls below EVENING it tops up food and drink.
DUSK, DAWN, EVENING = 0.6, 0.85, 0.9
LIGHT_TO_FORAGE = 0.45
# Cells a shelter's walls may be: no zombie passes them, arrows do not break them (an arrow turns a table
# or a furnace into path), and the agent can turn to them without stepping in (lava it could). Arrows
# fly over water, but skeletons keep to the tunnels; water in a wall lets the agent drink from inside.
# Cells outside the world stop everything too.
OUTSIDE = "outside"
WALLS = frozenset({"stone", "coal", "iron", "diamond", "tree", "water", OUTSIDE})
# Stats at or below these send the agent to eat or drink before anything else; it then keeps at it until
# the stat is at least the second number.
URGENT, TOPPED_UP = 2, 6
EAT_AT = 7         # food at which it hunts a cow in view (a cow gives 6; cows are few)
TIRED = 3          # energy at which it goes to sleep whatever the hour
EXHAUSTED = 1      # energy at which sleep comes before food and drink
STOCK = {"wood": 5, "stone": 9, "coal": 2, "iron": 2, "diamond": 1}
UPDATED = 18       # the game updates objects nearer the player than this (2 x the view's size)
HOME_RANGE = 12    # how far from its home it explores once it has one (its plants grow only while it is near)
HOME_TRAVEL = 80   # steps it walks back to its home for the night, rather than dig a shelter where it is
COW_MEMORY = 300   # steps a cow seen is looked for where it was (counted while the game updates it: a cow
                   # far from the player stands still)
COW_STALE = 100    # steps after which ground seen is worth seeing again for a cow
STALE = 300        # steps after which ground seen is worth exploring again
NEAR = 20          # materials further than this (steps) are left for later, unless needed for a tool
TOOLS = ("wood_pickaxe", "wood_sword", "stone_pickaxe", "stone_sword", "iron_pickaxe", "iron_sword")
# What a material can be mined with (Crafter's collect rules), and what it gives.
MINE = {material: info for material, info in data.COLLECT.items() if material not in ("water", "grass")}
ENEMIES = ("zombie", "skeleton")
RISK = 8           # what a step into danger costs a route, in steps
DOOR_STONE = 2     # stone it holds when out of its home: one seals the door, one closes the plants' cell
SHOT = 5           # a skeleton shoots at a player this near (Skeleton.update)


def _offsets(a: Cell, b: Cell) -> tuple[int, int]:
    return b[0] - a[0], b[1] - a[1]


def _named(item: str) -> str:
    """A Crafter item as a reason names it: 'a wood pickaxe', 'an iron sword'."""
    words = item.replace("_", " ")
    return f"{'an' if words[0] in 'aeiou' else 'a'} {words}"


class ScriptedCrafterAgent(HomeBuilding):
    """See the module: a survival policy for Crafter with its goal and plan as its reason."""

    name = "scripted"

    def __init__(self, seed: int):
        self._rng = random.Random(seed)
        self._map: dict[Cell, str] = {}
        self._explore_target: Cell | None = None
        self._heading = "move_left"
        self._goal: str | None = None       # "drink" or "eat" while topping up
        self._site: tuple[Cell, tuple[int, int]] | None = None   # shelter: door cell and direction inward
        self._door: Cell | None = None      # the stone that seals the shelter the agent is in
        # Ground first seen as path is a tunnel, where skeletons live: routes avoid it (path the agent
        # made by mining is not).
        self._tunnels: set[Cell] = set()
        self._daylight = 1.0
        self._rising = False
        self._seen_at: dict[Cell, int] = {}   # the last step each cell was in view
        self._placed: set[Cell] = set()       # stones it placed: walls, never mined for stone
        self._cows: dict[Cell, tuple[int, int]] = {}   # where a cow was: the step seen, and its updates since
        self._plants: dict[Cell, int] = {}
        self._home: Farm | None = None       # its home once built, and the one it is building
        self._farm: Farm | None = None
        self._closing = False                # to fill its home's pocket with stone, leaving it
        self._farm_search_at = -SITE_RETRY   # the step it last looked for a site for its home
        self._outing_day = 0                 # the day of its last outing from its home (one a day)

    # -- what the agent sees and remembers ------------------------------------------------------------

    def _remember(self, state: dict) -> None:
        view = state["view"]
        for j, row in enumerate(view["rows"]):
            for i, material in enumerate(row):
                cell = (view["x"] + i, view["y"] + j)
                if material == "path" and cell not in self._map:
                    self._tunnels.add(cell)
                self._map[cell] = OUTSIDE if material is None else material
        falling = state["daylight"] < self._daylight
        self._rising = state["daylight"] > self._daylight
        self._evening = falling and state["daylight"] < EVENING
        self._homeward = falling and state["daylight"] < HOMEWARD
        self._night = state["daylight"] < (DUSK if falling else DAWN)
        self._daylight = state["daylight"]
        self._here = (state["x"], state["y"])
        self._facing = next(o for o, name in data.FACINGS.items() if name == state["facing"])
        self._creatures = {(c["x"], c["y"]): c["creature"] for c in state["creatures"]}
        # Cells next to a zombie or a skeleton: routes keep out of them (a zombie hits from there).
        self._threatened = {_step(cell, o) for cell, kind in self._creatures.items()
                            if kind in (*ENEMIES, "arrow") for o in (*data.MOVES.values(), (0, 0))}
        # A skeleton shoots along its row or column at up to SHOT cells.
        self._threatened |= {(cell[0] + i * ox, cell[1] + i * oy) for cell, kind in self._creatures.items()
                             if kind == "skeleton" for ox, oy in data.MOVES.values() for i in range(1, SHOT + 1)}
        self._reach: dict[Cell, tuple[int, str]] | None = None
        self._step = state["step"]
        view_cells = ((view["x"] + i, view["y"] + j) for j, row in enumerate(view["rows"]) for i in range(len(row)))
        view_cells = set(view_cells)
        self._seen_at.update(dict.fromkeys(view_cells, self._step))
        # Cows seen: where each was last, forgotten once that cell is seen without it or after COW_MEMORY steps.
        self._cows = {cell: (seen, updates + self._updated(cell)) for cell, (seen, updates) in self._cows.items()
                      if cell not in view_cells and updates < COW_MEMORY}
        self._cows.update({cell: (self._step, 0) for cell, kind in self._creatures.items() if kind == "cow"})
        # Its plants, and how long each has grown: a plant grows a step while the player is near enough
        # for the game to update it (Env.step), and is gone once seen without it (eaten by a creature).
        self._plants = {cell: grown + self._updated(cell) for cell, grown in self._plants.items()
                        if cell not in view_cells or self._creatures.get(cell) == "plant"}

    def _updated(self, cell: Cell) -> bool:
        return abs(cell[0] - self._here[0]) + abs(cell[1] - self._here[1]) < UPDATED

    def _walkable(self, cell: Cell) -> bool:
        return self._map.get(cell) in data.WALKABLE and cell not in self._creatures

    def _wall(self, cell: Cell) -> bool:
        """Whether a cell stops zombies and arrows: a wall material, or a plant of its own (an object there
        keeps creatures out; an arrow hitting it stops). A plant's cell of its home stays one when the plant
        is lost: fenced all round but for the pocket, it opens to nothing (else the home is no shelter)."""
        return ((self._map.get(cell) in WALLS and cell not in self._creatures) or cell in self._plants
                or (self._home is not None and cell in self._home.plants))

    def _fenced(self, cell: Cell) -> bool:
        """Whether no creature can step on a cell: a known cell that is not ground, or one of its plants."""
        return cell in self._map and (self._map[cell] not in data.WALKABLE or cell in self._plants)

    def _routes(self) -> dict[Cell, tuple[int, str]]:
        """Every remembered cell the agent can walk to, nearest first: the steps and the first move of the
        safest short route to it (a step next to a zombie, in a skeleton's line or in a tunnel counts as RISK steps)."""
        if self._reach is None:
            reach: dict[Cell, tuple[int, str]] = {}
            queue = [(0, 0, self._here, "noop")]
            while queue:
                cost, steps, cell, first = heapq.heappop(queue)
                if cell in reach:
                    continue
                reach[cell] = (steps, first)
                for action, offset in data.MOVES.items():
                    nxt = _step(cell, offset)
                    if nxt not in reach and self._walkable(nxt):
                        extra = RISK if nxt in self._threatened or nxt in self._tunnels else 1
                        heapq.heappush(queue, (cost + extra, steps + 1, nxt, first if steps else action))
            self._reach = reach
        return self._reach

    def _nearest_next_to(self, wanted) -> tuple[int, Cell, Cell] | None:
        """The nearest cell to stand on next to a cell for which wanted(cell) holds: (distance, stand, target)."""
        for stand, (distance, _) in self._routes().items():
            for offset in data.MOVES.values():
                target = _step(stand, offset)
                if wanted(target):
                    return distance, stand, target
        return None

    def _go(self, stand: Cell, target: Cell, act: str, reason: str) -> Choice:
        """Walk to `stand`, face `target` (a cell one cannot enter, so turning towards it moves nothing), act."""
        if stand != self._here:
            return Choice(self._routes()[stand][1], reason)
        offset = _offsets(self._here, target)
        if offset != self._facing:
            return Choice(f"move_{data.FACINGS[offset]}", reason)
        return Choice(act, reason)

    # -- the policy -----------------------------------------------------------------------------------

    def choose(self, state: dict) -> Choice:
        self._remember(state)
        choice = self._choose(state)
        ahead = _step(self._here, self._facing)
        if choice.action == "place_stone":
            self._placed.add(ahead)
        elif choice.action == "place_plant":
            self._plants[ahead] = 0
        elif choice.action == "do" and ahead in self._plants and self._plants[ahead] > RIPE:
            self._plants[ahead] = 0  # eaten: it grows again from nothing
        return choice

    def _choose(self, state: dict) -> Choice:
        inv = state["inventory"]
        if state["sleeping"]:
            return Choice("noop", f"asleep: energy {inv['energy']}/{data.MAXIMUM['energy']}, waking when full")
        # Food and drink come before the shelter while there is light enough to find them.
        return (self._fight(inv) or self._in_shelter(state, inv) or self._close_home(inv)
                or (inv["energy"] <= EXHAUSTED and self._shelter(state, inv)) or self._urgent_needs(inv)
                # The stone that seals its home's door behind it, before anything else.
                or (self._home and not inv["stone"] and self._materials(inv, "stone", DOOR_STONE))
                or (self._goal is None and self._build_home(inv))
                or (state["daylight"] >= LIGHT_TO_FORAGE and self._needs(inv))
                or self._shelter(state, inv) or self._needs(inv)
                or self._tools(inv)
                or (inv["wood_sword"] and inv["stone"] >= STOCK["stone"] // 2 and self._sapling(inv))
                or self._materials(inv) or self._sapling(inv)
                # All in hand but no site known with water in its wall: it looks further.
                or (not self._home and self._farm is None and inv["sapling"] >= SAPLINGS and inv["wood_pickaxe"]
                    and self._explore("look for a home site by water"))
                or self._shelter(state, inv, idle=True)
                or self._explore(near_home=True))

    def _fight(self, inv: dict) -> Choice | None:
        for offset in data.MOVES.values():
            enemy = self._creatures.get(_step(self._here, offset))
            if enemy in ENEMIES:
                return self._go(self._here, _step(self._here, offset), "do",
                                f"fight: {enemy} next to me, health {inv['health']}/{data.MAXIMUM['health']}")
        return None

    def _enclosed(self) -> bool:
        """Whether the agent stands in a pocket of at most 3 cells walled all round (no creature inside)."""
        pocket, todo = {self._here}, [self._here]
        while todo:
            cell = todo.pop()
            for offset in data.MOVES.values():
                nxt = _step(cell, offset)
                material = self._map.get(nxt)
                if nxt in pocket or self._wall(nxt):
                    continue
                if material not in data.WALKABLE or nxt in self._creatures or len(pocket) == 3:
                    return False
                pocket.add(nxt)
                todo.append(nxt)
        return True

    def _in_shelter(self, state: dict, inv: dict) -> Choice | None:
        if not self._enclosed():
            self._door = None
            return None
        self._site = None
        if inv["food"] <= data.MAXIMUM["food"] - PLANT_FOOD:
            ripe = self._nearest_next_to(lambda c: self._plants.get(c, 0) > RIPE)
            if ripe:
                return self._go(*ripe[1:], "do", f"eat a ripe plant in my shelter: food {inv['food']}/"
                                                 f"{data.MAXIMUM['food']}")
        if inv["drink"] < data.MAXIMUM["drink"] and not state["sleeping"]:
            water = self._nearest_next_to(lambda c: self._map.get(c) == "water")
            if water:
                return self._go(*water[1:], "do", f"drink in my shelter: drink {inv['drink']}/"
                                                  f"{data.MAXIMUM['drink']}, water by the wall")
        if self._home and self._here in (self._home.first, self._home.second):
            return self._at_home(state, inv)
        energy, top = inv["energy"], data.MAXIMUM["energy"]
        # Out of food or drink, health drains by 1 in 16 steps at most, slower than zombies at night
        # would take it: at night the agent stays in unless it is about to die of it.
        starving = min(inv["food"], inv["drink"]) == 0
        hungry = (starving and inv["health"] <= WOUNDED - 1) if self._night else min(inv["food"], inv["drink"]) <= 1
        if (energy < top if self._night else energy <= TIRED) and not hungry:
            return Choice("sleep", f"sleep: energy {energy}/{top}, sealed in my shelter")
        if (self._night or (self._home and self._homeward)) and not hungry:
            return Choice("noop", f"wait for daylight in my shelter: daylight {state['daylight']:.2f}")
        if inv["health"] <= WOUNDED and not hungry:
            return Choice("noop", f"heal in my shelter: health {inv['health']}/{data.MAXIMUM['health']}")
        near = self._enemy_near()
        if near and not hungry:
            return Choice("noop", f"wait in my shelter: a {near} outside, health {inv['health']}/"
                                  f"{data.MAXIMUM['health']}")
        if not self._needy(inv):
            return Choice("noop", f"rest in my shelter: nothing needed, food {inv['food']}/"
                                  f"{data.MAXIMUM['food']}, drink {inv['drink']}/{data.MAXIMUM['drink']}")
        ripening = self._ripening(self._here)
        if ripening is not None and inv["drink"] > TOPPED_UP and ripening < (inv["food"] - 1) * HUNGER_STEPS:
            return Choice("noop", f"wait in my shelter for a plant to ripen: about {ripening} steps, "
                                  f"food {inv['food']}/{data.MAXIMUM['food']}")
        return self._leave(f"food {inv['food']}/{data.MAXIMUM['food']}, drink {inv['drink']}/{data.MAXIMUM['drink']}")

    def _leave(self, why: str) -> Choice | None:
        """Dig out of the shelter through its door (at its home, closing the plants' cell behind it first)."""
        door = self._door or next((_step(self._here, o) for o in data.MOVES.values()
                                   if self._map.get(_step(self._here, o)) in MINE), None)
        if door is None or abs(door[0] - self._here[0]) + abs(door[1] - self._here[1]) != 1:
            return None
        self._closing = self._home is not None and self._here == self._home.first
        return self._go(self._here, door, "do", f"leave the shelter: {why}, dig out the door")

    def _wanted_outside(self, inv: dict) -> str | None:
        """What it would go out of its home for: a tool it has the materials for, or a material it wants
        that it saw near its home."""
        for tool in TOOLS:
            if not inv[tool] and all(inv[k] >= v for k, v in data.MAKE[tool]["uses"].items()):
                return _named(tool)
        for material, rule in MINE.items():
            (item, _), = rule["receive"].items()
            if inv[item] < STOCK.get(item, 0) and all(inv[k] >= v for k, v in rule["require"].items()) and any(
                    kind == material and cell not in self._placed and not self._home_wall(cell)
                    and self._home.near(cell, HOME_RANGE) and not self._by_tunnel(cell)
                    for cell, kind in self._map.items()):
                return item
        return None

    def _enemy_near(self) -> str | None:
        """A zombie or skeleton in view within a skeleton's shot, if any."""
        return next((kind for cell, kind in self._creatures.items() if kind in ENEMIES
                     and abs(cell[0] - self._here[0]) + abs(cell[1] - self._here[1]) <= SHOT), None)

    def _by_tunnel(self, cell: Cell) -> bool:
        """Whether a cell is within a skeleton's shot of a tunnel: once it has a home, it keeps away."""
        return any((cell[0] + i, cell[1] + j) in self._tunnels
                   for i in range(-SHOT, SHOT + 1) for j in range(-SHOT, SHOT + 1) if abs(i) + abs(j) <= SHOT)

    def _needy(self, inv: dict) -> bool:
        """Whether the agent should go for food or drink if it can (more before the night)."""
        extra = 2 if self._evening else 0
        return inv["drink"] <= TOPPED_UP + extra or inv["food"] <= HUNGRY + extra

    def _urgent_needs(self, inv: dict) -> Choice | None:
        # At night the zombies outside are worse than hunger until health runs low and food or drink is out.
        if self._night and (inv["health"] > WOUNDED - 2 or min(inv["food"], inv["drink"]) > 0):
            return None
        if inv["drink"] <= URGENT or inv["food"] <= URGENT:
            return self._needs(inv, urgent=True)
        return None

    def _needs(self, inv: dict, urgent: bool = False) -> Choice | None:
        """Drink, then eat: the urgent only, or (not urgent) what is low, more before the night, and
        what it is topping up (a goal kept until the stat is high)."""
        extra = 2 if self._evening else 0
        top = data.MAXIMUM
        # Once at the water it drinks its fill, urgent or not (a sip would send it back soon).
        drink = self._top_up(inv, "drink", "drink", URGENT if urgent else TOPPED_UP + extra,
                             top["drink"], "water", lambda c: self._map.get(c) == "water")
        if drink:
            return drink
        # A cow gives 6 food: it hunts one in view at 6 at most, evening or not.
        hunt = URGENT if urgent else min(EAT_AT + extra, top["food"] - 3)
        eat = self._top_up(inv, "eat", "food", hunt, 0 if urgent else top["food"] - 2, "cow",
                           lambda c: self._creatures.get(c) == "cow")
        if eat:
            return eat
        eat = self._top_up(inv, "eat", "food", hunt, 0, "ripe plant", lambda c: self._plants.get(c, 0) > RIPE)
        if eat:
            return eat
        home = self._home and (self._home.door, self._home.inward)
        if (home and inv["food"] <= top["food"] - PLANT_FOOD and self._ripening(self._home.second) == 0
                and self._site_cost(*home, inv) is not None):
            self._site = home
            return self._go_shelter(f"go home to eat a ripe plant: food {inv['food']}/{top['food']}", inv)
        if inv["food"] <= (URGENT if urgent else HUNGRY):
            routes = self._routes()
            remembered = [(routes[cell][0], cell) for cell in self._cows if cell in routes
                          and (urgent or not self._home or self._home.near(cell, HOME_RANGE))]
            if remembered:
                distance, cell = min(remembered)
                return Choice(routes[cell][1], f"look for a cow: food {inv['food']}/{top['food']}, one was "
                                               f"{distance} steps away {self._step - self._cows[cell][0]} steps ago")
            return self._explore(f"look for a cow: food {inv['food']}/{top['food']}", COW_STALE, near_home=not urgent)
        if inv["drink"] <= (URGENT if urgent else TOPPED_UP + extra):
            return self._explore(f"look for water: drink {inv['drink']}/{top['drink']}")
        return None

    def _top_up(self, inv: dict, goal: str, stat: str, start: int, full: int, source: str, wanted) -> Choice | None:
        """Go for `stat` at the nearest `source` when it is at `start` or below, or when topping it up
        (the goal of the last step) and it is still below `full`."""
        if inv[stat] <= start or (self._goal == goal and inv[stat] < full):
            found = self._nearest_next_to(wanted)
            if found:
                self._goal = goal
                distance, stand, target = found
                return self._go(stand, target, "do", f"{goal}: {stat} {inv[stat]}/{data.MAXIMUM[stat]}, "
                                                     f"{source} {distance} steps away")
        if self._goal == goal:
            self._goal = None
        return None

    def _shelter(self, state: dict, inv: dict, idle: bool = False) -> Choice | None:
        """Go to a shelter (the one it slept in, or a new one) at night, tired or wounded, or to rest
        there when it has nothing to do (out of the zombies' way)."""
        top = data.MAXIMUM
        if self._night:
            why = f"dark (daylight {state['daylight']:.2f})"
        elif self._home and self._homeward:
            why = f"the light falls (daylight {state['daylight']:.2f})"
        elif inv["energy"] <= TIRED:
            why = f"energy {inv['energy']}/{top['energy']}"
        elif inv["health"] <= WOUNDED:
            why = f"health {inv['health']}/{top['health']}"
        elif idle:
            why = "nothing needed, rest"
        else:
            return None
        return self._go_shelter(why, inv, idle)

    def _go_shelter(self, why: str, inv: dict, idle: bool = False) -> Choice | None:
        """Go into a shelter and seal it: the one it is making for, its home if near, or a new one."""
        top = data.MAXIMUM
        home = self._home and (self._home.door, self._home.inward)
        if home and self._site != home and self._site_cost(*home, inv) is not None:
            if self._routes()[home[0]][0] <= HOME_TRAVEL:
                self._site = home
        if self._site is None or self._site_cost(*self._site, inv) is None:
            self._site = self._find_site(inv)
        if self._site is None:
            if idle:
                return None
            if inv["energy"] <= 1:
                return Choice("sleep", f"sleep in the open: energy {inv['energy']}/{top['energy']}, "
                                       "no shelter site known")
            stone = inv["wood_pickaxe"] and self._nearest_next_to(
                lambda c: self._map.get(c) == "stone" and c not in self._placed)
            if stone:
                return self._go(*stone[1:], "do", f"shelter: {why}, collect stone to wall one in, "
                                                  f"stone {stone[0]} steps away")
            return self._explore(f"shelter: {why}, look for a shelter site")
        door, inward = self._site
        first = _step(door, inward)
        second = _step(first, inward)
        back = (-inward[0], -inward[1])
        if self._here not in (first, second):
            for wall, stand, offset in self._side_walls(door, inward):
                if stand is not None:
                    if not inv["stone"]:
                        break  # none in hand: it digs the pocket first, for the stone it gives
                    return self._place_from((stand, offset), "place_stone", f"shelter: {why}, wall the pocket")
        if self._here == second:
            if self._facing == inward and self._walkable(_step(second, inward)):
                return Choice("place_stone", f"shelter: {why}, wall the end of the pocket")
            return Choice(f"move_{data.FACINGS[back]}", f"shelter: {why}, step back to seal the door")
        if self._here == first:
            if self._facing == back and self._walkable(door):
                self._door = door
                return Choice("place_stone", f"shelter: {why}, seal the door with stone")
            if self._map.get(second) in MINE:
                return self._go(self._here, second, "do", f"shelter: {why}, dig the pocket")
            return Choice(f"move_{data.FACINGS[inward]}", f"shelter: {why}, walk into the pocket")
        if self._here == door:
            if self._map.get(first) in MINE:
                return self._go(self._here, first, "do", f"shelter: {why}, dig into the stone")
            return Choice(f"move_{data.FACINGS[inward]}", f"shelter: {why}, walk into the pocket")
        distance = self._routes()[door][0]
        return Choice(self._routes()[door][1], f"shelter: {why}, shelter site {distance} steps away")

    def _side_walls(self, door: Cell, inward: tuple[int, int]):
        """The sides of a pocket not walled yet: (cell, where to stand to place stone on it, facing), the
        stand None when no way to face it from outside is known."""
        first = _step(door, inward)
        second = _step(first, inward)
        side = (inward[1], inward[0])
        walls = [_step(c, o) for c in (first, second) for o in (side, (-side[0], -side[1]))]
        inside = {door, first, second, *walls}
        for wall in walls:
            if not self._wall(wall):
                yield wall, *(self._pose(wall, inside) or (None, None))

    def _pose(self, cell: Cell, keep_out) -> tuple[Cell, tuple[int, int]] | None:
        """Where to stand, outside the cells `keep_out`, to face `cell`, and the facing (the nearest such).
        One faces a cell one can walk into only by walking towards it: the stand is entered from the cell
        behind it."""
        return min(self._poses(cell, keep_out), default=(None, None))[1]

    def _poses(self, cell: Cell, keep_out):
        """The poses from which to face `cell` (see _pose), each with the steps to it."""
        routes = self._routes()
        for offset in data.MOVES.values():
            stand = _step(cell, (-offset[0], -offset[1]))
            behind = _step(stand, (-offset[0], -offset[1]))
            if (stand not in keep_out and behind not in keep_out
                    and all(c == self._here or c in routes for c in (stand, behind))):
                yield (0 if self._here == stand else routes[behind][0] if behind in routes else 0), (stand, offset)

    def _place_from(self, pose: tuple[Cell, tuple[int, int]], action: str, reason: str) -> Choice:
        """Walk round to the pose's stand, entering it from behind so as to face the cell, and act."""
        stand, offset = pose
        if self._here == stand and self._facing == offset:
            return Choice(action, reason)
        behind = _step(stand, (-offset[0], -offset[1]))
        if self._here == behind:
            return Choice(f"move_{data.FACINGS[offset]}", f"{reason}: turn to it")
        return Choice(self._routes()[behind][1], f"{reason}: walk round to it")

    def _site_cost(self, door: Cell, inward: tuple[int, int], inv: dict) -> int | None:
        """The stones to place for a shelter at this door (None if it cannot be had): a door cell the
        agent can reach and seal, two cells beyond it (stone it can mine, or ground) and walls round
        them, natural or placed."""
        if door not in self._routes() or self._map.get(door) not in data.PLACE["stone"]["where"]:
            return None
        first = _step(door, inward)
        second = _step(first, inward)
        end = _step(second, inward)
        # A creature in its home's pocket is fought on the way in: seen from some cells only, it would
        # otherwise turn the agent back and forth.
        home = self._home is not None and (door, inward) == (self._home.door, self._home.inward)
        for cell in (first, second):
            if not (self._walkable(cell) or cell == self._here or (home and self._map.get(cell) in data.WALKABLE)
                    or (self._map.get(cell) == "stone" and inv["wood_pickaxe"] and not self._home_wall(cell))):
                return None  # a night shelter dug into its home's wall would open the plants to creatures
        if not self._wall(end) and not self._walkable(end):
            return None
        sides = list(self._side_walls(door, inward))
        if any(stand is None or not self._walkable(wall) for wall, stand, _ in sides):
            return None
        placed = len(sides) + (not self._wall(end)) + 1
        mined = sum(self._map.get(cell) == "stone" for cell in (first, second))
        return placed if inv["stone"] + mined >= placed * data.PLACE["stone"]["uses"]["stone"] else None

    def _find_site(self, inv: dict) -> tuple[Cell, tuple[int, int]] | None:
        best = None
        for number, (door, (distance, _)) in enumerate(self._routes().items()):
            if number == SITE_SEARCH:
                break
            for offset in data.MOVES.values():
                stones = self._site_cost(door, offset, inv)
                if stones is None:
                    continue
                cost = distance + 4 * stones
                if best is None or cost < best[0]:
                    best = (cost, door, offset)
        return None if best is None else best[1:]

    def _stations_near(self, cell: Cell) -> set[str]:
        # Crafter's `make` looks at the 3 x 3 cells around the player.
        return {self._map.get((cell[0] + i, cell[1] + j)) for i in (-1, 0, 1) for j in (-1, 0, 1)}

    def _tools(self, inv: dict) -> Choice | None:
        # With a home, it keeps the stone that seals its door.
        keep = {"stone": DOOR_STONE} if self._home else {}
        wanted = [tool for tool in TOOLS if not inv[tool]
                  and all(inv[k] >= v + keep.get(k, 0) for k, v in data.MAKE[tool]["uses"].items())]
        if not wanted:
            return None
        tool = wanted[0]
        needs = set(data.MAKE[tool]["nearby"])
        name = _named(tool)
        if needs <= self._stations_near(self._here):
            return Choice(f"make_{tool}", f"make {name}: next to the {' and '.join(sorted(needs))}")
        found = self._nearest_stations(needs)
        if found and found[0] <= NEAR // 2:
            return Choice(self._routes()[found[1]][1], f"make {name}: {' and '.join(sorted(needs))} "
                                                       f"{found[0]} steps away")
        # A furnace is placed beside a table: first the way to a table, or a new one.
        if "table" in needs and "table" not in self._stations_near(self._here):
            table = self._nearest_stations({"table"})
            if table and table[0] <= NEAR // 2:
                return Choice(self._routes()[table[1]][1], f"make {name}: table {table[0]} steps away")
            return self._place("table", inv, tool)
        return self._place(sorted(needs - self._stations_near(self._here))[0], inv, tool)

    def _nearest_stations(self, stations: set[str]) -> tuple[int, Cell] | None:
        if not stations:
            return None
        routes = self._routes()
        return min(((routes[c][0], c) for c in routes if stations <= self._stations_near(c)), default=None)

    def _place(self, station: str, inv: dict, tool: str) -> Choice | None:
        rule = data.PLACE[station]
        if any(inv[k] < v + data.MAKE[tool]["uses"].get(k, 0) for k, v in rule["uses"].items()):
            return None
        ahead = _step(self._here, self._facing)
        if self._map.get(ahead) in rule["where"] and ahead not in self._creatures:
            return Choice(f"place_{station}", f"place a {station} to make {_named(tool)}")
        for action, offset in data.MOVES.items():
            if self._walkable(_step(self._here, offset)):
                return Choice(action, f"find free ground to place a {station} on")
        return None

    def _materials(self, inv: dict, only: str | None = None, upto: int = 0) -> Choice | None:
        """Collect the nearest material it wants (or only the material `only`, up to `upto` of it)."""
        routes_found = []
        for material, rule in MINE.items():
            if only and material != only:
                continue
            (item, _), = rule["receive"].items()
            wanted = upto if only else STOCK.get(item, 0)
            if inv[item] >= wanted or any(inv[k] < v for k, v in rule["require"].items()):
                continue
            found = self._nearest_next_to(lambda c, m=material: self._map.get(c) == m and c not in self._placed
                                          and not self._home_wall(c) and not (self._home and self._by_tunnel(c)))
            if found and found[0] <= NEAR:
                routes_found.append((found[0], material, item, found))
        if not routes_found:
            return None
        distance, material, item, (_, stand, target) = min(routes_found)
        wanted = upto if only else STOCK[item]
        return self._go(stand, target, "do", f"collect {item}: {item} {inv[item]}/{wanted} wanted, "
                                             f"{material} {distance} steps away")

    def _explore(self, why: str = "explore: nothing needed in sight", stale: int = STALE,
                 near_home: bool = False) -> Choice:
        """Walk to ground next to cells never seen or not seen for `stale` steps (cows come and go, trees
        and water stay); `near_home`, within HOME_RANGE of its home if it has one, where its plants grow."""
        routes = self._routes()
        target = self._explore_target
        home = self._home if near_home else None
        if (target is None or target == self._here or target not in routes
                or not self._unexplored(target, stale) or (home and not home.near(target, HOME_RANGE))):
            frontier = [cell for cell in routes if cell != self._here and self._unexplored(cell, stale)
                        and (home is None or home.near(cell, HOME_RANGE))]
            target = frontier[self._rng.randrange(min(3, len(frontier)))] if frontier else None
            self._explore_target = target
        if target is not None:
            return Choice(routes[target][1], f"{why}, unexplored ground {routes[target][0]} steps away")
        options = [a for a, o in data.MOVES.items() if _step(self._here, o) in routes]
        if not options:
            return Choice("noop", f"{why}, boxed in: wait")
        if _step(self._here, data.MOVES[self._heading]) not in routes or self._rng.random() < 0.1:
            self._heading = self._rng.choice(options)
        return Choice(self._heading, f"{why}, wander {data.FACINGS[data.MOVES[self._heading]]}")

    def _unexplored(self, cell: Cell, stale: int) -> bool:
        """Ground next to a cell never seen, or last seen `stale` steps ago or more."""
        return any(self._step - self._seen_at.get(_step(cell, o), -stale) >= stale for o in data.MOVES.values())

