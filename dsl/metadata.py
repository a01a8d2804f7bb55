"""What a template's header may say: its env, category and difficulty (answer types are in types.py)."""

from __future__ import annotations

from .schema import ENVS

CATEGORIES = ("single_hop", "multi_hop", "induction", "spatial", "temporal", "logical")
DIFFICULTIES = ("easy", "medium", "hard")
TEMPLATE_ENVS = (*ENVS, "any")
