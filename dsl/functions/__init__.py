"""The built-in functions of the template language, one record each (see record.py for its parts), in
one module per family:

    rows.py         count, exists, first, last, nth, argmax, argmin, runs
    aggregates.py   count_distinct, sum, min, max, mode, list, sequence, flatten
    text.py         words, mentions, occurrences, first_sentence
    scalars.py      len, abs, displacement
    spatial.py      the spatial primitives, from their declarations in dsl/primitives.py

The checker, the compiler and the reference evaluator look a function up here by name. Adding one is
writing its record in its family's module (and adding it to that module's FUNCTIONS), with its tests.
"""

from __future__ import annotations

from . import aggregates, rows, scalars, spatial, text
from .record import OPTION_REASONS, Function

FUNCTIONS: dict[str, Function] = {function.name: function for family in (rows, aggregates, text, scalars, spatial)
                                  for function in family.FUNCTIONS}

__all__ = ["FUNCTIONS", "OPTION_REASONS", "Function"]
