"""Seeing results: the self-contained HTML report of one QA set and several models' answers.

`charts.py` draws grouped bar charts with their intervals as inline SVG, `maps.py` draws a Crafter map
with the player, the target and the shortest route, and a Jericho room graph with a path (both from
the spatial primitives' own maps and graphs), and `page.py` assembles the page: the scorer's numbers
per group and model, a filterable table of every question, and each question's evidence as the
answering prompt renders it, with its screens where the episode was recorded with frames. Nothing on the page is fetched when it is viewed. May import `qtc.dsl`,
`runtime.qa`, `runtime.evaluate`, `runtime.spatial`, `runtime.trace` and `runtime.episode_rows`.
"""
