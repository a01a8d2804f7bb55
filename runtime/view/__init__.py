"""Seeing results: the self-contained HTML report of one QA set and several models' answers.

`charts.py` draws grouped bar charts with their intervals as inline SVG, `maps.py` draws a Crafter map
with the player, the target and the shortest route (and its legend), and a text game's room graph with a
path (both from the spatial primitives' own maps and graphs), `episodes.py` reads what a question's
details show from the trace store (its evidence as the answering prompt renders it, the steps a run
sent, screens, maps), `requests.py` reads `qtc answer --log-requests` logs, `questions.py` writes the
table of questions (one row each, the models side by side) and their details, `assets.py` holds the
page's style and script, and `page.py` assembles the page: the scorer's numbers per group and model,
each run's failures, and the questions. Each environment is one record (`environment.py`: a spatial
question's figure) in its own module, `jericho.py`, `crafter.py`, `textworld.py` (the text games share `text_games.py`),
listed in `registry.py`. Nothing on the page is fetched when it is viewed. May import
`qtc.dsl`, `qtc.errors`, `runtime.qa`, `runtime.evaluate`, `runtime.spatial`, `runtime.trace` and
`runtime.episode_rows`.
"""
