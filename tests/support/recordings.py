"""What the session fixtures of conftest.py record, for the tests that check those recordings."""

from __future__ import annotations

from support.paths import TEMPLATES

CRAFTER_STEPS = 200
JERICHO_STEPS = 30
# Steps at which the live Crafter map is kept, to check the map rebuilt from the trace.
MAP_CHECK_STEPS = (0, 1, 37, 100, 150, 190)
# A sample of the standard library for the tests of how a run is organised (shards, Ray, corpora, caps,
# output formats), not of what templates ask: a run costs about 50 ms of statements per template, so
# the whole library (tests/templates, tests/property) would make each such run several seconds longer.
# Both games and `env any`, five categories, both kinds of spatial primitive, multiple choice.
SAMPLE_LIBRARY = [str(TEMPLATES / name) for name in ("any/events.qtpl", "crafter/spatial.qtpl", "crafter/choices.qtpl",
                                                     "jericho/multi_hop.qtpl", "jericho/spatial.qtpl")]
# `qtc generate` flags that keep a run over the small_traces fixture (tests/runtime/generate) to seconds.
SMALL_RUN_FLAGS = ["--templates", *SAMPLE_LIBRARY, "--max-per-template", "6", "--horizon", "40", "--quiet"]
