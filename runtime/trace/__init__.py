"""Traces: what an episode is on disk (`format.py`: the JSONL trace format, read and written with
located errors), in DuckDB (`store.py`: trace files loaded into the tables of `dsl/schema.py`; Jericho's
object tree and sightings by `objects.py`) and at rest as Parquet (`parquet.py`: those tables by game
and episode, read in place).
May import `qtc.dsl` (the schema) and `runtime.spatial` (registered on every store it opens).
"""
