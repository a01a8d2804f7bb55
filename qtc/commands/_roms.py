"""Where story files are looked for when none is given: `$QTC_ROMS`, `./roms`, then `../shared/roms`.
Used by `qtc demo` (zork1.z5) and `qtc import emembench` (the story file a logged run played)."""

from __future__ import annotations

import os
from pathlib import Path

ROMS_VARIABLE = "QTC_ROMS"


def rom_folders() -> list[Path]:
    """The folders looked in, in order."""
    from_environment = [Path(os.environ[ROMS_VARIABLE])] if os.environ.get(ROMS_VARIABLE) else []
    return from_environment + [Path("roms"), Path("..") / "shared" / "roms"]


def find_rom(name: str) -> Path | None:
    """The first story file called `name` in the folders, or None."""
    return next((folder / name for folder in rom_folders() if (folder / name).is_file()), None)
