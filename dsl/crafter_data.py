"""Crafter's own game data (crafter/data.yaml via crafter.constants), by name: never hand-copied."""

from __future__ import annotations

from crafter import constants, objects

ACTIONS: tuple[str, ...] = tuple(constants.actions)
MATERIALS: tuple[str, ...] = tuple(constants.materials)
ACHIEVEMENTS: tuple[str, ...] = tuple(constants.achievements)
INVENTORY_KEYS: tuple[str, ...] = tuple(constants.items)
# The player's life stats are inventory keys too; they are the ones the player starts with.
STATS: tuple[str, ...] = tuple(k for k, v in constants.items.items() if v["initial"] > 0)
ITEMS: tuple[str, ...] = tuple(k for k in INVENTORY_KEYS if k not in STATS)
# What creatures and routes walk on. The player may also enter lava (Player.walkable), which kills it:
# a route never crosses it, but a walk may end in it.
WALKABLE: tuple[str, ...] = tuple(constants.walkable)
PLAYER_ENTERABLE: tuple[str, ...] = tuple(objects.Player.walkable.fget(None))
# What an arrow flies over (Arrow.walkable): a wall of these does not stop a skeleton's arrows.
ARROW_PASSABLE: tuple[str, ...] = tuple(objects.Arrow.walkable)
# The most of each inventory key (life stats and items) the player can hold.
MAXIMUM: dict[str, int] = {k: v["max"] for k, v in constants.items.items()}
COLLECT = constants.collect
PLACE = constants.place
MAKE = constants.make
# Crafter's recipes (its `make` rules) as rows: what making an item uses up, and the stations (materials)
# that must be within one cell of the player (Player._make: world.nearby(pos, 1)).
RECIPE_USES: tuple[tuple[str, str, int], ...] = tuple(
    (item, ingredient, amount) for item, info in constants.make.items() for ingredient, amount in info["uses"].items())
RECIPE_STATIONS: tuple[tuple[str, str], ...] = tuple(
    (item, station) for item, info in constants.make.items() for station in info["nearby"])
# Crafter's collect rules as rows: what doing at a material gives, with what chance, and the material it
# leaves (Player._do_material); the tools it needs in the inventory.
COLLECT_RULES: tuple[tuple[str, str, int, float, str], ...] = tuple(
    (material, item, amount, float(info.get("probability", 1)), info["leaves"])
    for material, info in constants.collect.items() for item, amount in info["receive"].items())
COLLECT_TOOLS: tuple[tuple[str, str, int], ...] = tuple(
    (material, tool, amount) for material, info in constants.collect.items() for tool, amount in info["require"].items())
# Its place rules (Player._place): what placing an item uses up, and the materials it may be placed on.
PLACE_USES: tuple[tuple[str, str, int], ...] = tuple(
    (item, ingredient, amount) for item, info in constants.place.items() for ingredient, amount in info["uses"].items())
PLACE_TARGETS: tuple[tuple[str, str], ...] = tuple(
    (item, material) for item, info in constants.place.items() for material in info["where"])
# The material a collected item comes from (collect_wood <- tree, collect_drink <- water, ...).
# The items some make or place rule uses up: the only ones that ever leave the inventory (tools are kept).
CONSUMABLE: tuple[str, ...] = tuple(dict.fromkeys(i for _, i, _ in (*RECIPE_USES, *PLACE_USES)))
COLLECTED_FROM: dict[str, str] = {
    item: material for material, info in constants.collect.items() for item in info["receive"]}

FACINGS: dict[tuple[int, int], str] = {(-1, 0): "left", (1, 0): "right", (0, -1): "up", (0, 1): "down"}
MOVES: dict[str, tuple[int, int]] = {f"move_{name}": offset for offset, name in FACINGS.items()}
# Every non-player object class of Crafter, named as the trace names creatures.
CREATURES: tuple[str, ...] = tuple(sorted(
    cls.__name__.lower() for cls in vars(objects).values()
    if isinstance(cls, type) and issubclass(cls, objects.Object)
    and cls not in (objects.Object, objects.Player)))


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
