"""Templates from files to compiled SQL: find .qtpl files, parse, check, compile, and keep every
diagnostic with the template it belongs to."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .ast import Span
from .check import check_template
from .compile import CompiledTemplate, compile_template
from .diagnostics import Diagnostic
from .ir.nodes import Unsupported
from .parse import parse_source
from .render import make_environment

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
        headers = [(m.group(1), text.count("\n", 0, m.start()) + 1) for m in _TEMPLATE_HEADER.finditer(text)]
        file_results = [TemplateResult(template_id, name, line) for template_id, line in headers]
        for diagnostic in syntax_errors:
            owner = _owner(file_results, diagnostic.span.line)
            (owner.diagnostics if owner else file_diagnostics).append(diagnostic)
        for template in templates:
            result = next((r for r in file_results if r.line == template.span.line and r.id == template.id), None)
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


def _owner(results: list[TemplateResult], line: int) -> TemplateResult | None:
    """The template whose text holds `line`: the last one that starts at or before it."""
    before = [r for r in results if r.line <= line]
    return before[-1] if before else None


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
