"""Which creature Crafter despawns, as a choice that can be set: how a run of unmodified Crafter is replayed.

Crafter's balancing (Env._balance_object) despawns `creatures[random.randint(0, k)]` from a list built from
a chunk's set of objects, whose order follows memory addresses (docs/trace-format.md, Reproducibility): a
run logged by unmodified Crafter (EMemBench's) despawned one of the k creatures that no replay can tell
beforehand. With the chunks insertion-ordered (crafter.order_chunk_objects), `DespawnChoices` numbers the
despawn draws of a replay among k > 1 creatures and turns draw n's index by `choices[n]` places (0, the
default, leaves it: the replay is then `qtc play`'s). The random draw itself is always made, so every
later draw of the game is the same whichever creature goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Despawn:
    """A despawn draw among `among` creatures, at `step`."""
    step: int
    among: int


@dataclass
class DespawnChoices:
    """Installed on a Crafter env whose chunks are insertion-ordered; `draws` lists its despawn draws."""
    choices: dict[int, int] = field(default_factory=dict)
    draws: list[Despawn] = field(default_factory=list)

    def install(self, env) -> DespawnChoices:
        balance, world = env._balance_object, env._world

        def balanced(chunk, objs, cls, *rest):
            among = sum(isinstance(obj, cls) for obj in objs)
            if among < 2:
                return balance(chunk, objs, cls, *rest)
            real = world.random
            world.random = _TurnedDraws(real, among, env, self)
            try:
                return balance(chunk, objs, cls, *rest)
            finally:
                world.random = real

        env._balance_object = balanced
        return self

    def turn(self, drawn: int, among: int, step: int) -> int:
        number = len(self.draws)
        self.draws.append(Despawn(step, among))
        return (drawn + self.choices.get(number, 0)) % among


class _TurnedDraws:
    """The world's random state during one balancing call: `randint(0, among)` is the despawn draw (a spawn
    draws among the free tiles of a chunk, never as few as the creatures when there are two or more)."""

    def __init__(self, real, among: int, env, choices: DespawnChoices):
        self._real, self._among, self._env, self._choices = real, among, env, choices

    def randint(self, low, high=None, *rest):
        drawn = self._real.randint(low, high, *rest)
        if (low, high) == (0, self._among) and not rest:
            return self._choices.turn(int(drawn), self._among, self._env._step)
        return drawn

    def __getattr__(self, name):
        return getattr(self._real, name)
