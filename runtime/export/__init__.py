"""Exports of a QA set to other harnesses: each question with the context `qtc answer` would send it in, as
a sample. `samples.py` builds the samples (through evaluate's own batching, prompt and rendering) and
scores a harness's completion with qtc's scorer; `write.py` writes them for inspect_ai, lm-eval or a
`datasets` folder, with a dataset card. May import `qtc.dsl`, `runtime.qa`, `runtime.trace` (trace files,
to hash them) and `runtime.evaluate`.
"""
