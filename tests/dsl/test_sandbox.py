"""Question text runs in Jinja's sandbox (dsl/render.py): a shared template reaches no Python object, no
global name, no filter qtc does not document, and makes no value that would exhaust memory or time. The
checker refuses such text at file:line:column (tests/dsl/fixtures/diagnostics/question_reaches_python);
here, text that reaches `render_question` anyway (as generate renders) fails as one question not asked."""

from __future__ import annotations

import time

import pytest

from qtc.dsl.render import FILTERS, RenderError, make_environment, render_question

ESCAPES = (
    "{{ t.__class__.__mro__[1].__subclasses__() }}",
    "{{ t['__class__'] }}",
    "{{ t | attr('__class__') }}",
    "{{ cycler.__init__.__globals__.os.system('true') }}",
    "{{ lipsum.__globals__ }}",
    "{{ range(10) | list }}",
    "{{ self.__init__ }}",
    "{% include '/etc/passwd' %}",
    "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "{{ 'no_such_kind' | event(none) }}",  # issue 32, item 11: a kind the phrase table does not know (KeyError)
)
EXHAUSTING = ("{{ 'x' * 10 ** 9 }}", "{{ [t] * 10 ** 9 }}", "{{ 7 ** 100000 }}", "{{ (10 ** 5000) ** 5000 }}")


@pytest.mark.parametrize("text", ESCAPES)
def test_text_that_reaches_for_python_or_fails_on_a_value_is_a_question_not_asked(text):
    with pytest.raises(RenderError):
        render_question(make_environment(), text, {"t": "x"})


@pytest.mark.parametrize("text", EXHAUSTING)
def test_text_that_would_exhaust_memory_or_time_fails_at_once(text):
    start = time.monotonic()
    with pytest.raises(RenderError, match="past 10000"):
        render_question(make_environment(), text, {"t": "x"})
    assert time.monotonic() - start < 5  # guards against a hang only


def test_the_documented_filters_and_expressions_render():
    env = make_environment()
    assert set(env.filters) == set(FILTERS) and not env.globals
    text = ("At the {{ t | ordinal }} step, {{ 'an' if item[0] in 'aeiou' else 'a' }} {{ item }} was {{ offset | abs "
            "| plural('step') }} away{% if horizon %} (of {{ horizon }}){% endif %}, {{ 'ab' * 3 }} {{ 2 ** 10 }}")
    assert render_question(env, text, {"t": 3, "item": "apple", "offset": -2, "horizon": None}) == (
        "At the third step, an apple was 2 steps away, ababab 1024")
