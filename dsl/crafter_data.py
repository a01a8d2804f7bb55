"""Crafter's own game data (crafter/data.yaml via crafter.constants, and crafter.objects), by name:
never hand-copied.

Importing crafter takes about half a second (its YAML is read in pure Python, its engine imports PIL),
which every qtc process would pay; so the data derived from it is kept in qtc's cache (cache.py) as
JSON, under the hash of the crafter files it is read from, and crafter is imported only when they
change.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from . import cache
from . import types as T

# The files of the crafter package the data is read from.
SOURCES = ("data.yaml", "constants.py", "objects.py")


def _read_crafter() -> dict:
    """The data, from crafter itself."""
    from crafter import constants, objects

    return {
        "actions": list(constants.actions), "materials": list(constants.materials),
        "achievements": list(constants.achievements), "items": constants.items, "walkable": list(constants.walkable),
        # What the player may enter besides (Player.walkable: lava, which kills it).
        "player_enterable": list(objects.Player.walkable.fget(None)),
        "arrow_passable": list(objects.Arrow.walkable),  # what an arrow flies over (Arrow.walkable)
        "collect": constants.collect, "place": constants.place, "make": constants.make,
        # Every non-player object class of Crafter, named as the trace names creatures.
        "creatures": sorted(cls.__name__.lower() for cls in vars(objects).values()
                            if isinstance(cls, type) and issubclass(cls, objects.Object)
                            and cls not in (objects.Object, objects.Player)),
    }


def _digest() -> str:
    """The hash of the crafter files the data is read from ("" if they cannot be read)."""
    package = Path(importlib.util.find_spec("crafter").submodule_search_locations[0])
    try:
        return cache.digest(*(package.joinpath(f).read_bytes() for f in SOURCES))
    except OSError:
        return ""


def _load(digest: str) -> dict:
    """The data from the cache, else from crafter (then kept in the cache)."""
    name = f"crafter-{digest}.json"
    kept = cache.read(name) if digest else None
    if kept is not None:
        try:
            return json.loads(kept)
        except ValueError:
            pass
    data = _read_crafter()
    if digest:
        cache.write(name, json.dumps(data).encode("utf-8"))
    return data


DIGEST = _digest()
_DATA = _load(DIGEST)
ACTIONS: tuple[str, ...] = tuple(_DATA["actions"])
MATERIALS: tuple[str, ...] = tuple(_DATA["materials"])
ACHIEVEMENTS: tuple[str, ...] = tuple(_DATA["achievements"])
INVENTORY_KEYS: tuple[str, ...] = tuple(_DATA["items"])
# The player's life stats are inventory keys too; they are the ones the player starts with.
STATS: tuple[str, ...] = tuple(k for k, v in _DATA["items"].items() if v["initial"] > 0)
ITEMS: tuple[str, ...] = tuple(k for k in INVENTORY_KEYS if k not in STATS)
# What creatures and routes walk on. The player may also enter lava (Player.walkable), which kills it:
# a route never crosses it, but a walk may end in it.
WALKABLE: tuple[str, ...] = tuple(_DATA["walkable"])
PLAYER_ENTERABLE: tuple[str, ...] = tuple(_DATA["player_enterable"])
# What an arrow flies over (Arrow.walkable): a wall of these does not stop a skeleton's arrows.
ARROW_PASSABLE: tuple[str, ...] = tuple(_DATA["arrow_passable"])
# The most of each inventory key (life stats and items) the player can hold.
MAXIMUM: dict[str, int] = {k: v["max"] for k, v in _DATA["items"].items()}
COLLECT = _DATA["collect"]
PLACE = _DATA["place"]
MAKE = _DATA["make"]
# Crafter's recipes (its `make` rules) as rows: what making an item uses up, and the stations (materials)
# that must be within one cell of the player (Player._make: world.nearby(pos, 1)).
RECIPE_USES: tuple[tuple[str, str, int], ...] = tuple(
    (item, ingredient, amount) for item, info in MAKE.items() for ingredient, amount in info["uses"].items())
RECIPE_STATIONS: tuple[tuple[str, str], ...] = tuple(
    (item, station) for item, info in MAKE.items() for station in info["nearby"])
# Crafter's collect rules as rows: what doing at a material gives, with what chance, and the material it
# leaves (Player._do_material); the tools it needs in the inventory.
COLLECT_RULES: tuple[tuple[str, str, int, float, str], ...] = tuple(
    (material, item, amount, float(info.get("probability", 1)), info["leaves"])
    for material, info in COLLECT.items() for item, amount in info["receive"].items())
COLLECT_TOOLS: tuple[tuple[str, str, int], ...] = tuple(
    (material, tool, amount) for material, info in COLLECT.items() for tool, amount in info["require"].items())
# Its place rules (Player._place): what placing an item uses up, and the materials it may be placed on.
PLACE_USES: tuple[tuple[str, str, int], ...] = tuple(
    (item, ingredient, amount) for item, info in PLACE.items() for ingredient, amount in info["uses"].items())
PLACE_TARGETS: tuple[tuple[str, str], ...] = tuple(
    (item, material) for item, info in PLACE.items() for material in info["where"])
# The material a collected item comes from (collect_wood <- tree, collect_drink <- water, ...).
# The items some make or place rule uses up: the only ones that ever leave the inventory (tools are kept).
CONSUMABLE: tuple[str, ...] = tuple(dict.fromkeys(i for _, i, _ in (*RECIPE_USES, *PLACE_USES)))
COLLECTED_FROM: dict[str, str] = {
    item: material for material, info in COLLECT.items() for item in info["receive"]}

FACINGS: dict[tuple[int, int], str] = {(-1, 0): "left", (1, 0): "right", (0, -1): "up", (0, 1): "down"}
MOVES: dict[str, tuple[int, int]] = {f"move_{name}": offset for offset, name in FACINGS.items()}
CREATURES: tuple[str, ...] = tuple(_DATA["creatures"])


# Creatures that never move (a planted sapling). The game lets no one walk into a creature's cell; those
# that move are no lasting obstacle, these are: the map as the player saw it shows them as blocked cells.
FIXED_CREATURES: tuple[str, ...] = ("plant",)


def creature_name(obj) -> str:
    return type(obj).__name__.lower()


def vocabulary() -> dict[str, list[str]]:
    """The vocab rows of the game `crafter`, by kind (schema.VOCAB_KINDS["crafter"])."""
    return {"action": list(ACTIONS), "item": list(ITEMS), "stat": list(STATS),
            "material": list(MATERIALS), "achievement": list(ACHIEVEMENTS),
            "direction": list(FACINGS.values()), "creature": list(CREATURES),
            "terrain": list(PLAYER_ENTERABLE), "collectable": list(COLLECTED_FROM),
            "consumable": list(CONSUMABLE)}


# Every value of a language type the game fixes itself (dsl/vocabulary.py, Environment.fixed_values).
FIXED_VALUES: dict[T.Type, tuple[str, ...]] = {
    T.ACTION: ACTIONS, T.MATERIAL: MATERIALS, T.ITEM: INVENTORY_KEYS, T.ACHIEVEMENT: ACHIEVEMENTS,
    T.DIRECTION: tuple(FACINGS.values()), T.CREATURE: CREATURES}
