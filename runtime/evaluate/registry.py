"""Every environment's evaluation record (environment.py), by name: the one list the evaluation stage
reads an environment from (tests/test_layout.py checks that it lists the environments of dsl/schema.py)."""

from __future__ import annotations

from .crafter import CRAFTER
from .environment import EvaluateEnvironment
from .jericho import JERICHO
from .textworld import TEXTWORLD

EVALUATE_ENVIRONMENTS: dict[str, EvaluateEnvironment] = {env.name: env for env in (JERICHO, CRAFTER, TEXTWORLD)}
