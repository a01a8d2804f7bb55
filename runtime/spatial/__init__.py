"""The spatial primitives at run time: `grid.py` (Crafter's map as it was before a step, what the
player had seen, shortest routes and walks), `rooms.py` (a text game's room graph of the moves made),
each environment's record of how its state is loaded (`environment.py`, its own module, `registry.py`) and
`udf.py` (each primitive of `dsl/primitives.py` registered in DuckDB as `qtc_<name>`). May import
`qtc.dsl`, `runtime/episode_rows.py` and `runtime/arrow.py` only: the store registers these functions,
not the other way round.
"""
