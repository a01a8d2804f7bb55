"""The trace tables: the one contract between the recorders, the trace store and the language.

Each table is declared once here with its columns and their language types. The store creates its
DuckDB tables from these declarations (`ddl()`), the checker resolves names and types against them, and
the compiler maps a template's table name to the physical table of its environment. A new column is
added here and nowhere else.

Conventions (CONVENTIONS.md): steps are numbered from 1. In a table with a `step` column, a row of a
state table ("after" tables) holds the state after the action of that step, and step 0 is the state
before the first action. A `*_before` column holds the state in which the step's action was chosen,
an `*_after` column the state that action produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import types as T

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Column:
    name: str
    type: T.Type
    doc: str
    derived: bool = False  # computed by the store at load from the recorded columns, never in a trace
    # A step that may lie after the row's own (where a state ends): a horizon N cuts it to N, as a trace
    # recorded up to step N would hold it (CONVENTIONS.md, Horizon).
    ends_at_horizon: bool = False
    # In a table without steps, the step from which a row is known (null: from the start): a horizon N
    # leaves out the rows known only after N, as a trace recorded up to step N would hold them.
    known_from: bool = False

    @property
    def sql_type(self) -> str:
        if isinstance(self.type, T.ListOf):
            return f"{self.type.element.storage}[]"
        return self.type.storage


@dataclass(frozen=True)
class Table:
    name: str  # the name templates use
    env: str  # "any", "jericho", "crafter" or "textworld"
    columns: tuple[Column, ...]
    doc: str
    has_step: bool = True  # rows are keyed by step; the horizon applies to them
    has_step_zero: bool = False  # a row at step 0 holds the state before the first action
    per_game: bool = False  # keyed by game, not by episode (vocabularies)
    key: tuple[str, ...] = field(default=())

    @property
    def sql_name(self) -> str:
        """The physical DuckDB table that holds this logical table's rows."""
        return self.name if self.env == "any" else f"{self.env}_{self.name}"

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    @property
    def recorded_columns(self) -> tuple[Column, ...]:
        """The columns a trace's step line holds: every column but the derived ones."""
        return tuple(c for c in self.columns if not c.derived)

    @property
    def horizon_ends(self) -> tuple[str, ...]:
        """The columns a horizon cuts to its step besides cutting the rows (Column.ends_at_horizon)."""
        return tuple(c.name for c in self.columns if c.ends_at_horizon)

    @property
    def known_from(self) -> str | None:
        """The column saying from which step a row of a table without steps is known (Column.known_from)."""
        return next((c.name for c in self.columns if c.known_from), None)

    @property
    def relation_type(self) -> T.Relation:
        return T.Relation(self.name, tuple((c.name, c.type) for c in self.columns), self.has_step)

    @property
    def all_columns(self) -> tuple[Column, ...]:
        """The columns a user sees in DuckDB: the episode (or game) key, then the declared ones."""
        owner = Column("game", T.STRING, "game name") if self.per_game else Column(
            "episode_id", T.STRING, "episode identifier")
        return (owner, *self.columns)


def C(name: str, type_: T.Type, doc: str) -> Column:
    return Column(name, type_, doc)


STEP = C("step", T.STEP, "step number, from 1 (0: the state before the first action)")

EPISODES = Table("episodes", "any", (
    C("env", T.STRING, "jericho, crafter or textworld"),
    C("game", T.STRING, "story file stem (zork1), 'crafter', or a TextWorld game's name (cooking_s1)"),
    C("seed", T.INTEGER, "seed of the environment and the agent"),
    C("agent", T.STRING, "walkthrough, random, scripted or llm"),
    C("n_steps", T.INTEGER, "number of recorded steps"),
    C("ended_by", T.STRING, "how the episode ended: done, death, step_limit, walkthrough_end, interrupted, crashed"),
    C("death_step", T.STEP, "the step at which the player died (null if it did not)"),
    C("death_cause", T.STRING, "what killed the player (null if it did not die)"),
    C("format_version", T.INTEGER, "trace format version"),
), "one row per recorded episode", has_step=False)

