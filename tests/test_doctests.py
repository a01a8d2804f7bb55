"""The examples (`>>>`) in the docstrings of every module of the package, each module imported by its
qtc.* name.

Not `pytest --doctest-modules` over the source folders: it would import `dsl/conventions.py` as
`dsl.conventions`, a second copy of the module beside `qtc.dsl.conventions` (tests/test_layout.py).
The modules are found by walking each package that pyproject.toml maps to a folder, since `qtc`'s own
folder holds only the command line.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

from support.paths import PACKAGE_DIRS


def reraise(name: str) -> None:
    raise  # walk_packages calls this while handling a package's import error: the error itself fails the run


def module_names() -> list[str]:
    names = set(PACKAGE_DIRS)
    for root in PACKAGE_DIRS:
        path = importlib.import_module(root).__path__
        names |= {module.name for module in pkgutil.walk_packages(path, root + ".", onerror=reraise)}
    return sorted(names)


MODULES = module_names()


def test_the_walk_reaches_every_mapped_folder():
    assert {"qtc.cli", "qtc.dsl.conventions", "qtc.dsl.reference.evaluator", "qtc.runtime.generate.sampling",
            "qtc.runtime.evaluate.scoring"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    failed, _ = doctest.testmod(importlib.import_module(name), report=False)  # prints each failure
    assert failed == 0
