"""Shared files under fuzzing (issue 32, items 1 and 2): question text built from the pieces a hostile
template would use never runs Python (it renders, or is a question not asked, or the checker refuses it
at its place); any QA file name gives an export whose task.py and YAML load as data, the name a literal.
The CI profile draws a few dozen of each; `HYPOTHESIS_PROFILE=deep` forty times as many (docs/testing.md)."""

from __future__ import annotations

import ast
import os

import jinja2
import yaml
from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples

from qtc.dsl.render import RenderError, make_environment, refused_constructs, render_question
from qtc.runtime.export.write import Provenance, task_name, write_export

# Pieces of Jinja a hostile template would put together: Python's dunder attributes, Jinja's globals and
# filters that reach objects, tags that load or recurse, values that exhaust memory or time.
PIECES = ("{{ ", " }}", "{% ", " %}", "t", "x", ".", "__class__", "__mro__", "__subclasses__()", "__globals__",
          "__init__", "__builtins__", "[1]", "['__class__']", "|attr('__class__')", "| ordinal", "| event(t)",
          "cycler", "lipsum", "range(10)", "self", "namespace", "config", "request", "include 'x'", "import 'x' as y",
          "macro f() %}{{ f() }}{% endmacro", "'a' * 10 ** 9", "[t] * 99999", "7 ** 99999", "if t", "endif",
          "for c in t", "endfor", "set y = t", "(", ")", "~", "+", "os.system('touch /tmp/qtc-pwned')", " ")


@examples(60)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_hostile_question_text_never_runs_python(text):
    env = make_environment()
    try:
        parsed = env.parse(text)
    except jinja2.TemplateSyntaxError:
        return  # the checker reports it at its place
    refused_constructs(parsed)  # never raises: the checker's view of the text
    try:
        render_question(env, text, {"t": "x"})
    except RenderError:
        pass
    assert not os.path.exists("/tmp/qtc-pwned")


class _TaskLoader(yaml.SafeLoader):
    pass


_TaskLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))

# Characters a file name may hold that break code or YAML written carelessly.
NAME_CHARACTERS = st.sampled_from(list("'\"\\\n\r\t #:{}[]-!&*|>%@`,?") + ["\u2028", "\u2029", "\u0085", "\x00x",
                                                                          "\ufeff", "include:", "class", "'''"])
NAMES = st.lists(NAME_CHARACTERS | st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=24).map(
    lambda parts: "".join(parts).replace("/", "_").replace("\x00", "_"))


@examples(40)
@given(NAMES, st.sampled_from(["inspect", "lm-eval"]))
def test_any_qa_file_name_gives_task_files_that_load_as_data(tmp_path_factory, name, target):
    folder = tmp_path_factory.mktemp("export")
    qa = folder / (name + ".jsonl")
    try:
        qa.write_text("")
    except OSError:  # a name the file system refuses (too long in bytes)
        return
    out = folder / "out"
    task = task_name(name.split(".")[0])
    write_export(target, out, [], [], Provenance(qa, (), "full", "0"), task, 64)
    if target == "inspect":
        module = ast.parse((out / "task.py").read_text(encoding="utf-8"))
        assert [n.name for n in module.body if isinstance(n, ast.FunctionDef)] == ["samples", "qtc_score", task]
        (value,) = [n.value for n in module.body if isinstance(n, ast.Assign) and n.targets[0].id == "QA_FILE"]
        assert ast.literal_eval(value) == qa.name
    else:
        ast.parse((out / "utils.py").read_text(encoding="utf-8"))
        loaded = yaml.load((out / f"{task}.yaml").read_text(encoding="utf-8"), Loader=_TaskLoader)
        assert loaded["task"] == task and loaded["test_split"] == "test" and len(loaded) == 10