VOCAB = Table("vocab", "any", (
    C("kind", T.STRING, "vocabulary kind: action, item, stat, material, achievement, direction, creature, room"),
    C("value", T.STRING, "a value the game knows, whether or not an episode used it"),
), "the game's vocabulary, for false-premise (adversarial) domains", has_step=False, per_game=True)

JERICHO_STEPS = Table("steps", "jericho", (
    STEP,
    C("action", T.ACTION, "the command sent to the game"),
    Column("command", T.ACTION, "the action as the game's parser reads it (conventions.command): one "
           "command written two ways ('n', 'north') is one command; computed at load", derived=True),
    C("reason", T.STRING, "the agent's stated reason (null if it gave none)"),
    C("obs_before", T.STRING, "the observation the agent saw when choosing this action"),
    C("obs_after", T.STRING, "the observation this action produced"),
    C("reward", T.INTEGER, "score change produced by this action"),
    C("score", T.INTEGER, "cumulative score after this action"),
    C("moves", T.INTEGER, "the game's move counter after this action"),
    C("room_before", T.ROOM, "room (object number) before the action"),
    C("room_after", T.ROOM, "room (object number) after the action"),
    C("moved", T.BOOLEAN, "whether the action changed the room"),
    C("direction", T.DIRECTION, "compass or other direction of a move, from the command (null if not a move)"),
    Column("tried_direction", T.DIRECTION, "the direction the command names (conventions.command_direction), "
           "whether or not it moved the player; a failed move has one; computed at load", derived=True),
    C("inventory_before", T.ListOf(T.ITEM), "items carried before the action, sorted"),
    C("inventory_after", T.ListOf(T.ITEM), "items carried after the action, sorted"),
    C("valid_actions", T.ListOf(T.ACTION), "valid actions before acting (Jericho's finder)"),
    C("done", T.BOOLEAN, "whether the game ended with this action"),
    Column("rejected", T.BOOLEAN, "whether the game's parser refused the command, by its reply (CONVENTIONS.md, "
           "Rejected commands); computed at load", derived=True),
    Column("changed", T.BOOLEAN, "whether the step changed the world, by Jericho's test of a valid action: an object "
           "moved or an attribute set or cleared, a watched byte changed, the score changed or the game ended "
           "(CONVENTIONS.md, Changes); from the header's `unchanged_steps`; null in traces recorded before it",
           derived=True),
), "one row per step of a Jericho episode")

JERICHO_ROOMS = Table("rooms", "jericho", (
    C("room", T.ROOM, "the game's object number of the room"),
    C("name", T.STRING, "the room object's short name as the game stores it"),
    C("display_name", T.STRING, "clean name shown in questions; disambiguated when names repeat"),
    C("visited", T.BOOLEAN, "whether the player was ever in it; false: a room of the game the episode never "
                            "entered, named as the game lists it (none in traces recorded before qtc 0.4)"),
    Column("title", T.STRING, "the display name without its number (dsl/room_names.py); derived at load",
           derived=True),
    Column("first_entered", T.STEP, "the step after which the player was first in it (0: the start room; null: "
           "never entered); under a horizon N a room first entered after N is not a row, and the display "
           "names are numbered among the rooms entered up to N; derived at load", derived=True, known_from=True),
), "the rooms of an episode's game: those it entered, and the others a question can name", has_step=False)

JERICHO_ITEM_EVENTS = Table("item_events", "jericho", (
    STEP,
    C("item", T.ITEM, "item name"),
    C("change", T.STRING, "gained or lost"),
    C("room", T.ROOM, "room the player was in when the action was chosen"),
), "items entering or leaving the inventory, derived from inventory_before/after")

JERICHO_NAMED_ITEMS = Table("named_items", "jericho", (
    STEP,
    C("item", T.ITEM, "a thing of the game (vocab.item) met by name at this step: a command named it by a "
                      "word of its name, or its name lies within that of a thing carried"),
), "things of the game a player could have met by name, each at its first such step (CONVENTIONS.md, False "
   "premises): never offered as false premises; derived at load")

