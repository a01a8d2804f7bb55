"""Every environment's report record (environment.py), by name: the one list the report reads an
environment from (tests/test_layout.py checks that it lists the environments of dsl/schema.py)."""

from __future__ import annotations

from .crafter import CRAFTER
from .environment import ViewEnvironment
from .jericho import JERICHO
from .textworld import TEXTWORLD

VIEW_ENVIRONMENTS: dict[str, ViewEnvironment] = {env.name: env for env in (JERICHO, CRAFTER, TEXTWORLD)}
