"""Every environment's spatial record (environment.py), by name: the one list udf.py reads an environment's
spatial state from (tests/test_layout.py checks that it lists the environments of dsl/schema.py)."""

from __future__ import annotations

from .crafter import CRAFTER
from .environment import SpatialEnvironment
from .jericho import JERICHO
from .textworld import TEXTWORLD

SPATIAL_ENVIRONMENTS: dict[str, SpatialEnvironment] = {env.name: env for env in (JERICHO, CRAFTER, TEXTWORLD)}
