"""The scripted agent's home: a shelter whose inner cell is ringed with plants, renewable food.

Cows are few and come back slowly; a plant (a sapling placed on grass) is ripe after 300 updates and
gives 4 food each time it is eaten, but any zombie, skeleton or cow next to it destroys it (Plant.update).
The home is the agent's two-cell shelter (door, first, second, as in crafter_agent.py) with plants on
the three free sides of `second` instead of stone, and every other side of those plants walled, so
that only the agent's pocket touches them:

        c E c          E, L, R: plants (the end of the pocket and the sides of `second`)
      o L 2 R o        2: second, 1: first (the pocket), D: the door
        w 1 w          w: stone beside `first` (zombies must not reach the pocket)
          D            c, o: walls round the plants (any cell no creature walks on)

Sealed inside, the agent sleeps and eats in safety; when it leaves it seals `first` from the door, so
nothing walks in next to the plants while it is away. Plants grow only while the agent is within
UPDATED cells of them (Env.step updates nothing further away), so it explores near home.
"""

from __future__ import annotations

from dataclasses import dataclass

Cell = tuple[int, int]


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

    def near(self, cell: Cell, distance: int) -> bool:
        """Whether `cell` is within `distance` steps (Manhattan) of the plants' pocket."""
        return abs(cell[0] - self.second[0]) + abs(cell[1] - self.second[1]) <= distance