JERICHO_INTRODUCED_ITEMS = Table("introduced_items", "jericho", (
    STEP,
    C("item", T.ITEM, "a thing's listed name (objects.name), at the first step the game printed it or a command "
                      "named it by one of its words"),
), "the things whose names a reader of the episode had met, each at its first such step (CONVENTIONS.md, Items): "
   "an answerable question names only things introduced by its horizon; derived at load", has_step_zero=True)

JERICHO_ROOM_EVENTS = Table("room_events", "jericho", (
    STEP,
    C("room", T.ROOM, "the room entered or left"),
    C("change", T.STRING, "entered or left"),
), "room changes, derived from room_before/after; step 0 'entered' is the starting room")

# Jericho's object tree: an object by the game's number, a thing (an object of vocab.item) by its listed name.
OBJECT = C("object", T.INTEGER, "the game's object number")
THING = C("item", T.ITEM, "its listed name")

JERICHO_OBJECTS = Table("objects", "jericho", (
    OBJECT,
    C("name", T.ITEM, "the object's listed name (CONVENTIONS.md, Items), asked of the game only for objects the "
                      "player could see or carried; null for the others and for those the game does not list"),
), "every object of the game's object tree (empty for a trace recorded before object trees)", has_step=False)

JERICHO_OBJECT_LOCATIONS = Table("object_locations", "jericho", (
    STEP,
    OBJECT,
    C("parent", T.INTEGER, "the object it is in (a room, a container, the player; 0: none, out of play)"),
    Column("last_step", T.STEP, "the last step after which it is still there (the episode's last step if it "
           "stays; under a horizon N, at most N)", ends_at_horizon=True),
), "where each object is in the tree: after steps `step` to `last_step` its parent is `parent`; step 0 is the "
   "tree before the first action; derived at load from the header's tree and moves", has_step_zero=True)

JERICHO_SIGHTINGS = Table("sightings", "jericho", (
    STEP,
    OBJECT,
    THING,
    C("room", T.ROOM, "the room it was seen in: the player's room after the step"),
    C("moved", T.BOOLEAN, "whether it was last seen before in another room (false at its first sighting)"),
), "things the player saw after each step: in its room, not carried, named by the text the step printed "
   "(CONVENTIONS.md, Sightings; dsl/sightings.py); step 0 is the opening text; derived at load", has_step_zero=True)

JERICHO_THINGS_PRESENT = Table("things_present", "jericho", (
    STEP,
    OBJECT,
    THING,
    C("room", T.ROOM, "the player's room after the step"),
), "things of the game in the player's room after each step (at any depth, not carried), whether or not the "
   "text named them: a thing never present was never seen, so false premises about sightings exclude the "
   "others (CONVENTIONS.md, Sightings); derived at load", has_step_zero=True)

JERICHO_MENTIONS = Table("mentions", "jericho", (
    STEP,
    OBJECT,
    THING,
    C("room", T.ROOM, "the player's room after the step (not necessarily the thing's)"),
), "things of the game the text of each step names while the player does not carry them, wherever they are: "
   "the sightings, and the texts that name a thing elsewhere (a rope seen from below), which could mislead a "
   "reader (CONVENTIONS.md, Sightings); step 0 is the opening text; derived at load", has_step_zero=True)

# TextWorld (runtime/record/textworld.py): a text game like Jericho's, so its steps, rooms and the events
# derived from them have Jericho's columns; what differs is where they come from. Rooms are numbered in the
# order of the game's entities, and the world's true state is TextWorld's facts (CONVENTIONS.md, TextWorld).
_TEXTWORLD_COLUMNS = {
    "room_before": C("room_before", T.ROOM, "room (its number in the game) before the action"),
    "room_after": C("room_after", T.ROOM, "room (its number in the game) after the action"),
    "valid_actions": C("valid_actions", T.ListOf(T.ACTION), "TextWorld's admissible commands before acting"),
    "changed": Column("changed", T.BOOLEAN, "whether the step changed a fact of the world or the score (CONVENTIONS.md, "
                      "TextWorld); derived at load", derived=True),
    "room": C("room", T.ROOM, "the room's number in the game (its order among the game's entities)"),
    "name": C("name", T.STRING, "the room's name as the game names it"),
    "visited": C("visited", T.BOOLEAN, "whether the player was ever in it; false: a room of the game (the true "
                                       "map) the episode never entered"),
}


