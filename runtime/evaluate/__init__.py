"""Evaluation: `context.py` renders what the agent observed up to a question's horizon, `ask.py`
asks a model in batches and records its answers (resumable), `scoring.py` scores one answer by the
benchmark's rules, `frames.py` shows a Crafter episode's screens to a vision model, and `report.py`
aggregates scores (Accuracy, F1, bootstrap intervals, and the paired differences of two runs). Each
environment is one record (`environment.py`: its description, how a state is shown, its legend, how its
actions are scored) in its own module, `jericho.py`, `crafter.py`, `textworld.py` (the text games share
`text_games.py`), listed in `registry.py`. May import
`qtc.dsl`, `runtime.qa`, `runtime.trace` (the store, and the screens kept beside traces), `runtime.chat`
and `runtime.episode_rows`.
"""
