"""The command line: the commands listed in workflow order, help that loads none of the heavy libraries,
and the library's option errors shown with the flags the user typed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from qtc.cli import main
from qtc.errors import InvalidOption

WORKFLOW = ("play", "import", "load", "compile", "generate", "paraphrase", "answer", "score", "compare", "report",
            "show", "export", "run", "sql", "demo")
HEAVY = ("duckdb", "pyarrow", "jinja2", "lark", "numpy", "crafter", "jericho")

# Run in a fresh interpreter: `qtc --help`, then `qtc CMD --help` for each command named in argv; print the
# help texts and the top-level modules loaded by then.
HELP_PROBE = """
import contextlib, io, json, sys
from qtc.cli import main
helps = {}
for argv in [["--help"]] + [[command, "--help"] for command in sys.argv[1:]]:
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        try:
            main(argv)
        except SystemExit:
            pass
    helps[" ".join(argv)] = text.getvalue()
print(json.dumps({"helps": helps, "modules": sorted({name.partition(".")[0] for name in sys.modules})}))
"""


def test_help_lists_the_workflow_and_loads_nothing_heavy():
    result = subprocess.run([sys.executable, "-c", HELP_PROBE, *WORKFLOW], capture_output=True, text=True,
                            check=True, env={**os.environ, "COLUMNS": "100"})
    probe = json.loads(result.stdout)
    assert sorted(set(HEAVY) & set(probe["modules"])) == []
    assert re.findall(r"^    (\w+)", probe["helps"]["--help"], re.MULTILINE) == list(WORKFLOW)
    for command in WORKFLOW:
        assert probe["helps"][f"{command} --help"].startswith(f"usage: qtc {command} ")


# Ctrl-C (a real SIGINT, Python's own handler in place, as in a terminal) while `module` is being imported.
CTRL_C_WHILE_IMPORTING = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == sys.argv[1]:
            os.kill(os.getpid(), signal.SIGINT)
sys.meta_path.insert(0, CtrlC())
from qtc.cli import main
sys.exit(main(["sql", "SELECT 1"]))
"""


@pytest.mark.parametrize("module", ["qtc.processes", "qtc.commands", "qtc.commands.sql"])
def test_ctrl_c_while_qtc_loads_its_modules_is_an_interruption_not_a_traceback(module):
    """The kills of the deep run (seed 20261215): Ctrl-C as `qtc load` imported its commands gave a
    KeyboardInterrupt traceback. (`qtc sql` imports only its own command module.)"""
    result = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_IMPORTING, module], capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (130, "qtc: interrupted\n")


def test_a_bad_option_names_its_field_in_the_library_and_its_flag_on_the_command_line(tmp_path, capsys):
    from qtc.runtime.generate.run import Options

    with pytest.raises(InvalidOption, match=r"^max_per_template must be at least 1, got 0$") as refused:
        Options((tmp_path,), max_per_template=0).check()
    assert refused.value.field == "max_per_template"
    assert main(["generate", "--traces", str(tmp_path), "--max-per-template", "0",
                 "--out", str(tmp_path / "qa.jsonl")]) == 2
    assert capsys.readouterr().err == "qtc generate: error: --max-per-template must be at least 1, got 0\n"


def test_a_command_imports_only_its_own_command_module_and_help_lists_every_command():
    """Parsing `qtc sql ...` builds the sql command's parser alone (the other 14 modules and subparsers cost
    ~15 ms of every run); `qtc --help` still lists them all, before a command's name too."""
    from qtc.cli import COMMAND_MODULES

    script = "import sys; from qtc.cli import build_parser; build_parser(sys.argv[1:]); print(*sys.modules)"
    alone = subprocess.run([sys.executable, "-c", script, "sql", "SELECT 1"], capture_output=True, text=True,
                           check=True)
    assert [name for name in COMMAND_MODULES if f"qtc.commands.{name}" in alone.stdout.split()] == ["sql"]
    listed = subprocess.run([sys.executable, "-m", "qtc.cli", "--help", "sql"], capture_output=True, text=True,
                            check=True)
    listed_first_words = {line.split()[0] for line in listed.stdout.splitlines() if line.startswith("    ")}
    assert {name.rstrip("_") for name in COMMAND_MODULES} <= listed_first_words
