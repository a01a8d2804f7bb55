"""Bugs the property tests found in code these tests do not own, each shown on a small input; fixed
ones stay as regression tests."""

from __future__ import annotations

import pytest
from support.fuzzing import assert_reported, round_trip


def test_a_template_after_a_brace_on_the_same_line_gets_errors_not_a_traceback():
    assert_reported("template crafter.a {\n} template crafter.b {\n}\n")


@pytest.mark.parametrize("reason", ["go\u2028north", "go\u0085north", "go\u2029north"])
def test_a_reason_with_a_unicode_line_separator_round_trips(reason):
    assert round_trip(reason) == reason


@pytest.mark.parametrize("answer", ["9" * 5000, "99999999999999999999", "9" * 400 + ".5"])
def test_a_number_too_large_for_its_type_is_a_positioned_error(answer):
    from support.fuzzing import compile_text

    text = ("template crafter.t {\n  env crafter\n  category single_hop\n  answer_type integer\n"
            f"  question \"x\"\n  answer {answer}\n  evidence 1\n}}\n")
    assert_reported(text)
    code, stderr, _ = compile_text(text)
    assert code == 1 and ":6:10: error: " in stderr and ("64 bits" in stderr or "too large" in stderr)


@pytest.mark.parametrize("line", [1, 3])
def test_bytes_that_are_not_utf8_are_refused_with_their_line_and_column(tmp_path, line):
    """Found by the deep fuzz run (bytes flipped): the refusal named the file and a byte offset only."""
    import duckdb
    from support.strategies import seeded_episode, write_episodes

    from qtc.errors import UserError
    from qtc.runtime.trace.format import read_header
    from qtc.runtime.trace.store import load_traces

    (path,) = write_episodes([seeded_episode("jericho", 1, 4)], tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = lines[line - 1][:10] + b"\xff" + lines[line - 1][11:]
    path.write_bytes(b"\n".join(lines))
    expected = f"{path}:{line}: not UTF-8 text (byte 0xff at column 11: invalid start byte)"
    for read in (lambda: load_traces(duckdb.connect(), [path]), *([lambda: read_header(path)] if line == 1 else [])):
        with pytest.raises(UserError) as error:
            read()
        assert str(error.value) == expected


def test_a_template_id_broken_over_two_lines_is_one_template_not_a_failure_without_errors():
    """Found by the deep fuzz run: the header scan read 'crafter.' as a template of its own, which then
    failed with no error (exit 1, nothing said)."""
    from support.fuzzing import compile_text

    text = ("template crafter.\nt {\n  env crafter\n  category single_hop\n  answer_type integer\n"
            "  question \"x\"\n  answer 1\n  evidence 1\n}\n")
    assert_reported(text)
    code, stderr, _ = compile_text(text)
    assert code == 0, stderr


def test_a_carriage_return_ends_a_line_of_a_template():
    """Found by the deep fuzz run: a lone '\\r' ends a line as qtc reads a file, so an error after it is at
    a line the file holds (the check had counted '\\n' only)."""
    text = "template crafter.t {\r  env crafter\r  category single_hop\r  param[x: 1]\n"
    from support.fuzzing import compile_text, unplaced_errors

    code, stderr, _ = compile_text(text)
    assert code == 1 and ":4:8: error: " in stderr and not unplaced_errors(stderr, text), stderr


TEMPLATE = ("template crafter.t {\n  env crafter\n  category single_hop\n  answer_type action\n"
            "  param t: steps.step\n  question \"At {{ t }}?\"\n  answer steps[$t].action\n  evidence $t\n}\n")


@pytest.mark.parametrize("text", [
    TEMPLATE.replace("steps[$t].action", "steps[$t].action\x0b"),  # refused at line 7: quoted from line 6
    TEMPLATE.replace("}\n", "  # \x1cnote (\n"),  # the end of file at a line after the comment
    TEMPLATE.replace("action\n  param", "action\u2028\n  param"),
], ids=["vertical-tab", "file-separator-in-a-comment", "line-separator"])
def test_a_diagnostic_quotes_its_own_line_whatever_python_takes_for_a_line_break(text):
    """Issue 32, item 11, found by the mutant fuzz: a diagnostic quoted the line Python's splitlines
    counted (breaking at U+000B, U+001C, U+2028...) where the parser counts '\\n' only."""
    from support.fuzzing import compile_text

    assert compile_text(text)[0] == 1
    assert_reported(text)


@pytest.mark.parametrize("junk", ["\x1c", "\xa0", "\u3000"])
def test_a_character_before_the_first_template_that_python_calls_blank_is_an_error(junk):
    """Issue 32, item 11: the text before the first template was read as blank by Python's strip, which
    takes U+001C, U+00A0 and U+3000 for blanks the grammar does not: the file compiled (exit 0)."""
    from support.fuzzing import compile_text

    code, stderr, _ = compile_text(junk + "\n" + TEMPLATE)
    assert code == 1 and f":1:1: error: unexpected character {junk!r}" in stderr, stderr
    assert_reported(junk + "\n" + TEMPLATE)


@pytest.mark.parametrize("count, refused", [(2**63 - 1, False), (2**63, True)])
def test_an_inventory_count_beyond_64_bits_is_refused_with_its_line_and_field(tmp_path, count, refused):
    """Found by the deep fuzz run: a Crafter inventory (an object kept as JSON by the fast reader) with a
    count of 2**63 passed the reader's checks and then failed building the inventory table."""
    import json

    import duckdb
    from support.strategies import seeded_episode, write_episodes

    from qtc.errors import UserError
    from qtc.runtime.trace.store import load_traces

    (path,) = write_episodes([seeded_episode("crafter", 1, 4)], tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    step = json.loads(lines[2])
    step["inventory"]["iron_sword"] = count
    lines[2] = json.dumps(step)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not refused:
        load_traces(duckdb.connect(), [path])
        return
    with pytest.raises(UserError) as error:
        load_traces(duckdb.connect(), [path])
    assert str(error.value) == f"{path}:3: field 'inventory.iron_sword': integer out of range (64 bits)"


@pytest.mark.parametrize("answer, question", [
    ("steps[$t]" + "[1]" * 1000 + ".action", "At {{ t }}?"),  # issue 32, item 11: a postfix chain in parse
    ("steps[$t].action", "At {{ t }}" + "{% if t %}" * 500 + "{% endif %}" * 500 + "?"),  # Jinja tags in check
], ids=["postfix-chain", "jinja-tags"])
def test_nesting_deeper_than_python_recurses_is_a_positioned_error(answer, question):
    from support.fuzzing import compile_text

    text = ("template crafter.t {\n  env crafter\n  category single_hop\n  answer_type action\n"
            f"  param t: steps.step\n  question \"{question}\"\n  answer {answer}\n  evidence $t\n}}\n")
    assert_reported(text)
    code, stderr, _ = compile_text(text)
    assert code == 1 and ": error: nested too deeply" in stderr


def test_rich_markup_in_an_episode_id_is_printed_as_text(tmp_path, crafter_trace_dir, capsys):
    """Issue 32, item 10: generate wrote the QA file, then crashed printing its summary (MarkupError)."""
    import json

    from support.paths import REPO

    from qtc.cli import main

    source = sorted(crafter_trace_dir.glob("*.jsonl"))[0]
    lines = source.read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    header["episode_id"] = "crafter[/]x[bold]"
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "x.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]), encoding="utf-8")
    assert main(["generate", "--traces", str(tmp_path / "traces"), "--out", str(tmp_path / "qa.jsonl"),
                 "--templates", str(REPO / "templates" / "crafter"), "--max-per-template", "2"]) == 0
    assert "crafter[/]x[bold]" in capsys.readouterr().out
