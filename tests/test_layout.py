"""The package's layout: every module is imported by its qtc.* name, and each folder imports only what
its __init__.py says it may.

pyproject.toml maps folders into the package (`qtc.dsl` is the folder `dsl/`). Importing `dsl.check`
bare as well would load a second copy of the module, with its own classes and tables, which breaks
isinstance checks and registrations in ways that are hard to trace. The imports are read from the
source (ast), never executed: `import x`, `from x import y`, relative imports, and module names given
as strings to importlib, `__import__` or `pytest.importorskip`.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.paths import PACKAGE_DIRS, REPO

# The folders whose name differs from their package's: imported by their folder name, they load twice.
BARE_NAMES = {folder for package, folder in PACKAGE_DIRS.items() if folder != package.replace(".", "/")}
SKIPPED_FOLDERS = {".git", "__pycache__", "build", "dist", ".hypothesis", ".pytest_cache", ".venv"}

# What the runtime as a whole may use of qtc beside the language (runtime/__init__.py).
ERRORS_AND_FILES = ("qtc.errors", "qtc.files", "qtc.processes")
ONLY, NEVER = "may import only", "never imports"
# (folder, ONLY or NEVER, modules), as the folder's __init__.py states it (for qtc.dsl: runtime/__init__.py,
# and docs/architecture.md for flags). A folder may always import itself; ONLY speaks of the modules of
# qtc, NEVER of any module.
RULES = [
    ("qtc.dsl", NEVER, ("qtc.runtime", "qtc.cli", "qtc.commands", "argparse")),  # nor parses flags
    ("qtc.dsl.reference", ONLY, ("qtc.dsl",)),
    ("qtc.dsl.reference", NEVER, ("qtc.dsl.compile", "qtc.dsl.ir")),  # an independent reading: not the compiler's
    ("qtc.record", ONLY, ("qtc.runtime.record",)),  # the public face of the recorder, nothing more
    ("qtc.runtime", ONLY, ("qtc.dsl", "qtc.templates", *ERRORS_AND_FILES)),
    ("qtc.runtime", NEVER, ("argparse",)),  # nothing here parses flags
    ("qtc.runtime.chat", ONLY, ("qtc.dsl", *ERRORS_AND_FILES)),  # the stages use it, not the other way round
    ("qtc.runtime.episode_rows", ONLY, ()),  # likewise
    ("qtc.runtime.arrow", ONLY, ("qtc.dsl",)),  # likewise
    ("qtc.runtime.user_code", ONLY, ERRORS_AND_FILES),  # likewise
    ("qtc.runtime.record", ONLY, ("qtc.dsl", "qtc.runtime.trace", "qtc.runtime.chat", *ERRORS_AND_FILES)),
    ("qtc.runtime.trace", ONLY, ("qtc.dsl", "qtc.runtime.spatial", "qtc.runtime.arrow", *ERRORS_AND_FILES)),
    ("qtc.runtime.spatial", ONLY, ("qtc.dsl", "qtc.runtime.episode_rows", "qtc.runtime.arrow")),
    ("qtc.runtime.generate", ONLY, ("qtc.dsl", "qtc.templates", "qtc.runtime.trace", "qtc.runtime.qa",
                                    "qtc.runtime.chat", "qtc.runtime.arrow", *ERRORS_AND_FILES)),
    ("qtc.runtime.qa", ONLY, ("qtc.dsl", "qtc.runtime.trace", *ERRORS_AND_FILES)),
    ("qtc.runtime.evaluate", ONLY, ("qtc.dsl", "qtc.runtime.qa", "qtc.runtime.trace", "qtc.runtime.chat",
                                    "qtc.runtime.episode_rows",
                                    *ERRORS_AND_FILES)),
    ("qtc.runtime.export", ONLY, ("qtc.dsl", "qtc.runtime.qa", "qtc.runtime.trace", "qtc.runtime.evaluate",
                                  *ERRORS_AND_FILES)),
    ("qtc.runtime.memory", ONLY, ("qtc.dsl", "qtc.runtime.qa", "qtc.runtime.trace", "qtc.runtime.chat",
                                  "qtc.runtime.episode_rows", "qtc.runtime.evaluate", "qtc.runtime.user_code",
                                  "qtc.runtime.arrow", *ERRORS_AND_FILES)),
    ("qtc.runtime.view", ONLY, ("qtc.dsl", "qtc.runtime.qa", "qtc.runtime.evaluate", "qtc.runtime.spatial",
                                "qtc.runtime.trace", "qtc.runtime.episode_rows", *ERRORS_AND_FILES)),
]
# Imports that break a rule today, each checked on its own as a strict xfail so that it stays visible
# and the rules above still hold for everything else.
@dataclass(frozen=True)
class Import:
    path: Path
    line: int
    name: str  # absolute: relative imports are resolved


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def module_name(path: Path) -> str | None:
    """The qtc.* name of a file of the package, or None for a file outside it (tests, bench)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    for package, folder in sorted(PACKAGE_DIRS.items(), key=lambda item: -len(item[1])):
        folder_parts = tuple(folder.split("/"))
        if parts[:len(folder_parts)] == folder_parts:
            rest = [p for p in parts[len(folder_parts):] if p != "__init__"]
            return ".".join([package, *rest])
    return None


