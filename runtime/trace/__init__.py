"""Traces: what an episode is on disk (`format.py`: the JSONL trace format, read and written with
located errors; `consistency.py`: what a trace must hold beyond its types, checked at load), in DuckDB
(`store.py`: trace files loaded into the tables of `dsl/schema.py`; derived there by `objects.py`,
Jericho's object tree and sightings, `changes.py`, Jericho's steps that changed nothing, `events.py`, the events and rejected commands of both games, and
`crafter_rules.py`, Crafter's rules as tables and what an action after each step would do by them) and
at rest as Parquet (`parquet.py`: those tables by game and episode, read in place).
May import `qtc.dsl` (the schema) and `runtime.spatial` (registered on every store it opens).
"""
