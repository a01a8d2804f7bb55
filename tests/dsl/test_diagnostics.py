"""Every error kind of the parser and the checker: exact message, position and hint, and all of them at once."""

import pytest

from support.handmade import template
from qtc.dsl.check import Checker
from qtc.dsl.parse import parse_source
from qtc.dsl.render import make_environment


def diagnostics(source: str, path: str = "t.qtpl"):
    templates, errors = parse_source(path, source)
    found = list(errors)
    for t in templates:
        checker = Checker(t, make_environment())
        checker.check()
        found += checker.diagnostics
    return found


def one(source: str, path: str = "t.qtpl"):
    found = diagnostics(source, path)
    assert len(found) == 1, [d.render(source) for d in found]
    d = found[0]
    return d.message, (d.span.line, d.span.column), d.hint


BODY = """
  param t: steps.step
  question "At {{ t }}?"
  answer steps[$t].action
  evidence $t"""


def test_a_valid_template_has_no_errors():
    assert diagnostics(template("crafter", BODY, "action")) == []


@pytest.mark.parametrize("body, answer_type, expected", [
    (BODY.replace("steps[$t].action", "stepz[$t].action"), "action",
     ("unknown name 'stepz': not a let or a table", (8, 10), "did you mean 'steps'?")),
    (BODY.replace("steps[$t].action", "steps[$t].acton"), "action",
     ("unknown column 'acton' in steps", (8, 20), "did you mean 'action'?")),
    (BODY.replace("steps[$t].action", "steps[$tt].action"), "action",
     ("unknown parameter '$tt'", (8, 16), "did you mean 't'?")),
    (BODY.replace("answer steps[$t].action", "answer cout(steps)"), "integer",
     ("unknown function 'cout'", (8, 10), "did you mean 'count'?")),
    (BODY.replace("steps[$t].action", "steps[$t].action == 3"), "yesno",
     ("cannot compare action with integer", (8, 10), None)),
    (BODY, "integer",
     ("the answer is action, but answer_type integer needs integer", (8, 10), "did you mean 'answer_type action'?")),
    (BODY, "colour", ("unknown answer type 'colour'", (4, 15), "use one of 'achievement', 'action', 'direction', "
                      "'displacement', 'float', 'integer', 'item', 'list', 'location', 'step', 'string', 'terrain', 'yesno'")),
    (BODY.replace("At {{ t }}?", "At {{ t }} {{ tt }}?"), "action",
     ("question variable 'tt' is not a parameter or let", (7, 27), "did you mean 't'?")),
    (BODY.replace("At {{ t }}?", "At step?"), "action",
     ("the question does not mention parameter 't'", (7, 12), "show it, e.g. {{ t }}, or the question cannot be understood")),
    (BODY.replace("{{ t }}", "{{ t | ordinall }}"), "action", ("unknown filter 'ordinall'", (7, 23), "did you mean 'ordinal'?")),
    (BODY.replace("answer steps[$t].action", "answer mode(steps.action)"), "action",
     ("'mode' needs 'ties=' (one of 'alpha', 'first', 'last', 'unique')", (8, 10),
      "ties are never broken silently: see CONVENTIONS.md, Ties")),
    (BODY.replace("answer steps[$t].action", "answer mode(steps.action, ties=frist)"), "action",
     ("'frist' is not a value of 'ties'", (8, 34), "did you mean 'first'?")),
    (BODY.replace("answer steps[$t].action", "answer count(steps, 2)"), "integer",
     ("'count' takes 1 argument, got 2", (8, 10), "usage: count(relation)")),
    (BODY.replace("evidence $t", "evidence steps[$t].action"), "action",
     ("evidence must be steps, not action", (9, 12),
      "give a step ($t), steps of a relation (hits.step) or a range ($L..$R)")),
])
def test_checker_errors(body, answer_type, expected):
    assert one(template("crafter", body, answer_type)) == expected


def test_env_mismatch_table_of_the_other_env():
    source = template("jericho", BODY.replace("answer steps[$t].action", "answer count(inventory)"), "integer")
    assert one(source) == ("table 'inventory' is not available in jericho templates (it is a crafter table)",
                           (8, 16), None)


def test_env_mismatch_with_the_folder_and_the_id():
    source = template("crafter", BODY, "action").replace("crafter.t", "jericho.t")
    message, position, hint = diagnostics(source, "templates/jericho/x.qtpl")[0], None, None
    assert message.message == "template 'jericho.t' is named for jericho but declares env crafter"
    source = template("crafter", BODY, "action")
    assert one(source, "templates/jericho/x.qtpl") == (
        "a crafter template in the jericho folder", (2, 7), "move it to templates/crafter/ or write 'env jericho'")


def test_unknown_category_and_env():
    source = template("crafter", BODY, "action").replace("category single_hop", "category single_hob")
    assert one(source) == ("unknown category 'single_hob'", (3, 12), "did you mean 'single_hop'?")
    source = template("crafter", BODY, "action").replace("env crafter", "env crafterr")
    found = diagnostics(source)
    assert found[0].message == "unknown env 'crafterr'" and found[0].hint == "did you mean 'crafter'?"


