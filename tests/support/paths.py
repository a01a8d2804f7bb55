"""Where the tests find the repository's files and the shared story files."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Each package of qtc that pyproject.toml maps to a folder: {"qtc.dsl": "dsl", ...}.
PACKAGE_DIRS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
TEMPLATES = REPO / "templates"
ROMS = REPO.parent / "shared" / "roms"  # Jericho story files: never in the repository
