"""Question generation: `run.py` runs every compiled template over a store once (or over shards of
the episodes, `shards.py`, in worker processes or Ray tasks, `runners.py`, `ray_cluster.py`), `sampling.py`
draws candidates (seeded, spread over episodes, mixed with false premises), `premises.py` checks each
false premise on its trace, `records.py` turns a candidate row into a QA record, and `paraphrase.py`
rewrites questions with a model, keeping only checked rewrites. May import `qtc.dsl`, `qtc.templates` (where the
standard library is), `runtime.trace`, `runtime.qa`, `runtime.chat` and
`runtime/arrow.py`.
"""
