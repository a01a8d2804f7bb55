"""SQL text shared by the compiler and the functions' SQL: quoted strings, literals and identifiers,
and a compiled relation."""

from __future__ import annotations

from dataclasses import dataclass

from . import types as T


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sql_literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return sql_string(value)


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class Rel:
    """A compiled relation: a SELECT over its rows, and its order (keys compiled per alias)."""
    sql: str
    order: list  # [(A.Expr | str column, descending)]
    relation: T.Relation
