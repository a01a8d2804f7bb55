"""Templates from files to compiled SQL: find .qtpl files, parse, check, compile, and keep every
diagnostic with the template it belongs to; a library compiled once is kept in qtc's cache for the
next process over the same templates (cached_library)."""

from __future__ import annotations

import bisect
import gc
import pickle
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import qtc.grammar

from . import cache, crafter_data
from .ast import Span
from .compile import CompiledTemplate
from .diagnostics import Diagnostic

_TEMPLATE_HEADER = re.compile(r"^template\s+([A-Za-z0-9_.]+)", re.MULTILINE)


@dataclass
class TemplateResult:
    id: str
    path: str
    line: int
    compiled: CompiledTemplate | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


@dataclass
class Library:
    results: list[TemplateResult]
    file_diagnostics: list[Diagnostic]  # errors outside any template (and unreadable files)
    sources: dict[str, str]

    @property
    def compiled(self) -> list[CompiledTemplate]:
        return [r.compiled for r in self.results if r.compiled is not None]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.file_diagnostics + [d for r in self.results for d in r.diagnostics]

    @property
    def ok(self) -> bool:
        return not self.diagnostics

    def render(self, diagnostic: Diagnostic) -> str:
        return diagnostic.render(self.sources.get(diagnostic.path, ""))


def template_files(paths: list[str | Path]) -> list[Path]:
    """The .qtpl files named or found below the given paths, sorted so output never depends on disk order."""
    found = []
    for path in map(Path, paths):
        found += sorted(path.rglob("*.qtpl")) if path.is_dir() else [path]
    return sorted(set(found))


# Expressions nested past what Python's recursion allows (a postfix chain `$t[1][1]...` a thousand deep,
# Jinja tags inside one another): refused as a whole, since no place in them is at fault more than another.
TOO_DEEP = "nested too deeply to read (brackets, calls or Jinja tags hundreds deep)"
TOO_DEEP_HINT = "write it with less nesting, e.g. with lets"


def load_library(paths: list[str | Path]) -> Library:
    # Imported here: a library read from the cache needs neither the parser (Lark) nor the checker.
    from .check import check_template
    from .compile import compile_template
    from .ir.nodes import Unsupported
    from .parse import parse_source
    from .render import make_environment

    jinja_env = make_environment()
    results: list[TemplateResult] = []
    file_diagnostics: list[Diagnostic] = []
    sources: dict[str, str] = {}
    for path in template_files(paths):
        name = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            file_diagnostics.append(Diagnostic(name, Span(1, 1, 1, 1), f"cannot read the file: {error}"))
            continue
        sources[name] = text
        try:
            templates, syntax_errors = parse_source(name, text)
        except RecursionError:
            file_diagnostics.append(Diagnostic(name, Span(1, 1, 1, 1), TOO_DEEP, TOO_DEEP_HINT))
            continue
        file_results = [TemplateResult(template_id, name, line) for template_id, line in _headers(text)]
        by_place = {(r.line, r.id): r for r in file_results}
        starts = [r.line for r in file_results]
        for diagnostic in syntax_errors:
            # The template whose text holds the error's line: the last one that starts at or before it.
            owner = file_results[before - 1] if (before := bisect.bisect_right(starts, diagnostic.span.line)) else None
            (owner.diagnostics if owner else file_diagnostics).append(diagnostic)
        for template in templates:
            result = by_place.get((template.span.line, template.id))
            if result is None:  # a header the line scan missed: after a '}' on the same line
                result = TemplateResult(template.id, name, template.span.line)
                file_results.append(result)
            try:
                checked, diagnostics = check_template(template, jinja_env)
                result.diagnostics += diagnostics
                if checked is not None:
                    result.compiled = compile_template(checked)
            except Unsupported as reason:
                result.diagnostics.append(Diagnostic(name, template.span, f"the compiler cannot run this "
                                                     f"template yet: {reason}", "write it another way"))
            except RecursionError:
                result.diagnostics.append(Diagnostic(name, template.span, TOO_DEEP, TOO_DEEP_HINT))
        parsed = {(template.span.line, template.id) for template in templates}
        # A header the line scan read otherwise than the parser ('template crafter.' with the id's rest on the
        # next line) is no template of its own: it is kept only for the errors it holds.
        results += sorted((r for r in file_results if r.diagnostics or (r.line, r.id) in parsed), key=lambda r: r.line)
    _report_duplicate_ids(results)
    return Library(results, file_diagnostics, sources)


def cached_library(paths: list[str | Path], prepare: Callable[[CompiledTemplate], object] | None = None) -> Library:
    """load_library(paths), kept in qtc's cache (cache.py) under the hash of the template files (their
    paths and text), of the compiler's own source, of Crafter's data and of the Python version, so a
    process over templates compiled before skips parsing, checking and compiling them (0.3-0.5 s for the
    standard library). `prepare` is called on each template of a library compiled anew before it is
    kept, for what the caller will ask of it besides (compile.statement keeps the statements it made on
    the template). The cache is qtc's own private folder: the file is a pickle of what this function
    computed, named by that hash, read only by the same compiler."""
    files = template_files(paths)
    try:
        texts = [part for path in files for part in (str(path), path.read_bytes())]
    except OSError:  # load_library reports an unreadable file
        return load_library(paths)
    name = f"library-{cache.digest(_compiler_digest(), crafter_data.DIGEST, sys.version, *texts)}.pickle"
    kept = cache.read(name)
    if kept is not None:
        try:
            return _unpickled(kept)
        except Exception:  # a file of an interrupted write, or of classes since changed: compiled again
            pass
    library = load_library(paths)
    for compiled in library.compiled if prepare else ():
        prepare(compiled)
    cache.write(name, pickle.dumps(library, protocol=pickle.HIGHEST_PROTOCOL))
    return library


def _unpickled(data: bytes) -> Library:
    """The library pickled in `data`, read with Python's cyclic garbage collector paused: the standard
    library's ~60,000 objects (nodes, spans, dicts) would set it off a hundred times over, each pass
    scanning every object made so far, for no garbage (0.1 s of 0.13; 0.025 s without). They are then
    moved to the collector's oldest generation (freeze, then unfreeze: no scan), so that its next young
    collections do not scan them once more (~6 ms); a full collection still scans, and frees, as ever."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


def _compiler_digest() -> str:
    """The hash of the compiler's source: every Python file of qtc.dsl and the grammar."""
    roots = (Path(__file__).parent, Path(qtc.grammar.__file__).parent)
    sources = [(root, path) for root, pattern in zip(roots, ("*.py", "*.lark")) for path in sorted(root.rglob(pattern))]
    return cache.digest(*(part for root, path in sources for part in (str(path.relative_to(root.parent)),
                                                                       path.read_bytes())))


def _headers(text: str) -> list[tuple[str, int]]:
    """Each template header's id and line, in one pass over `text`."""
    headers, line, counted_to = [], 1, 0
    for match in _TEMPLATE_HEADER.finditer(text):
        line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        headers.append((match.group(1), line))
    return headers


def _report_duplicate_ids(results: list[TemplateResult]) -> None:
    first_seen: dict[str, TemplateResult] = {}
    for result in results:
        if result.id in first_seen:
            other = first_seen[result.id]
            result.diagnostics.append(Diagnostic(
                result.path, Span(result.line, 10, result.line, 10 + len(result.id)),
                f"template id '{result.id}' is already used at {other.path}:{other.line}",
                "ids must be unique: questions and their hashes are keyed by them"))
            result.compiled = None
        else:
            first_seen[result.id] = result