def _textworld(table: Table, doc: str) -> Table:
    """A Jericho table's TextWorld twin: its columns, with the docs of _TEXTWORLD_COLUMNS where they differ."""
    return Table(table.name, "textworld", tuple(_TEXTWORLD_COLUMNS.get(c.name, c) for c in table.columns), doc,
                 table.has_step, table.has_step_zero, table.per_game, table.key)


TEXTWORLD_STEPS = _textworld(JERICHO_STEPS, "one row per step of a TextWorld episode")
TEXTWORLD_ROOMS = _textworld(JERICHO_ROOMS, "the rooms of an episode's game, entered or not (the game's true map)")
TEXTWORLD_ITEM_EVENTS = _textworld(JERICHO_ITEM_EVENTS, "items entering or leaving the inventory (the things "
                                                        "in(x, I)), derived from inventory_before/after")
TEXTWORLD_ROOM_EVENTS = _textworld(JERICHO_ROOM_EVENTS, JERICHO_ROOM_EVENTS.doc)
TEXTWORLD_NAMED_ITEMS = _textworld(JERICHO_NAMED_ITEMS, JERICHO_NAMED_ITEMS.doc)

TEXTWORLD_FACTS = Table("facts", "textworld", (
    STEP,
    C("predicate", T.STRING, "TextWorld's predicate: at, in, on, open, closed, locked, link, north_of, base, ..."),
    C("arg1", T.ITEM, "its first argument, named as the game names it (P: the player, I: the inventory)"),
    C("arg2", T.ITEM, "its second argument (null for a predicate of one)"),
    C("arg3", T.ITEM, "its third argument (link's second room; null for fewer)"),
    Column("last_step", T.STEP, "the last step after which the fact still holds (the episode's last step if it "
           "stays; under a horizon N, at most N)", ends_at_horizon=True),
), "the world's true state: the fact holds after steps `step` to `last_step`; step 0 is the state before the "
   "first action; derived at load from the header's facts and each step's changes", has_step_zero=True)

TEXTWORLD_EXITS = Table("exits", "textworld", (
    C("room", T.ROOM, "a room of the game"),
    C("direction", T.DIRECTION, "north, south, east or west"),
    C("target", T.ROOM, "the room that way"),
    C("door", T.ITEM, "the door between them (null: none)"),
), "the game's true map (TextWorld's north_of, ..., link facts at reset; its exits never change)", has_step=False)

TEXTWORLD_SIGHTINGS = Table("sightings", "textworld", (
    STEP,
    C("item", T.ITEM, "a thing in view: in the player's room, a door of it, on a thing there or in an open one, "
      "not carried"),
    C("holder", T.ITEM, "what it lay on or in (null: on the floor of the room, or a door)"),
    C("room", T.ROOM, "the player's room after the step"),
    C("moved", T.BOOLEAN, "whether it was last seen before in another room (false at its first sighting, and "
      "for a door, seen from both rooms it links)"),
), "the things in view after each step, by the facts (CONVENTIONS.md, TextWorld); step 0 is the start; derived "
   "at load", has_step_zero=True)

CRAFTER_STEPS = Table("steps", "crafter", (
    STEP,
    C("action", T.ACTION, "Crafter action name (move_left, do, ...)"),
    C("reason", T.STRING, "the agent's stated reason (null if it gave none)"),
    C("reward", T.FLOAT, "Crafter reward for this step"),
    C("x_before", T.INTEGER, "player column before the action"),
    C("y_before", T.INTEGER, "player row before the action (grows downwards)"),
    C("x_after", T.INTEGER, "player column after the action"),
    C("y_after", T.INTEGER, "player row after the action"),
    C("facing_before", T.DIRECTION, "left, right, up or down"),
    C("facing_after", T.DIRECTION, "left, right, up or down"),
    C("terrain_before", T.MATERIAL, "material under the player before the action"),
    C("terrain_after", T.MATERIAL, "material under the player after the action"),
    C("daylight", T.FLOAT, "daylight after the action, 0..1"),
    C("sleeping", T.BOOLEAN, "whether the player is asleep after the action"),
    C("done", T.BOOLEAN, "whether the episode ended with this action"),
    Column("rejected", T.BOOLEAN, "whether the action (not noop) changed nothing it could change (CONVENTIONS.md, "
           "Rejected commands); computed at load", derived=True),
), "one row per step of a Crafter episode")

