"""qtc's cache (dsl/cache.py): a compiled library kept for the next process over the same templates, and
Crafter's data kept as JSON. A cached library is the library compiled anew; a changed template, a
damaged cache file or no cache at all gives the same as compiling."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qtc.dsl import cache, crafter_data
from qtc.dsl.compile import statement
from qtc.dsl.library import cached_library, load_library

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "jericho"


def compiled(library) -> list[tuple]:
    return [(c.id, c.sql, statement(c, 16, premise=True, cut=True)) for c in library.compiled]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("QTC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def library_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("library-*.pickle"))


def test_a_library_read_from_the_cache_is_the_library_compiled(cache_dir, tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    fresh = compiled(load_library([templates]))
    made = []
    first = cached_library([templates], made.append)
    assert compiled(first) == fresh and len(made) == len(fresh)
    assert len(library_files(cache_dir)) == 1
    again = cached_library([templates], made.append)
    assert compiled(again) == fresh and len(made) == len(fresh)  # read, not compiled: nothing prepared
    # Changing a template compiles the library again, under another name.
    changed = sorted(templates.rglob("*.qtpl"))[0]
    changed.write_text(changed.read_text() + "\n# changed\n")
    assert compiled(cached_library([templates])) == compiled(load_library([templates]))
    assert len(library_files(cache_dir)) == 2


def test_a_damaged_cache_file_is_compiled_again(cache_dir):
    cached_library([TEMPLATES])
    (kept,) = library_files(cache_dir)
    kept.write_bytes(kept.read_bytes()[:1000])
    assert compiled(cached_library([TEMPLATES])) == compiled(load_library([TEMPLATES]))


def test_an_empty_cache_dir_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("QTC_CACHE_DIR", "")
    assert cache.folder() is None
    assert compiled(cached_library([TEMPLATES])) == compiled(load_library([TEMPLATES]))
    cache.write("x", b"y")
    assert cache.read("x") is None


def test_crafter_data_from_the_cache_is_crafters_own():
    assert crafter_data._DATA == crafter_data._read_crafter()
