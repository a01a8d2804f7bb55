"""A small QA set of the fixture episodes (spatial and single-hop questions, real answers), two models'
answers to it, and the report page of both, written once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.answer_files import read_qa, write_answers
from support.paths import TEMPLATES
from qtc.cli import main

TEMPLATE_FILES = ("crafter/spatial.qtpl", "crafter/single_hop.qtpl", "jericho/spatial.qtpl")


@pytest.fixture(scope="module")
def traces(crafter_trace_dir, request) -> list[Path]:
    """The Crafter fixture, and the Jericho one where the story file is there."""
    from support.paths import ROMS

    found = [crafter_trace_dir]
    if (ROMS / "zork1.z5").is_file():
        found.append(request.getfixturevalue("jericho_trace_dir"))
    return found


@pytest.fixture(scope="module")
def qa(tmp_path_factory, traces) -> Path:
    out = tmp_path_factory.mktemp("view") / "qa.jsonl"
    assert main(["generate", "--traces", *map(str, traces), "--templates",
                 *(str(TEMPLATES / name) for name in TEMPLATE_FILES),
                 "--max-per-template", "3", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def answer_files(qa) -> list[Path]:
    questions = read_qa(qa)
    return [write_answers(qa.parent / "a.jsonl", questions, "model-a", lambda n, q: n % 3 != 0),
            write_answers(qa.parent / "b.jsonl", questions, "model-b", lambda n, q: n % 2 == 0,
                          skip=lambda n, q: n % 5 == 4)]


@pytest.fixture(scope="module")
def page(qa, answer_files, traces) -> Path:
    html = qa.parent / "report.html"
    assert main(["report", str(qa), *map(str, answer_files), "--traces", *map(str, traces),
                 "--html", str(html), "--bootstrap", "200"]) == 0
    return html