CRAFTER_INVENTORY = Table("inventory", "crafter", (
    STEP,
    C("item", T.ITEM, "Crafter inventory key, stats (health, food, drink, energy) included"),
    C("count", T.INTEGER, "count after the step"),
), "inventory and stats after each step; step 0 is the initial inventory", has_step_zero=True)

CRAFTER_VIEW = Table("view", "crafter", (
    STEP,
    C("x", T.INTEGER, "map column"),
    C("y", T.INTEGER, "map row"),
    C("material", T.MATERIAL, "material of the cell"),
), "cells in the player's local view after each step; step 0 is the first view", has_step_zero=True)

CRAFTER_CREATURES = Table("creatures", "crafter", (
    STEP,
    C("creature", T.CREATURE, "zombie, skeleton, cow, plant, arrow"),
    C("x", T.INTEGER, "map column"),
    C("y", T.INTEGER, "map row"),
    C("health", T.INTEGER, "the creature's health"),
), "creatures in the local view after each step; step 0 is the first view", has_step_zero=True)

CRAFTER_MAP_INIT = Table("map_init", "crafter", (
    C("x", T.INTEGER, "map column"),
    C("y", T.INTEGER, "map row"),
    C("material", T.MATERIAL, "material at reset"),
), "the whole map at reset", has_step=False)

CRAFTER_MAP_CHANGES = Table("map_changes", "crafter", (
    STEP,
    C("x", T.INTEGER, "map column"),
    C("y", T.INTEGER, "map row"),
    C("material_before", T.MATERIAL, "material before the step"),
    C("material_after", T.MATERIAL, "material after the step"),
), "every cell changed by a step (felled tree, mined stone, placed table, ...)")

CRAFTER_ACHIEVEMENTS = Table("achievements", "crafter", (
    STEP,
    C("achievement", T.ACHIEVEMENT, "achievement counted at this step"),
    C("first", T.BOOLEAN, "whether this is the first time in the episode"),
), "achievement counter increments (collect_wood, place_table, eat_cow, wake_up, ...)")

CRAFTER_COLLECTIONS = Table("collections", "crafter", (
    STEP,
    C("item", T.ITEM, "what was received: wood, stone, coal, iron, diamond, drink, sapling"),
    C("material", T.MATERIAL, "the material collected from"),
), "successful collections (from Crafter's collect counters, so they count at the inventory cap too)")

CRAFTER_ITEM_EVENTS = Table("item_events", "crafter", (
    STEP,
    C("item", T.ITEM, "inventory key"),
    C("change", T.STRING, "gained or lost"),
    C("amount", T.INTEGER, "absolute change of the count"),
), "inventory count changes, derived from consecutive inventory rows")

CRAFTER_RECIPE_USES = Table("recipe_uses", "crafter", (
    C("item", T.ITEM, "what the recipe makes (wood_pickaxe, ...)"),
    C("ingredient", T.ITEM, "an inventory item making it uses up"),
    C("amount", T.INTEGER, "how many of the ingredient"),
), "Crafter's recipes, from its own data (crafter/data.yaml, make): the same rows for every episode",
    has_step=False)

CRAFTER_RECIPE_STATIONS = Table("recipe_stations", "crafter", (
    C("item", T.ITEM, "what the recipe makes"),
    C("station", T.MATERIAL, "a material that must be within one cell of the player (table, furnace)"),
), "the stations Crafter's recipes need nearby, from its own data: the same rows for every episode",
    has_step=False)