def imports(source: str, path: Path, module: str | None = None,
            modules: frozenset[str] = frozenset()) -> list[Import]:
    """Every module `source` imports, by statement or by a string given to an import function.

    `module` is the file's qtc.* name, to resolve relative imports (left out of files outside the
    package); `from package import name` imports the module package.name if `modules` holds it, else
    the package."""
    tree = ast.parse(source, str(path))
    package = module if module is None or path.name == "__init__.py" else module.rpartition(".")[0]
    import_functions = {"__import__", "importorskip", "pytest.importorskip", "importlib"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(path, node.lineno, alias.name) for alias in node.names]
            import_functions |= {alias.asname or alias.name for alias in node.names if within(alias.name, "importlib")}
        elif isinstance(node, ast.ImportFrom):
            if node.level and package is None:
                continue
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(part for part in (base, node.module) if part)
            names = {f"{target}.{alias.name}" for alias in node.names} & modules or {target}
            found += [Import(path, node.lineno, name) for name in sorted(names)]
            if within(target, "importlib"):
                import_functions |= {alias.asname or alias.name for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            called = dotted(node.func)
            if called and any(within(called, name) for name in import_functions):
                found.append(Import(path, node.lineno, node.args[0].value))
    return found


def dotted(expression: ast.expr) -> str | None:
    if isinstance(expression, ast.Name):
        return expression.id
    if isinstance(expression, ast.Attribute):
        owner = dotted(expression.value)
        return f"{owner}.{expression.attr}" if owner else None
    return None


def python_files() -> list[Path]:
    return sorted(path for path in REPO.rglob("*.py")
                  if not any(part in SKIPPED_FOLDERS or part.endswith(".egg-info")
                             for part in path.relative_to(REPO).parts[:-1]))


@functools.cache
def every_import() -> tuple[tuple[str | None, Import], ...]:
    """(importing module's qtc.* name or None, the import) for every .py file of the repository."""
    files = {path: module_name(path) for path in python_files()}
    modules = frozenset(module for module in files.values() if module)
    return tuple((module, i) for path, module in files.items()
                 for i in imports(path.read_text(encoding="utf-8"), path, module, modules))


def bare(name: str) -> bool:
    return name.split(".")[0] in BARE_NAMES


def test_nothing_imports_a_package_folder_by_its_bare_name():
    assert BARE_NAMES >= {"dsl", "runtime"}
    found = [f"{i.path.relative_to(REPO)}:{i.line}: {i.name}" for _, i in every_import() if bare(i.name)]
    assert found == [], f"import these as {' or '.join(sorted(p + '.' for p in PACKAGE_DIRS if p != 'qtc'))}..."


def test_the_scan_sees_every_kind_of_import():
    source = """
import dsl.check, json
from runtime.trace import store
from . import sibling
from ..schema import Table
import importlib, importlib.resources as resources
from importlib import import_module as load
importlib.import_module("grammar")
load("templates.jericho")
resources.files("dsl")
__import__("runtime.chat")
pytest.importorskip("dsl.reference")
print("dsl.check")
"""
    path = REPO / "dsl" / "reference" / "x.py"
    names = [i.name for i in imports(source, path, module_name(path), frozenset({"qtc.dsl.reference.sibling"}))]
    assert [name for name in names if bare(name)] == [
        "dsl.check", "runtime.trace", "grammar", "templates.jericho", "dsl", "runtime.chat", "dsl.reference"]
    assert {"qtc.dsl.reference.sibling", "qtc.dsl.schema"} <= set(names) and "qtc.dsl.reference" not in names


def broken_rules(folder: str, kind: str, modules: tuple[str, ...]) -> list[str]:
    broken = []
    for importer, i in every_import():
        if importer is None or not within(importer, folder) or within(i.name, folder):
            continue
        if kind == ONLY:
            breaks = within(i.name, "qtc") and not any(within(i.name, m) for m in modules)
        else:
            breaks = any(within(i.name, m) and not within(importer, m) for m in modules)
        if breaks:
            broken.append(f"{i.path.relative_to(REPO)}:{i.line}: {i.name}")
    return broken


@pytest.mark.parametrize("folder, kind, modules", RULES, ids=[f"{f} {k} {' '.join(m)}" for f, k, m in RULES])
def test_each_folder_imports_what_its_init_allows(folder, kind, modules):
    assert broken_rules(folder, kind, modules) == []


def test_every_runtime_stage_has_a_rule():
    stages = {module_name(init) for init in (REPO / "runtime").glob("*/__init__.py")}
    assert stages and stages <= {folder for folder, kind, _ in RULES if kind == ONLY}


def test_the_graph_is_read():
    edges = {(module, i.name) for module, i in every_import()}
    assert ("qtc.runtime.trace.store", "qtc.runtime.spatial.udf") in edges
    assert ("qtc.dsl.check", "qtc.dsl.schema") in edges  # `from . import schema`



def test_every_package_folder_is_installed():
    """A folder of code that pyproject does not list works in an editable install and is missing from a
    wheel; one without an __init__.py is no regular package."""
    import tomllib
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {path.parent for path in python_files() if module_name(path) is not None}
    assert not [f for f in folders if not (f / "__init__.py").is_file()], "folders of code without __init__.py"
    unlisted = sorted(module_name(f / "__init__.py") for f in folders)
    unlisted = [name for name in unlisted if name not in listed]
    assert not unlisted, f"add to pyproject's packages: {unlisted}"


# ---- environments as plug-ins (docs/architecture.md, Adding an environment) ----

# The environments' names, as dsl/schema.py declares them (read from the source: the language is not run here).
ENV_NAMES = frozenset(node.args[0].value for node in ast.walk(ast.parse((REPO / "dsl" / "schema.py").read_text()))
                      if isinstance(node, ast.Call) and dotted(node.func) == "Environment"
                      and node.args and isinstance(node.args[0], ast.Constant))


def own_module(module: str) -> bool:
    """Whether a module is one of an environment's own (named for it: runtime/trace/jericho.py,
    runtime/record/crafter_agent.py, dsl/crafter_data.py), where its name may be compared."""
    return any(env in module.rpartition(".")[2] for env in ENV_NAMES)


def names_an_env(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in ENV_NAMES
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(names_an_env(e) for e in node.elts)


def env_name_tests(source: str) -> list[int]:
    """The lines where `source` compares something with an environment's name, or matches one."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.Compare) and any(map(names_an_env, [node.left, *node.comparators]))
                   or isinstance(node, ast.MatchValue) and names_an_env(node.value)})


@functools.cache
def modules_testing_env_names() -> dict[str, list[int]]:
    found = {}
    for path in python_files():
        module = module_name(path)
        if module is not None and not own_module(module):
            lines = env_name_tests(path.read_text(encoding="utf-8"))
            if lines:
                found[module] = lines
    return found


def test_the_name_scan_sees_comparisons_and_matches():
    assert ENV_NAMES == {"jericho", "crafter", "textworld"}
    source = ('if env == "crafter": pass\nx = a if env in ("jericho", "other") else b\n'
              'match env:\n    case "textworld": pass\ny = env == CRAFTER.name\nz = {"crafter": 1}["crafter"]\n')
    assert env_name_tests(source) == [1, 2, 4]
    assert own_module("qtc.runtime.trace.jericho") and own_module("qtc.dsl.crafter_data")
    assert not own_module("qtc.runtime.trace.store")


def test_no_stage_branches_on_an_environment_name():
    """Stage code reads an environment's record (runtime/*/registry.py, dsl/schema.py's ENVIRONMENTS);
    only the environment's own modules speak its name."""
    assert modules_testing_env_names() == {}




# Each stage's registry of environment records (docs/architecture.md, Adding an environment).
REGISTRIES = {"trace": ("qtc.runtime.trace.registry", "TRACE_ENVIRONMENTS"),
              "evaluate": ("qtc.runtime.evaluate.registry", "EVALUATE_ENVIRONMENTS"),
              "view": ("qtc.runtime.view.registry", "VIEW_ENVIRONMENTS"),
              "spatial": ("qtc.runtime.spatial.registry", "SPATIAL_ENVIRONMENTS"),
              "record": ("qtc.runtime.record.games", "GAMES")}


@pytest.mark.parametrize("stage", sorted(REGISTRIES))
def test_every_stage_registry_lists_the_environments_of_the_schema(stage):
    import importlib

    from qtc.dsl.schema import ENVIRONMENTS

    module, name = REGISTRIES[stage]
    registry = getattr(importlib.import_module(module), name)
    assert set(registry) == set(ENVIRONMENTS) == ENV_NAMES
    named = {env: record.name for env, record in registry.items() if isinstance(getattr(record, "name", None), str)}
    assert all(name == env for env, name in named.items())  # a record is listed under its own name


def test_the_version_qtc_reports_is_pyprojects():
    """Exports write `qtc.__version__` into their provenance: it is the installed project's version,
    not a copy that a release forgets to bump."""
    import tomllib

    import qtc
    assert qtc.__version__ == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
