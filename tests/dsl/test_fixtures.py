"""Every template of tests/dsl/fixtures/ against the expected output written beside it.

- `diagnostics/<case>.qtpl` -> `<case>.diagnostics`: exactly what `qtc compile <case>.qtpl`, run from the
  repository root, prints on stderr (file:line:column, the line, the carets, the hint); it exits 1 if
  it prints anything, 0 if the expected file is empty.
- `candidates/<case>.qtpl` -> `<case>.json`: the candidate rows of each template of the file on the
  hand-made traces (tests/support/handmade.py), keyed by template id, one row a line. A line
  `# horizon: N` in the template file runs them seeing steps up to N only.

`QTC_UPDATE_FIXTURES=1 python -m pytest tests/dsl/test_fixtures.py` writes the outputs as they are
instead of comparing them (and creates missing expected files); review the diff before committing it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from support.handmade import candidates, compile_source, make_db
from support.paths import REPO
from qtc.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED_SUFFIX = {"diagnostics": ".diagnostics", "candidates": ".json"}  # by the folder under fixtures/
UPDATE = os.environ.get("QTC_UPDATE_FIXTURES") == "1"
HORIZON = re.compile(r"^# horizon: (\d+)$", re.MULTILINE)


def cases(kind: str) -> list:
    return [pytest.param(path, id=path.relative_to(FIXTURES / kind).with_suffix("").as_posix())
            for path in sorted((FIXTURES / kind).rglob("*.qtpl"))]


def check(expected_file: Path, actual: str, read=lambda text: text) -> None:
    """`actual` equals the expected file as `read` reads both; with QTC_UPDATE_FIXTURES=1, it becomes the file."""
    if UPDATE:
        if not expected_file.exists() or read(expected_file.read_text(encoding="utf-8")) != read(actual):
            expected_file.write_text(actual, encoding="utf-8")
        return
    assert expected_file.exists(), (f"{expected_file.relative_to(REPO)} is missing: write it, or run "
                                    "QTC_UPDATE_FIXTURES=1 python -m pytest tests/dsl/test_fixtures.py")
    assert read(actual) == read(expected_file.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", cases("diagnostics"))
def test_diagnostics(path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    exit_code = main(["compile", path.relative_to(REPO).as_posix()])
    printed = capsys.readouterr().err
    check(path.with_suffix(EXPECTED_SUFFIX["diagnostics"]), printed)
    assert exit_code == (1 if printed else 0)


@pytest.fixture(scope="module")
def con():
    return make_db()


def rows_as_json(rows_by_id: dict[str, list[dict]]) -> str:
    """JSON with one row a line, so that a diff shows which rows changed."""
    def block(rows):
        return "[\n" + ",\n".join(f"    {json.dumps(row)}" for row in rows) + "\n  ]" if rows else "[]"
    return "{\n" + ",\n".join(f"  {json.dumps(template_id)}: {block(rows)}"
                                for template_id, rows in rows_by_id.items()) + "\n}\n"


@pytest.mark.parametrize("path", cases("candidates"))
def test_candidates(path, con):
    source = path.read_text(encoding="utf-8")
    horizon = HORIZON.search(source)
    rows = {compiled.id: candidates(con, compiled, int(horizon.group(1)) if horizon else None)
            for compiled in compile_source(source, str(path.relative_to(REPO)))}
    check(path.with_suffix(EXPECTED_SUFFIX["candidates"]), rows_as_json(rows), read=json.loads)


def test_every_file_is_a_case_or_its_expected_output():
    strays = []
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        kind = path.relative_to(FIXTURES).parts[0]
        if kind not in EXPECTED_SUFFIX or path.suffix not in (".qtpl", EXPECTED_SUFFIX[kind]) \
                or not path.with_suffix(".qtpl").exists():
            strays.append(str(path.relative_to(FIXTURES)))
    assert strays == [], f"neither a case in {' or '.join(k + '/' for k in EXPECTED_SUFFIX)} nor the output beside one"