CRAFTER_COLLECT_RULES = Table("collect_rules", "crafter", (
    C("material", T.MATERIAL, "what the player faces when it does (tree, stone, water, ...)"),
    C("item", T.ITEM, "what doing there gives"),
    C("amount", T.INTEGER, "how many"),
    C("probability", T.FLOAT, "the chance it gives them (grass gives a sapling one time in ten), else 1"),
    C("leaves", T.MATERIAL, "the material left in the cell (stone leaves path)"),
), "Crafter's collect rules, from its own data (crafter/data.yaml, collect): the same rows for every episode",
    has_step=False)

CRAFTER_COLLECT_TOOLS = Table("collect_tools", "crafter", (
    C("material", T.MATERIAL, "a material whose collecting needs a tool"),
    C("tool", T.ITEM, "an inventory item it needs (kept, not used up)"),
    C("amount", T.INTEGER, "how many of it"),
), "the tools Crafter's collect rules need, from its own data: the same rows for every episode", has_step=False)

CRAFTER_PLACE_USES = Table("place_uses", "crafter", (
    C("item", T.ITEM, "what placing puts down (stone, table, furnace, plant)"),
    C("ingredient", T.ITEM, "an inventory item placing it uses up"),
    C("amount", T.INTEGER, "how many of the ingredient"),
), "Crafter's place rules, from its own data (crafter/data.yaml, place): the same rows for every episode",
    has_step=False)

CRAFTER_PLACE_TARGETS = Table("place_targets", "crafter", (
    C("item", T.ITEM, "what placing puts down"),
    C("material", T.MATERIAL, "a material it may be put on (the cell the player faces)"),
), "where Crafter's place rules may put each thing, from its own data: the same rows for every episode",
    has_step=False)

# The rule tables' test of sleep (CONVENTIONS.md, Crafting): asleep and not rested, the game turns every
# command into sleep, so nothing is collected, placed or made.
AWAKE = ("whether a command right after the step would be carried out: the player was awake after the step, "
         "or asleep with full energy (it wakes as the next step begins); asleep with less, the game turns "
         "every command into sleep")

CRAFTER_COLLECTABLE = Table("collectable", "crafter", (
    STEP,
    C("material", T.MATERIAL, "the material of the cell the player faced after the step, with nothing on it"),
    C("item", T.ITEM, "what doing there gives (collect_rules)"),
    C("tools", T.BOOLEAN, "whether the inventory after the step held every tool it needs"),
    C("awake", T.BOOLEAN, AWAKE),
), "for each step after which the player faced a material it could collect from, whether a do action right "
   "after the step would collect (tools and awake true; CONVENTIONS.md, Crafting)", has_step_zero=True)

CRAFTER_PLACEABLE = Table("placeable", "crafter", (
    STEP,
    C("item", T.ITEM, "a place rule's item"),
    C("ingredients", T.BOOLEAN, "whether the inventory after the step held everything placing it uses"),
    C("target", T.BOOLEAN, "whether the cell the player faced after the step is a material it may be put on, "
                           "with no creature or object on it"),
    C("awake", T.BOOLEAN, AWAKE),
), "for each step and place rule, whether a place action right after the step would succeed (all three true)",
    has_step_zero=True)

CRAFTER_CRAFTABLE = Table("craftable", "crafter", (
    STEP,
    C("item", T.ITEM, "a recipe's item"),
    C("ingredients", T.BOOLEAN, "whether the inventory after the step holds everything the recipe uses"),
    C("stations", T.BOOLEAN, "whether every station the recipe needs is within one cell of the player after "
                             "the step (CONVENTIONS.md, Crafting)"),
    C("awake", T.BOOLEAN, AWAKE),
), "for each step and recipe, whether a make action right after the step would succeed (all three true)",
    has_step_zero=True)

CRAFTER_DAMAGE = Table("damage", "crafter", (
    STEP,
    C("amount", T.INTEGER, "health lost in this step"),
    C("cause", T.STRING, "zombie, skeleton (arrow), lava, starvation, thirst, exhaustion, unknown"),
    C("attack", T.BOOLEAN, "whether a creature caused it"),
), "health lost, with its cause")