def test_missing_clauses():
    source = "template crafter.t {\n  env crafter\n}\n"
    assert [d.message for d in diagnostics(source)] == [
        "template 'crafter.t' has no 'category' clause", "template 'crafter.t' has no 'answer_type' clause",
        "template 'crafter.t' has no 'answer' clause", "template 'crafter.t' has no 'question' clause",
        "template 'crafter.t' has no 'evidence' clause"]


def test_unused_parameter_is_reported_with_the_question_that_omits_it():
    found = diagnostics(template("crafter", BODY + "\n  param u: steps.step", "action"))
    assert [(d.message, d.span.line, d.span.column) for d in found] == [
        ("the question does not mention parameter 'u'", 7, 12), ("parameter 'u' is never used", 10, 9)]


def test_let_named_like_a_column():
    source = template("crafter", BODY + "\n  let action = steps[$t].action", "action")
    assert one(source) == ("let 'action' has the name of a column of 'steps'", (10, 7),
                           "choose another name, so that a bare name in a 'where' means one thing")


def test_adversarial_domain_errors():
    source = template("crafter", BODY + "\n  adversarial u: vocab.action", "action")
    assert one(source) == ("unknown parameter 'u'", (10, 15), None)
    source = template("crafter", BODY.replace("param t: steps.step", "param a: steps.action").replace(
        "{{ t }}", "{{ a }}").replace("steps[$t].action", "first(steps | where action == $a).action").replace(
        "evidence $t", "evidence first(steps | where action == $a).step") + "\n  adversarial a: vocab.colour", "action")
    assert one(source) == ("no vocabulary 'colour' for crafter", (10, 24),
                           "kinds: 'achievement', 'action', 'creature', 'direction', 'item', 'material', 'stat'")


# ---- syntax errors ----

def test_syntax_error_with_clause_hint():
    source = template("crafter", BODY.replace("question", "questoin"), "action")
    message, position, hint = one(source)
    assert message.startswith("unexpected 'questoin'; expected ") and position == (7, 3)
    assert hint == "did you mean 'question'?"


def test_single_equals_hint_and_single_quotes_hint():
    source = template("crafter", BODY.replace("steps[$t].action", "steps[$t].action = 1"), "action")
    message, position, hint = one(source)
    assert message.startswith("unexpected '='") and position == (8, 27) and hint == "use '==' to compare"
    source = template("crafter", BODY.replace('"At {{ t }}?"', "'At {{ t }}?'"), "action")
    assert one(source) == ("unexpected character \"'\"", (7, 12), "strings are written in double quotes")


def test_unclosed_bracket_is_named_where_it_opens():
    source = template("crafter", BODY.replace("steps[$t].action", "count(steps"), "integer")
    assert one(source) == ("'(' is never closed", (8, 15), "add ')'")


def test_missing_closing_brace():
    source = template("crafter", BODY, "action").rstrip().rstrip("}")
    message, position, hint = one(source)
    assert message.startswith("unexpected end of file") and hint == "is a closing '}' missing?"


def test_every_error_in_a_file_is_reported():
    bad_syntax = template("crafter", BODY.replace("question", "questoin").replace("answer steps[$t].action",
                                                                                 "answer count(steps"), "action")
    bad_names = template("crafter", BODY.replace("steps[$t].action", "stepz[$t].acton").replace(
        "evidence $t", "evidence $u"), "action").replace("crafter.t", "crafter.u")
    source = bad_syntax + "\n" + bad_names
    found = diagnostics(source)
    assert [(d.span.line, d.message.split(";")[0]) for d in found] == [
        (8, "'(' is never closed"), (7, "unexpected 'questoin'"),
        (19, "unknown name 'stepz': not a let or a table"), (20, "unknown parameter '$u'")]


def test_rendering_shows_file_line_column_source_line_caret_and_hint():
    source = template("crafter", BODY.replace("steps[$t].action", "steps[$t].acton"), "action")
    (d,) = diagnostics(source, "templates/crafter/x.qtpl")
    assert d.render(source) == (
        "templates/crafter/x.qtpl:8:20: error: unknown column 'acton' in steps\n"
        " 8 |   answer steps[$t].acton\n"
        "   |                    ^^^^^\n"
        "   = hint: did you mean 'action'?")


@pytest.mark.parametrize("body, expected", [
    ('  param t: steps.step where steps[$t].action == "move_lft"\n  question "{{ t }}?"\n  answer $t\n  evidence $t',
     ("'move_lft' is not among crafter's actions", "did you mean 'move_left'?")),
    ('  param t: steps.step\n  question "{{ t }}?"\n  answer nearest_distance($t, "watr", cells=seen)\n  evidence $t',
     ("'watr' is not among crafter's materials", "did you mean 'water'?")),
    ('  param t: steps.step where steps[$t].terrain_before in ["sand", "lavaa"]\n  question "{{ t }}?"\n'
     '  answer $t\n  evidence $t', ("'lavaa' is not among crafter's materials", "did you mean 'lava'?")),
])
def test_crafter_string_literals_are_checked_against_crafters_data(body, expected):
    message, _, hint = one(template("crafter", body))
    assert (message, hint) == expected
