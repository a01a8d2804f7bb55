"""Rendering: question text through Jinja2 (StrictUndefined), and answers as the text a reader sees.

The Jinja environment and its filters are defined here once; the checker uses the same environment to
find variables and filters, so a template that checks renders. Templates are shared as files, like any
package's data, so their text runs in Jinja's sandbox: no attribute of a Python object is reachable, only
the filters qtc documents exist, no global names, and no operator makes a value past QUESTION_VALUE_LIMIT.
"""

from __future__ import annotations

import jinja2
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from . import types as T
from .conventions import ORDINAL_WORDS
from .events import phrase

# The types whose values are a game's identifiers ('place_stone', 'collect_wood'), shown as words.
NAME_TYPES = frozenset({T.ACTION, T.ITEM, T.MATERIAL, T.ACHIEVEMENT, T.CREATURE})


def ordinal(value: int) -> str:
    """1 -> 'first', -1 -> 'last', -2 -> 'second-last'; words up to 'tenth', then '11th'."""
    if value in ORDINAL_WORDS:
        return ORDINAL_WORDS[value]
    suffix = "th" if 10 <= value % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")
    return f"{value}{suffix}"


def quote(value) -> str:
    return f"'{value}'"


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """'1 step', '2 steps'."""
    word = singular if count == 1 else plural_form or singular + "s"
    return f"{count} {word}"


def name_text(value) -> str:
    """A game's identifier as words: 'move_left' -> 'move left'; Jericho's names are words already."""
    return str(value).replace("_", " ")


def walk_text(directions: list[str]) -> str:
    """Moves in the order they are made, as the game's words: 'northeast, then down'."""
    return ", then ".join(directions)


def shown(ty: T.Type, value):
    """A parameter or let as question text shows it, whatever the template: names as words (every name
    of one type the same way, true and false premises alike), a list of directions as a walk, other
    lists as their elements; other values as they are, for the template's own filters.

    >>> shown(T.ACTION, "place_stone"), shown(T.ListOf(T.DIRECTION), ["northeast", "down"])
    ('place stone', 'northeast, then down')
    """
    if isinstance(ty, T.ListOf):
        texts = [str(shown(ty.element, v)) for v in value]
        return walk_text(texts) if ty.element == T.DIRECTION else ", ".join(texts)
    return name_text(value) if ty in NAME_TYPES else value


def displacement_text(dx: int, dy: int) -> str:
    """A grid displacement as words; x grows to the right and y grows downwards (Crafter's axes)."""
    parts = []
    if dx:
        parts.append(plural(abs(dx), "step") + (" right" if dx > 0 else " left"))
    if dy:
        parts.append(plural(abs(dy), "step") + (" down" if dy > 0 else " up"))
    return " and ".join(parts) if parts else "no movement"


# The most items (characters of a string, elements of a list) or bits of a number an operator of a
# question's text may make: far more than a question shows, far less than would exhaust memory or time.
QUESTION_VALUE_LIMIT = 10_000


class QuestionEnvironment(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with repetition (`*`) and powers (`**`) kept to QUESTION_VALUE_LIMIT."""
    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context, operator: str, left, right):
        if operator == "*":
            counts = [v for v in (left, right) if isinstance(v, int)]
            sized = [v for v in (left, right) if isinstance(v, (str, list, tuple))]
            if sized and counts and len(sized[0]) * counts[0] > QUESTION_VALUE_LIMIT:
                raise SecurityError(f"repeating a value past {QUESTION_VALUE_LIMIT} items")
        elif (isinstance(left, int) and isinstance(right, int) and abs(left) > 1
              and max(right, 0) * left.bit_length() > QUESTION_VALUE_LIMIT):
            raise SecurityError(f"a power past {QUESTION_VALUE_LIMIT} bits")
        return super().call_binop(context, operator, left, right)


# The filters a question may use (README.md, the question clause): qtc's own and Jinja's abs.
FILTERS = {"ordinal": ordinal, "quote": quote, "plural": plural, "event": phrase, "abs": abs}


def make_environment() -> jinja2.Environment:
    env = QuestionEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)
    env.globals.clear()  # range, dict, lipsum...: a question's names are its parameters, lets and horizon
    # `{{ kind | event(subject) }}`: one event in words (dsl/events.py).
    env.filters = dict(FILTERS)
    return env


# Constructs question text may not hold: reading an attribute or a named item (qtc's values are words,
# numbers and lists of them; this is how a template would reach Python's objects), and tags that load
# other templates or define macros (nothing to load; a macro may call itself without end).
_REFUSED_TAGS = {jinja2.nodes.Include: "include", jinja2.nodes.Import: "import", jinja2.nodes.FromImport: "from",
                 jinja2.nodes.Extends: "extends", jinja2.nodes.Macro: "macro", jinja2.nodes.CallBlock: "call"}


def refused_constructs(parsed: jinja2.nodes.Template) -> list[tuple[str, str]]:
    """What of a parsed question text the sandbox would refuse or qtc does not document, as (the word
    to point at, the message)."""
    refused = []
    for node in parsed.find_all((jinja2.nodes.Getattr, jinja2.nodes.Getitem, *_REFUSED_TAGS)):
        if isinstance(node, jinja2.nodes.Getattr):
            refused.append((node.attr, f"question text reads no attributes ('.{node.attr}'): "
                                       "its values are words, numbers and lists"))
        elif isinstance(node, jinja2.nodes.Getitem):
            if isinstance(node.arg, jinja2.nodes.Const) and isinstance(node.arg.value, str):
                refused.append((node.arg.value, f"question text reads no named items ([{node.arg.value!r}]): "
                                                "its values are words, numbers and lists"))
        else:
            tag = _REFUSED_TAGS[type(node)]
            refused.append((tag, f"question text has no '{{% {tag} %}}': it loads nothing and defines no macros"))
    return refused


class RenderError(Exception):
    """A question rendered blank or hit an undefined value."""


def render_question(env: jinja2.Environment, text: str, variables: dict) -> str:
    try:
        rendered = env.from_string(text).render(**variables)
    except jinja2.UndefinedError as error:
        raise RenderError(str(error)) from error
    except (jinja2.TemplateError, ArithmeticError, LookupError, TypeError, ValueError, MemoryError,
            RecursionError) as error:
        # An expression of the question's own that fails on a value (a filter given a number too large,
        # a value repeated past the sandbox's limit, an event kind the phrases do not know): that question is
        # not asked, and generate counts it.
        raise RenderError(f"the question's text failed to render: {type(error).__name__}: {error}") from None
    rendered = " ".join(rendered.split())
    if not rendered:
        raise RenderError("the question rendered blank")
    return rendered


def answer_text(answer_type: str, value) -> str:
    """The canonical text of a computed answer of the given answer type."""
    if answer_type == "yesno":
        return "yes" if value else "no"
    if answer_type == "displacement":
        return displacement_text(value["dx"], value["dy"])
    if answer_type in ("list", "steps", "sequence"):
        return ", ".join(str(v) for v in value)
    return str(value)