EVENTS = Table("events", "any", (
    STEP,
    C("kind", T.EVENT, "what happened, one of the game's event kinds (dsl/events.py, CONVENTIONS.md, Events)"),
    C("subject", T.STRING, "what it happened to: the item, room (display name), achievement, stat, terrain or "
                           "cause, as the trace names it; null for a kind without one (sleep, score change, death)"),
), "the events of both games in one table, one row per step, kind and subject; derived at load")

EVENT_SUBJECTS = Table("event_subjects", "any", (
    STEP,
    C("kind", T.EVENT, "an event kind"),
    C("subject", T.STRING, "a subject an event of that kind could plausibly have in this episode's game"),
    C("met", T.BOOLEAN, "false: a plausible subject (at step 0); true: the episode met it at this step, the "
                        "first it did (CONVENTIONS.md, Events)"),
), "per episode, the plausible subjects of each event kind, and when the episode met each: false premises are "
   "those not met within the horizon; derived at load", has_step_zero=True)

@dataclass(frozen=True)
class Environment:
    """What the language knows of an environment (docs/architecture.md, Adding an environment): its tables
    (env-prefixed in DuckDB), its vocabulary kinds with the language type of their values, for a game
    whose rooms are numbers the table that names them (the compiler shows rooms by its display names), and
    whether a question may name its things and rooms only once the game printed or the agent typed their
    names (CONVENTIONS.md, Items: the names rule, read from Jericho's `introduced_items`, `objects` and
    `rooms`); a game whose things are its own fixed words (Crafter) names any."""
    name: str
    tables: tuple[Table, ...]
    vocab_kinds: dict[str, T.Type]
    events: EnvironmentEvents
    rooms: Table | None = None
    names_introduced: bool = False
    # The dsl module (its FIXED_VALUES) of the values of language types the game fixes itself, imported only
    # once a template of the game is checked; None when they are only known from traces.
    fixed_values: str | None = None


@dataclass(frozen=True)
class EnvironmentEvents:
    """An environment's events (dsl/events.py, CONVENTIONS.md, Events; one derivation per kind in
    runtime/trace/events.py): its kinds, a closed vocabulary (`kind == "achievment"` is refused); the
    vocabularies (vocab kinds) each kind's plausible subjects come from (damage's are DAMAGE_CAUSES); the
    kinds whose events, worded without their subject (`event(none)`), hold far fewer than a reader takes
    the words to, never worded as a whole (not counted by `kind_count_between`, never a false premise by
    themselves)."""
    kinds: tuple[str, ...]
    subject_vocabulary: dict[str, tuple[str, ...]]
    broader_than_recorded: frozenset[str] = frozenset()


# The events' vocabulary kinds (dsl/events.py): `whole_event`, the kinds a question may word without their
# subject (EnvironmentEvents.broader_than_recorded).
EVENT_VOCAB_KINDS = {"event": T.EVENT, "whole_event": T.EVENT}

# A text game's events. Its first sightings are of things named whole as listed (CONVENTIONS.md,
# Sightings), while "you saw something for the first time" is true of every new room from step 1; they have
# no plausible subjects: a thing present but never named as listed may have been seen under another name,
# and the store does not tell them apart here.
TEXT_GAME_EVENTS = EnvironmentEvents(
    ("item_gained", "item_lost", "room_entered", "room_left", "score_changed", "death", "first_seen",
     "score_changed_by", "action"),
    {"item_gained": ("item",), "item_lost": ("item",), "room_entered": ("room",), "room_left": ("room",)},
    frozenset({"first_seen"}))

# A Jericho episode's rooms are not a vocabulary of its game but the rooms table (those it entered, and
# those a question can name).
JERICHO = Environment("jericho", (
    JERICHO_STEPS, JERICHO_ROOMS, JERICHO_ITEM_EVENTS, JERICHO_ROOM_EVENTS, JERICHO_NAMED_ITEMS,
    JERICHO_INTRODUCED_ITEMS,
    JERICHO_OBJECTS, JERICHO_OBJECT_LOCATIONS, JERICHO_SIGHTINGS, JERICHO_THINGS_PRESENT, JERICHO_MENTIONS,
), {"item": T.ITEM, "direction": T.DIRECTION, **EVENT_VOCAB_KINDS}, TEXT_GAME_EVENTS, JERICHO_ROOMS,
    names_introduced=True)

