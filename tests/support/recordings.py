"""What the session fixtures of conftest.py record, for the tests that check those recordings."""

from __future__ import annotations

CRAFTER_STEPS = 200
JERICHO_STEPS = 30
# Steps at which the live Crafter map is kept, to check the map rebuilt from the trace.
MAP_CHECK_STEPS = (0, 1, 37, 100, 150, 190)
# `qtc generate` flags that keep a run over the small_traces fixture (tests/runtime/generate) to seconds.
SMALL_RUN_FLAGS = ["--max-per-template", "6", "--horizon", "40", "--quiet"]
