"""The user's own code named on the command line as `package.module:Name` (an agent's factory, a memory
provider's class): imported from the working directory first, as `python -m` would find it. One rule for
every command that takes such a name.
"""

from __future__ import annotations

import importlib
import os
import sys

from qtc.errors import UserError


def one_line(error: BaseException) -> str:
    """An exception of the user's code as one line: its type and message, whitespace collapsed."""
    return " ".join(f"{type(error).__name__}: {error}".split())


def import_named(name: str, flag: str):
    """The object `package.module:Name` names (a dotted Name reaches inside the module); a module that does
    not import, or lacks the name, is a one-line error naming `flag`."""
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute:
        raise UserError(f"{flag} {name}: expected package.module:Name")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    importlib.invalidate_caches()
    try:
        found = importlib.import_module(module_name)
    except Exception as error:  # the user's module: anything it raises on import is its fault
        raise UserError(f"{flag} {name}: cannot import {module_name} ({one_line(error)})") from None
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise UserError(f"{flag} {name}: {module_name} has no {attribute!r}")
        found = getattr(found, part)
    return found
