"""A package of qtc as it was at an earlier git revision, imported beside the working tree's, so that
a benchmark can run the code before and after a change side by side in one process."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def import_before(rev: str, folder: str, module: str) -> ModuleType:
    """`module` of the package in `folder` (e.g. runtime/spatial) at `rev`, imported as the package
    `<folder's name>_before`; its absolute imports (qtc.*) still reach the working tree."""
    return importlib.import_module(f"{_package(rev, folder)}.{module}")


@lru_cache(maxsize=None)
def _package(rev: str, folder: str) -> str:
    """A temporary package holding the Python files of `folder` at `rev`, on sys.path; its name."""
    name = f"{Path(folder).name}_before"
    package = Path(tempfile.mkdtemp()) / name
    package.mkdir()
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{rev}:{folder}"],
                            capture_output=True, text=True, check=True).stdout.split()
    for file in listed:
        if file.endswith(".py"):
            source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{folder}/{file}"],
                                    capture_output=True, text=True, check=True).stdout
            (package / file).write_text(source)
    sys.path.insert(0, str(package.parent))
    return name


@lru_cache(maxsize=None)
def tree_before(rev: str) -> Path:
    """A folder that, put first on PYTHONPATH, makes `import qtc` the whole package as it was at `rev`
    (its folders mapped as pyproject.toml maps them), for a benchmark's worker process."""
    root = Path(tempfile.mkdtemp())
    source = root / "source"
    source.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    package = root / "path" / "qtc"
    package.parent.mkdir()
    (source / "qtc").rename(package)
    for name, folder in (("dsl", "dsl"), ("runtime", "runtime"), ("grammar", "grammar"), ("templates", "templates")):
        (package / name).symlink_to(source / folder, target_is_directory=True)
    return package.parent
