"""Compiler diagnostics: an error with its place in a file, rendered like a good compiler's.

    templates/crafter/x.qtpl:12:10: error: unknown column 'acton' in table 'steps'
       12 |   let hits = steps | where acton == $action
          |                            ^^^^^
       = hint: did you mean 'action'?
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .ast import Span


@dataclass(frozen=True)
class Diagnostic:
    path: str
    span: Span
    message: str
    hint: str | None = None

    def render(self, source: str) -> str:
        lines = source.split("\n")  # qtc's lines: never splitlines, which also breaks at U+2028, form feeds...
        line_text = lines[self.span.line - 1] if 0 < self.span.line <= len(lines) else ""
        width = len(str(self.span.line))
        start = self.span.column
        end = self.span.end_column if self.span.end_line == self.span.line else len(line_text) + 1
        carets = "^" * max(1, end - start)
        out = [f"{self.path}:{self.span.line}:{self.span.column}: error: {self.message}",
               f" {self.span.line} | {line_text}",
               f" {' ' * width} | {' ' * (start - 1)}{carets}"]
        if self.hint:
            out.append(f" {' ' * width} = hint: {self.hint}")
        return "\n".join(out)


def did_you_mean(word: str, candidates) -> str | None:
    """A hint naming the closest candidate, or None when nothing is close."""
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def choices(candidates) -> str:
    return ", ".join(f"'{c}'" for c in sorted(set(candidates)))
