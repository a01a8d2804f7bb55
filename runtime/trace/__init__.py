"""Traces: what an episode is on disk (`format.py`: the JSONL trace format, read and written with
located errors; `consistency.py`: what a trace must hold beyond its types, checked at load), in DuckDB
(`store.py`: trace files loaded into the tables of `dsl/schema.py`; `events.py`, the events of every game)
and at rest as Parquet (`parquet.py`: those tables by game and episode, read in place).

Each environment is one record (`environment.py`: its lines' specs and checks, its tables' SQL and
derivations, its vocabularies and events) in its own module, `jericho.py`, `crafter.py`, `textworld.py`,
listed in `registry.py`; the text games share `text_games.py`. Jericho's derive with `objects.py` (its
object tree and sightings) and `changes.py` (its steps that changed nothing), Crafter's with
`crafter_rules.py` (its rules as tables and what an action after each step would do by them).
May import `qtc.dsl` (the schema), `runtime.spatial` (registered on every store it opens) and
`runtime/arrow.py`.
"""