CRAFTER = Environment("crafter", (
    CRAFTER_STEPS, CRAFTER_INVENTORY, CRAFTER_VIEW, CRAFTER_CREATURES, CRAFTER_MAP_INIT,
    CRAFTER_MAP_CHANGES, CRAFTER_ACHIEVEMENTS, CRAFTER_COLLECTIONS, CRAFTER_ITEM_EVENTS, CRAFTER_DAMAGE,
    CRAFTER_RECIPE_USES, CRAFTER_RECIPE_STATIONS, CRAFTER_CRAFTABLE,
    CRAFTER_COLLECT_RULES, CRAFTER_COLLECT_TOOLS, CRAFTER_PLACE_USES, CRAFTER_PLACE_TARGETS,
    CRAFTER_COLLECTABLE, CRAFTER_PLACEABLE,
), {"action": T.ACTION, "item": T.ITEM, "stat": T.ITEM, "material": T.MATERIAL,
    "achievement": T.ACHIEVEMENT, "direction": T.DIRECTION, "creature": T.CREATURE,
    # What the player can stand on, and what it can collect: the plausible false premises about terrain
    # underfoot and collections.
    "terrain": T.MATERIAL, "collectable": T.ITEM, **EVENT_VOCAB_KINDS,
    # What a rule uses up: all that ever leaves the inventory (tools are kept).
    "consumable": T.ITEM},
    # Crafter's items lost are those a rule uses up: a tool never leaves (a false premise "the stone pickaxe
    # left your inventory" is rejected at once).
    EnvironmentEvents(("achievement", "item_gained", "item_lost", "damage", "sleep", "wake", "stat_low",
                       "terrain_first", "death", "first_seen", "action"),
                      {"achievement": ("achievement",), "item_gained": ("item",), "item_lost": ("consumable",),
                       "stat_low": ("stat",), "terrain_first": ("terrain",), "first_seen": ("material", "creature"),
                       "action": ("action",)}),
    fixed_values="crafter_data")

TEXTWORLD = Environment("textworld", (
    TEXTWORLD_STEPS, TEXTWORLD_ROOMS, TEXTWORLD_ITEM_EVENTS, TEXTWORLD_ROOM_EVENTS, TEXTWORLD_NAMED_ITEMS,
    TEXTWORLD_FACTS, TEXTWORLD_EXITS, TEXTWORLD_SIGHTINGS,
), {"item": T.ITEM, "direction": T.DIRECTION, **EVENT_VOCAB_KINDS}, TEXT_GAME_EVENTS, TEXTWORLD_ROOMS)

# Every environment, by name; the tables, vocabularies and rooms below are read from these records.
ENVIRONMENTS: dict[str, Environment] = {env.name: env for env in (JERICHO, CRAFTER, TEXTWORLD)}
ENVS = tuple(ENVIRONMENTS)

TABLES: tuple[Table, ...] = (EPISODES, VOCAB, *(t for env in ENVIRONMENTS.values() for t in env.tables),
                             EVENTS, EVENT_SUBJECTS)
# Each text game's rooms table: rooms are numbers, shown by its display names.
ROOM_TABLES = {env.name: env.rooms for env in ENVIRONMENTS.values() if env.rooms is not None}
# Vocabulary kinds per environment, with the language type of their values; `any`: what every game has,
# for templates of every game.
VOCAB_KINDS: dict[str, dict[str, T.Type]] = {
    **{env.name: env.vocab_kinds for env in ENVIRONMENTS.values()}, "any": EVENT_VOCAB_KINDS}


def tables_for(env: str) -> dict[str, Table]:
    """The tables a template of `env` may name, by their template name."""
    return {t.name: t for t in TABLES if t.env in ("any", env)}


def table_ddl(table: Table) -> str:
    cols = ", ".join(f'"{c.name}" {c.sql_type}' for c in table.all_columns)
    return f"CREATE TABLE IF NOT EXISTS {table.sql_name} ({cols})"


def ddl() -> list[str]:
    """CREATE TABLE statements for every physical table, in dependency-free order."""
    return [table_ddl(table) for table in TABLES]
