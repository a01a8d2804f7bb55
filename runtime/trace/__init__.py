"""Traces: what an episode is on disk (`format.py`: the JSONL trace format, read and written with
located errors) and in DuckDB (`store.py`: trace files loaded into the tables of `dsl/schema.py`).
May import `qtc.dsl` (the schema) and `runtime.spatial` (registered on every store it opens).
"""
