"""A template of several envs (`env jericho, textworld`) read as one template per env.

Envs whose tables have one shape (a text game's steps, rooms and item events) ask the same questions of
them; such a template is written once, with no env in its id, and runs on each env it names. Each
instance is the template as if written for its env alone: its id is the env before the written id
(`rejected_count` on jericho is `jericho.rejected_count`), its env clause names that env only, and so
does its source text, which the questions' `template_hash` is taken of (docs/qa-format.md). A template
split into single-env copies, or copies joined into one, keeps its question ids and hashes. The
checker types each instance against its own env's tables: every expression is copied per instance.
"""

from __future__ import annotations

import copy

from . import ast as A
from . import schema
from .diagnostics import Diagnostic


def instances(template: A.Template, env_clause: A.Span | None, first_line: int) -> tuple[list[A.Template],
                                                                                           list[Diagnostic]]:
    """The templates `template` stands for (itself if its header names one env, or none), and the errors
    that keep a header of several envs from being read so. `first_line` is the line its source starts at."""
    names = [setting.value for setting in template.envs]
    if len(names) < 2:
        return [template], []
    problems = []
    for place, setting in enumerate(template.envs):
        if setting.value in names[:place]:
            problems.append(Diagnostic(template.path, setting.span, f"env '{setting.value}' is named twice",
                                       "name each env once"))
        elif setting.value == "any":
            problems.append(Diagnostic(template.path, setting.span, "'any' is every env: it is not listed with others",
                                       "write 'env any' alone, or list the envs"))
    written_env = template.id.split(".")[0]
    if written_env in schema.ENVS or written_env in names:
        rest = template.id.partition(".")[2] or template.id
        problems.append(Diagnostic(template.path, template.span,
                                   f"template '{template.id}' runs on {', '.join(names)}: its id names no env",
                                   f"write 'template {rest}': on each env it is named ENV.{rest}"))
    if problems:
        return [], problems
    found = []
    for setting in template.envs:
        instance = copy.deepcopy(template)
        instance.id, instance.env = f"{setting.value}.{template.id}", setting
        instance.source = _single_env_source(template, env_clause, first_line, setting.value)
        found.append(instance)
    return found, []


def _single_env_source(template: A.Template, env_clause: A.Span, first_line: int, env: str) -> str:
    """The template's text as written for `env` alone: its id and its env clause naming that env."""
    text = template.source
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)

    def offset(line: int, column: int) -> int:
        return starts[line - first_line] + column - 1

    # The env clause comes after the id: replaced first, the id's offsets still hold.
    for span, written in ((env_clause, f"env {env}"), (template.span, f"{env}.{template.id}")):
        text = text[:offset(span.line, span.column)] + written + text[offset(span.end_line, span.end_column):]
    return text
