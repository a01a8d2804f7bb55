"""The scripted agent's home: a shelter whose inner cell is ringed with plants, renewable food.

Cows are few and come back slowly; a plant (a sapling placed on grass) is ripe after 300 updates and
gives 4 food each time it is eaten, but any zombie, skeleton or cow next to it destroys it (Plant.update).
The home is the agent's two-cell shelter (door, first, second, as in crafter_agent.py) with plants on
the three free sides of `second` instead of stone, and every other side of those plants walled, so
that only the agent's pocket touches them:

        c E c          E, L, R: plants (the end of the pocket and the sides of `second`)
      o L 2 R o        2: second, 1: first (the pocket), D: the door
        w 1 w          w: beside `first`, water (one at least: it drinks from inside) or stone
          D            c, o: walls round the plants (any cell no creature walks on: stone, or a table)

Sealed inside, the agent sleeps, eats and drinks in safety, and stays; when it leaves it fills `second`
with stone from `first`, so nothing walks in next to the plants while it is away. Three plants give
some 12 food a 320 steps against some 10 eaten (a quarter of them asleep, at half the hunger). Plants
grow only while the agent is within UPDATED cells of them (Env.step updates nothing further away), so
it goes out only near home.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtc.dsl import crafter_data as data

from .choice import Choice

Cell = tuple[int, int]

SAPLINGS = 3       # saplings gathered for the home's three plants
SAPLING_NEAR = 20  # steps it walks to grass for saplings
RIPE = 320         # steps of growth after which it eats a plant (the game's ripe is 300: a margin)
PLANT_FOOD = 4     # food a ripe plant gives
FULL_DAY = 0.97    # light above which the day has some 50 steps to run before it fails, if falling
SITE_SEARCH = 400  # the nearest cells tried as the door of a shelter or a home
SITE_RETRY = 30    # steps after which it looks again for a site for its home, having found none
SITE_NEAR = 20     # steps beyond which a planned home with nothing planted yet is planned again nearer
OUTING_LIGHT = 0.85  # rising light from which it may go out of its home (zombies spawn below about 0.83)
HOMEWARD = 0.95    # falling light below which it goes home (some 20 steps before zombies spawn)
DAY = 300          # steps of a Crafter day
HUNGER_STEPS = 26  # awake steps a point of food lasts (Player._update_life_stats)
STARVE_STEPS = 16  # awake steps a point of health lasts, out of food (Player._degen_or_regen_health)
WOUNDED = 5        # health at which it shelters to heal
STARVING = 2       # health down to which it waits at home for a plant to ripen, out of food
HUNGRY = 6         # food at which it goes looking for a cow when none is in view
TABLE_WOOD = data.PLACE["table"]["uses"]["wood"]


def moved(cell: Cell, offset: tuple[int, int], times: int = 1) -> Cell:
    """The cell `times` steps from `cell` in the direction `offset`."""
    return cell[0] + times * offset[0], cell[1] + times * offset[1]


@dataclass(frozen=True)
class Farm:
    """The cells of a home whose door is `door`, its pocket going `inward` from it."""

    door: Cell
    inward: tuple[int, int]

    @property
    def _side(self) -> tuple[int, int]:
        return self.inward[1], self.inward[0]

    @property
    def first(self) -> Cell:
        return moved(self.door, self.inward)

    @property
    def second(self) -> Cell:
        return moved(self.door, self.inward, 2)

    @property
    def end(self) -> Cell:
        return moved(self.door, self.inward, 3)

    @property
    def plants(self) -> tuple[Cell, ...]:
        return self.end, moved(self.second, self._side), moved(self.second, self._side, -1)

    @property
    def pocket_walls(self) -> tuple[Cell, ...]:
        """The sides of `first`: stone or the like, as a shelter's walls must be."""
        return moved(self.first, self._side), moved(self.first, self._side, -1)

    @property
    def fences(self) -> tuple[Cell, ...]:
        """The sides of the plants away from the pocket: anything no creature walks on."""
        return (moved(self.end, self.inward), moved(self.end, self._side), moved(self.end, self._side, -1),
                moved(self.second, self._side, 2), moved(self.second, self._side, -2))

    @property
    def inner(self) -> frozenset[Cell]:
        """The pocket and the plants: the walls are placed from outside them (the plants are placed first,
        from wherever the agent can face them)."""
        return frozenset((self.door, self.first, self.second, *self.plants))

    def keep_out(self, cell: Cell) -> frozenset[Cell]:
        """The cells not to stand on nor walk through to face `cell` and build it: a plant is planted from
        anywhere but the other plants (planted first, they would block the way), a wall from outside."""
        return frozenset(self.plants) - {cell} if cell in self.plants else self.inner

    def near(self, cell: Cell, distance: int) -> bool:
        """Whether `cell` is within `distance` steps (Manhattan) of the plants' pocket."""
        return abs(cell[0] - self.second[0]) + abs(cell[1] - self.second[1]) <= distance


