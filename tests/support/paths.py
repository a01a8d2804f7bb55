"""Where the tests find the repository's files and the shared story files."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "templates"
ROMS = REPO.parent / "shared" / "roms"  # Jericho story files: never in the repository
