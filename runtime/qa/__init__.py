"""The files that generation writes and evaluation reads (docs/qa-format.md): `format.py` is the question
record's contract (its fields, the not-answerable answer), `questions.py` reads and validates QA sets,
`write.py` writes them (JSONL or Parquet, atomically), `answers.py` reads a model's answers, and
`appendlog.py` is the append-only JSONL log that lets a long run resume. May import `qtc.dsl`
(categories, answer types) and `runtime.trace` (its located JSONL reading).
"""