class HomeBuilding:
    """The scripted agent's goals about its home (a mixin of ScriptedCrafterAgent, whose memory and moves
    they use): gather saplings, choose a site, plant and wall it in, close it behind it when it leaves."""

    def _ripening(self, cell: Cell) -> int | None:
        """The steps until the first of the plants next to the pocket around `cell` is ripe (None if none is)."""
        nearby = [RIPE + 1 - grown for plant, grown in self._plants.items()
                  if abs(plant[0] - cell[0]) + abs(plant[1] - cell[1]) <= 2]
        return max(0, min(nearby)) if nearby else None

    def _at_home(self, state: dict, inv: dict) -> Choice | None:
        """Sealed in its home (having eaten and drunk what it could): go out for food when no plant will
        ripen in time, or once a day in full daylight for what it wants outside, healthy and fed; else sleep
        while not fully rested (asleep it grows hungry half as fast), or wait."""
        top = data.MAXIMUM
        food, energy = inv["food"], inv["energy"]
        ripening = self._ripening(self._here)
        day_ahead = self._daylight >= FULL_DAY or (self._rising and self._daylight >= OUTING_LIGHT)
        # It can wait for a plant while its food lasts, and then while its health drains (safer than outside).
        late = ripening is None or ripening > food * HUNGER_STEPS + (inv["health"] - STARVING) * STARVE_STEPS
        why = None
        if food <= HUNGRY and late and day_ahead:
            why = f"food {food}/{top['food']}, " + ("no plant" if ripening is None else f"plants ripe in {ripening} steps")
        elif (day_ahead and self._outing_day < self._step // DAY and inv["health"] >= top["health"] - 1
              and inv["stone"] >= 1  # to seal the door again when back (closing the plants' cell takes one)
              and food >= HUNGRY - 2 and inv["drink"] >= top["drink"] - 1 and energy > top["energy"] // 2):
            wanted = self._wanted_outside(inv)
            why = wanted and f"an outing in daylight for {wanted}"
        # Out of food, it goes out past a zombie or a skeleton rather than starve waiting for it to leave.
        enemy = why and food > 0 and self._enemy_near()
        if enemy:
            return Choice("noop", f"wait at home: a {enemy} outside, {why}")
        if why:
            if self._here == self._home.second:
                return Choice(f"move_{data.FACINGS[(-self._home.inward[0], -self._home.inward[1])]}",
                              f"leave my home: {why}, step to the door")
            leave = self._leave(why)
            if leave and leave.action == "do":
                self._outing_day = self._step // DAY  # the door is open: the outing has begun
            return leave
        if energy < top["energy"]:
            return Choice("sleep", f"sleep at home: energy {energy}/{top['energy']}")
        if self._night:
            return Choice("noop", f"wait for daylight at home: daylight {self._daylight:.2f}")
        if ripening:
            return Choice("noop", f"wait at home for a plant to ripen: about {ripening} steps, food {food}/{top['food']}")
        return Choice("noop", f"rest at home: food {food}/{top['food']}, drink {inv['drink']}/{top['drink']}")

    def _home_wall(self, cell: Cell) -> bool:
        """Whether a cell walls its home, built or planned (a tree there is not cut for wood)."""
        return any(farm and cell in (*farm.fences, *farm.pocket_walls) for farm in (self._home, self._farm))

    def _close_home(self, inv: dict) -> Choice | None:
        """Once its home is built, and each time it leaves it, fill `second` (the cell next to the plants)
        with stone from `first`, so that no creature walks in next to the plants while it is away."""
        home = self._home
        if not self._closing or home is None:
            return None
        if not self._walkable(home.second) or not inv["stone"] or self._here == home.second:
            self._closing = self._map.get(home.second) in data.WALKABLE and inv["stone"] > 0
            return None
        pose = (home.first, home.inward)
        if not any(p == pose for _, p in self._poses(home.second, ())):
            return None
        return self._place_from(pose, "place_stone", "close my home behind me, the plants inside kept safe")

    def _sapling(self, inv: dict) -> Choice | None:
        """Gather saplings for its home's plants from grass (one in ten tries gives one): the grass ahead,
        or a step onto grass with more grass beyond."""
        if self._home or inv["sapling"] >= SAPLINGS:
            return None
        why = f"collect saplings for my home: {inv['sapling']}/{SAPLINGS}"
        if self._grass(moved(self._here, self._facing)):
            return Choice("do", f"{why}, grass ahead")
        for action, offset in data.MOVES.items():
            if self._grass(moved(self._here, offset)) and self._grass(moved(self._here, offset, 2)):
                return Choice(action, f"{why}, step onto the grass")
        routes = self._routes()
        grass = min(((routes[cell][0], cell) for cell in routes if cell != self._here and self._grass(cell)
                     and any(self._grass(moved(cell, o)) for o in data.MOVES.values())), default=None)
        if grass and grass[0] <= SAPLING_NEAR:
            return Choice(routes[grass[1]][1], f"{why}, grass {grass[0]} steps away")
        return None

    def _grass(self, cell: Cell) -> bool:
        return self._map.get(cell) == "grass" and cell not in self._creatures

    def _build_home(self, inv: dict) -> Choice | None:
        """Build its home once it has the saplings and the stone: plant the saplings (each from outside,
        while the cells round it are open), then wall the plants and the pocket with stone. It comes before
        food and drink not urgent: the sooner the plants grow, the sooner they feed it."""
        if self._home or not inv["wood_pickaxe"]:
            return None
        farm = self._farm
        unplanted_far = farm and not any(c in self._plants for c in farm.plants) and (
            farm.door not in self._routes() or self._routes()[farm.door][0] > SITE_NEAR)
        if farm is None or unplanted_far or self._farm_needs(farm) is None:
            self._farm = None
            if inv["sapling"] >= SAPLINGS and self._step >= self._farm_search_at + SITE_RETRY:
                self._farm_search_at = self._step
                self._farm = self._find_farm(inv)
            if self._farm is None:
                return None
        farm = self._farm
        saplings, stones, fences = self._farm_needs(farm)
        planted = sum(cell in self._plants for cell in farm.plants)
        # Plants are lost to the first creature by them until walled in: it plants only with all the walls
        # in hand, at any hour (walled in, its home is its shelter for the night).
        if planted == 0 and not self._walls_in_hand(stones, fences, inv):
            return None
        if saplings > inv["sapling"]:
            return None  # it gathers more first (the farm stays its plan)
        walls = [cell for cell in (*farm.fences, *farm.pocket_walls) if not self._built(farm, cell)]
        if planted == len(farm.plants) and not walls:
            self._home, self._farm, self._closing = farm, None, True
            return None
        if planted < len(farm.plants):
            poses = [(pose, cell, "place_plant", f"plant a sapling ({planted}/{len(farm.plants)})")
                     for cell in farm.plants if cell not in self._plants for pose in self._poses(cell, farm.keep_out(cell))]
        else:
            # The pocket's walls are stone (a table would turn to path under an arrow); the fences are
            # stone while it has more than the pocket and its door need, else tables.
            spare = inv["stone"] - stones - 1
            poses = [(pose, cell, *self._fence(cell in farm.fences, spare, inv)) for cell in walls
                     for pose in self._poses(cell, farm.inner)]
            poses = [pose for pose in poses if pose[2]]
        # Plants first, then walls, the nearest first; a cell it cannot face now (a creature in the way) waits.
        if not poses:
            return None
        pose, _, action, why = min(poses)
        return self._place_from(pose[1], action, f"build my home: {why}")

    @staticmethod
    def _fence(fence: bool, spare: int, inv: dict) -> tuple[str | None, str]:
        """How it walls a cell of its home: the action and what it says of it (no action: nothing in hand)."""
        if inv["stone"] and (not fence or spare > 0 or inv["wood"] < TABLE_WOOD):
            return "place_stone", "wall the plants in with stone"
        if fence and inv["wood"] >= TABLE_WOOD:
            return "place_table", "wall the plants in with a table"
        return None, ""

    def _walls_in_hand(self, stones: int, fences: int, inv: dict) -> bool:
        """Whether it holds the walls a home still needs: stone for the pocket's sides and its door, stone
        or tables for the fences."""
        spare = inv["stone"] - stones - 1
        return spare >= 0 and spare + inv["wood"] // TABLE_WOOD >= fences

    def _built(self, farm: Farm, cell: Cell) -> bool:
        return self._fenced(cell) if cell in farm.fences else self._wall(cell)

    def _farm_needs(self, farm: Farm, site: bool = False) -> tuple[int, int, int] | None:
        """The saplings, stones (the pocket's sides) and fences a home here still needs (None if it cannot be
        built): a door and a pocket of ground, grass or its plants for the plants, walls or ground to wall.
        A new `site` must also be out of a skeleton's shot from the tunnels, clear of creatures, and each
        cell faced from outside."""
        ground = data.WALKABLE
        if site and (farm.door not in self._routes() or self._by_tunnel(farm.second)):
            return None  # skeletons keep to the tunnels, and shoot from them
        if not all(self._map.get(c) in ground and (c == self._here or not site or c not in self._creatures)
                   for c in (farm.door, farm.first, farm.second)):
            return None
        saplings = stones = fences = 0
        for cell in (*farm.plants, *farm.fences, *farm.pocket_walls):
            if cell in farm.plants:
                done, can = cell in self._plants, self._map.get(cell) == "grass"
                saplings += not done
            else:
                done, can = self._built(farm, cell), self._map.get(cell) in ground
                fences += not done and cell in farm.fences
                stones += not done and cell not in farm.fences
            if done:
                continue
            if not can or (site and not any(self._poses(cell, farm.keep_out(cell)))):
                return None
        return saplings, stones, fences

    def _find_farm(self, inv: dict) -> Farm | None:
        """The best home among the sites nearest with water in the pocket's wall that the stone and wood it
        holds can wall in: few walls to place."""
        best = None
        for number, (door, (distance, _)) in enumerate(self._routes().items()):
            if number == SITE_SEARCH:
                break
            for offset in data.MOVES.values():
                farm = Farm(door, offset)
                # Water in the pocket's wall lets it drink without going out: it builds nowhere else.
                if not any(self._map.get(c) == "water" for c in farm.pocket_walls):
                    continue
                needs = self._farm_needs(farm, site=True)
                if needs is None:
                    continue
                _, stones, fences = needs
                if not self._walls_in_hand(stones, fences, inv):
                    continue
                cost = distance + 4 * (stones + fences)
                if best is None or cost < best[0]:
                    best = (cost, farm)
        return best and best[1]
