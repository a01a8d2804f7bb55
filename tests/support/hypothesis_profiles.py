"""Hypothesis profiles: `ci` (the default: few examples, derandomized, so CI never flakes) and `deep`
(many fresh examples): `HYPOTHESIS_PROFILE=deep python -m pytest tests/` (docs/testing.md).

A property test states its example count for CI through `examples(n)`; the deep profile multiplies it.
A test over fixed cases (caps, seeds, horizons) runs a sample of them in CI and all of them when deep,
through `cases(ci, deep)`: the default run stays well under 15 minutes on two cores.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

DEPTH = {"ci": 1, "deep": 40}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")

_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("deep", **_COMMON)
settings.load_profile(PROFILE)


def examples(n: int) -> settings:
    """Settings for a property test run on `n` examples in CI (and DEPTH times as many when deep)."""
    return settings(max_examples=n * DEPTH[PROFILE])


def cases(ci: tuple, deep: tuple) -> tuple:
    """The cases a test runs: `ci` in the default profile, `deep` (a superset) in the deep one."""
    assert set(ci) <= set(deep)
    return deep if PROFILE == "deep" else ci
