"""The reference evaluator: an independent, plain-Python second reading of a checked template
(`evaluator.py`, over the values of `values.py`) and of the spatial primitives (`spatial.py`), written
from CONVENTIONS.md, so that the property tests can compare it with the compiled SQL. The reading of
each built-in function is the reference part of its record in dsl/functions/. May import the rest of
`qtc.dsl` and the games' own packages, never `qtc.runtime`.
"""
