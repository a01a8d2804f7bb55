"""SQL text shared by the compiler and the functions' lowering: quoted strings, literals and identifiers."""

from __future__ import annotations


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
