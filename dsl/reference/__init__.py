"""The reference evaluator: an independent, plain-Python second reading of a checked template
(`evaluator.py`) and of the spatial primitives (`spatial.py`), written from CONVENTIONS.md, so that the
property tests can compare it with the compiled SQL. May import the rest of `qtc.dsl` and the games'
own packages, never `qtc.runtime`.
"""
