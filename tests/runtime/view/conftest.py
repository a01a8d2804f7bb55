"""A small QA set of the fixture episodes (spatial and single-hop questions, real answers), two models'
answers to it, and the report page of both, written once per module; and the page of a short Crafter
episode recorded with frames, whose questions show screens."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from support.answer_files import read_qa, write_answers
from support.answering import CRAFTER
from support.handmade_qa import question, write_jsonl
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


@dataclass(frozen=True)
class ScreensPage:
    """The page of questions on a short Crafter episode recorded with frames."""
    html: Path
    qa: Path
    trace: Path


# A hand-written question resting on more steps than the page shows screens of (runtime/view/page.py's cap).
MANY_STEPS = question("many-steps", "On which steps did you move left?", "1, 2", "steps", episode_id=CRAFTER,
                      env="crafter", game="crafter", template_id="crafter.handmade", evidence=list(range(1, 21)))


@pytest.fixture(scope="module")
def screens_page(tmp_path_factory) -> ScreensPage:
    root = tmp_path_factory.mktemp("screens")
    traces = root / "traces"
    assert main(["play", "crafter", "--frames", "--max-steps", "30", "--out", str(traces), "--quiet"]) == 0
    generated = root / "generated.jsonl"
    assert main(["generate", "--traces", str(traces), "--templates", str(TEMPLATES / "crafter/single_hop.qtpl"),
                 str(TEMPLATES / "crafter/temporal.qtpl"), "--max-per-template", "2", "--out", str(generated),
                 "--quiet"]) == 0
    qa = write_jsonl(root / "qa.jsonl", [*read_qa(generated), MANY_STEPS])
    answers = write_answers(root / "a.jsonl", read_qa(qa), "model-a", lambda n, q: n % 2 == 0)
    html = root / "report.html"
    assert main(["report", str(qa), str(answers), "--traces", str(traces), "--html", str(html),
                 "--bootstrap", "50"]) == 0
    return ScreensPage(html, qa, traces / f"{CRAFTER}.jsonl")
