"""The value types of the template language.

A type is a small frozen value. Scalar types are named; `Bag(T)` is a multiset of T-values (a column of
a relation, a parameter domain); `Relation(table)` is a set of rows of a schema table; `Row(table)` is one
such row. Semantic scalar types (action, room, item, ...) are distinct from their storage type so that
the checker can tell a room from a string even though a room is stored as an integer object number.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scalar:
    name: str
    storage: str  # DuckDB type of the stored value

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ListOf:
    element: "Type"

    def __str__(self) -> str:
        return f"list<{self.element}>"


@dataclass(frozen=True)
class Bag:
    element: "Type"

    def __str__(self) -> str:
        return f"bag<{self.element}>"


@dataclass(frozen=True)
class Relation:
    """A set of rows: a schema table, or a relation a function derives (runs)."""
    name: str
    columns: tuple[tuple[str, "Type"], ...]
    has_step: bool

    def column(self, name: str) -> "Type | None":
        return dict(self.columns).get(name)

    def __str__(self) -> str:
        return f"relation<{self.name}>"


@dataclass(frozen=True)
class Row:
    relation: Relation

    def __str__(self) -> str:
        return f"row<{self.relation.name}>"


Type = Scalar | ListOf | Bag | Relation | Row

INTEGER = Scalar("integer", "BIGINT")
FLOAT = Scalar("float", "DOUBLE")
BOOLEAN = Scalar("boolean", "BOOLEAN")
STRING = Scalar("string", "VARCHAR")
STEP = Scalar("step", "BIGINT")
ORDINAL = Scalar("ordinal", "BIGINT")
ACTION = Scalar("action", "VARCHAR")
ROOM = Scalar("room", "BIGINT")  # the game's object number; shown by display name
ITEM = Scalar("item", "VARCHAR")
MATERIAL = Scalar("material", "VARCHAR")
ACHIEVEMENT = Scalar("achievement", "VARCHAR")
DIRECTION = Scalar("direction", "VARCHAR")
CREATURE = Scalar("creature", "VARCHAR")
KEYWORD = Scalar("keyword", "VARCHAR")
EVENT = Scalar("event", "VARCHAR")  # an event kind (dsl/events.py): a closed vocabulary in both games
DISPLACEMENT = Scalar("displacement", "STRUCT(dx BIGINT, dy BIGINT)")
NULL = Scalar("null", "NULL")

SCALARS = {t.name: t for t in (INTEGER, FLOAT, BOOLEAN, STRING, STEP, ORDINAL, ACTION, ROOM, ITEM,
                               MATERIAL, ACHIEVEMENT, DIRECTION, CREATURE, KEYWORD, DISPLACEMENT, EVENT)}

# Numeric types mix freely in arithmetic and comparison; a step is an integer that names a step.
NUMERIC = frozenset({INTEGER, FLOAT, STEP, ORDINAL})
# String-like types compare with plain strings (a template may write `action == "move_left"`).
TEXTUAL = frozenset({STRING, ACTION, ITEM, MATERIAL, ACHIEVEMENT, DIRECTION, CREATURE, KEYWORD, EVENT})
# The types whose values may name a thing of a Jericho game (an item, an event's subject as text): an
# answerable question names only things introduced by its horizon (CONVENTIONS.md, Items).
NAMING = frozenset({ITEM, STRING})

# The answer types a template may declare, and the value type each one requires of the answer
# expression. A `yesno` answer is a boolean rendered as yes/no; `location` is a room.
ANSWER_TYPES: dict[str, Type] = {
    "step": STEP,
    "integer": INTEGER,
    "float": FLOAT,
    "string": STRING,
    "action": ACTION,
    "location": ROOM,
    "item": ITEM,
    "terrain": MATERIAL,
    "achievement": ACHIEVEMENT,
    "direction": DIRECTION,
    "displacement": DISPLACEMENT,
    "yesno": BOOLEAN,
    "list": ListOf(STRING),  # the elements in any order
    "steps": ListOf(STEP),  # steps, in any order
    "sequence": ListOf(STRING),  # the elements in their order (ordered answers, scored by order)
}


def compatible(expected: Type, actual: Type) -> bool:
    """Whether a value of type `actual` may stand where `expected` is wanted."""
    if actual == NULL or expected == actual:
        return True
    if isinstance(expected, Scalar) and isinstance(actual, Scalar):
        if expected in NUMERIC and actual in NUMERIC:
            # An integer expression may name a step and vice versa; floats only widen.
            return not (expected != FLOAT and actual == FLOAT)
        return expected == STRING and actual in TEXTUAL
    if isinstance(expected, ListOf) and isinstance(actual, ListOf):
        return compatible(expected.element, actual.element)
    return False


def comparable(a: Type, b: Type) -> bool:
    """Whether two values may be compared with == or <."""
    if NULL in (a, b) or a == b:
        return True
    if a in NUMERIC and b in NUMERIC:
        return True
    return a in TEXTUAL and b in TEXTUAL and STRING in (a, b)
