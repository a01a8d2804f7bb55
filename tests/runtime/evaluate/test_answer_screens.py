"""qtc answer showing a Crafter episode's screens (--context frames and mosaic, alone or after a step
selection) to a real HTTP server on 127.0.0.1 (tests/support/openai_stub_server.py), for an episode
recorded by `qtc play crafter --frames` and questions from `qtc generate` at two horizons.

What the server received is read back and checked against the stored frames: every image is a PNG, each
of its cells is, pixel for pixel, the labelled cell of one stored screen (runtime/evaluate/frames.py), the
cells come in step order, they are the screens of exactly the states the text log shows, and none is
after the question's horizon. The answers are then scored. One optional test sends the screens to a real
small vision model (QTC_REAL_MODEL=1 and a model named by QTC_VISION_MODEL)."""

from __future__ import annotations

import io
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from support.answer_files import read_qa
from support.answering import answer, asked_in, crafter_questions, policy_for, read_answers_file
from support.handmade_qa import question, write_jsonl
from support.paths import TEMPLATES
from support.openai_stub_server import ChatCompletionServer, message_images, message_text
from qtc.cli import main
from qtc.runtime.evaluate.frames import Mosaic, labelled_cell
from qtc.runtime.trace.frames import frames_path

STEPS = 40
HORIZONS = (20, 30)
# Questions on one step and on two (multi_hop, temporal): evidence contexts of one step and of several.
TEMPLATE_FILES = ("single_hop.qtpl", "multi_hop.qtpl", "temporal.qtpl")
EPISODE = "crafter-scripted-s0"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
UNREACHABLE = "http://127.0.0.1:9/v1"  # nothing listens there: a run that got so far as to send would fail


@dataclass(frozen=True)
class Recorded:
    traces: Path
    qa: Path
    records: list[dict]
    frames: np.ndarray  # as stored beside the trace

    def question(self, text: str) -> dict:
        return next(r for r in self.records if r["question"] == text)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Recorded:
    root = tmp_path_factory.mktemp("screens")
    traces = root / "traces"
    assert main(["play", "crafter", "--frames", "--max-steps", str(STEPS), "--out", str(traces), "--quiet"]) == 0
    generated = root / "generated.jsonl"
    assert main(["generate", "--traces", str(traces), "--horizon", ",".join(map(str, HORIZONS)),
                 "--templates", *(str(TEMPLATES / "crafter" / name) for name in TEMPLATE_FILES),
                 "--max-per-template", "1", "--out", str(generated), "--quiet"]) == 0
    # A false premise has no evidence: its evidence context shows no step, so no screen.
    false_premise = question("adv", "Which action did you take after you first mined diamond?", "not answerable",
                             "action", episode_id=EPISODE, env="crafter", game="crafter", horizon=HORIZONS[-1])
    # The horizon written into each question's text tells which questions, so which horizon, a request asks.
    records = [dict(r, question=f"(up to step {r['horizon']}) {r['question']}")
               for r in [*read_qa(generated), false_premise]]
    assert len({r["question"] for r in records}) == len(records)
    with np.load(frames_path(traces / f"{EPISODE}.jsonl")) as archive:
        frames = archive["frames"]
    return Recorded(traces, write_jsonl(root / "qa.jsonl", records), records, frames)


@dataclass(frozen=True)
class Sent:
    """What one request showed: each image's caption (the text part before it) and picture, in order,
    and its text (the introduction, the captions and the log)."""
    captions: list[str]
    pictures: list[np.ndarray]
    text: str


def sent(request: dict) -> Sent:
    message = request["messages"][-1]
    parts = message["content"] if isinstance(message["content"], list) else []
    pictures = []
    for png in message_images(message):
        assert png.startswith(PNG_SIGNATURE)
        with Image.open(io.BytesIO(png)) as image:
            assert image.format == "PNG" and image.mode == "RGB"
            pictures.append(np.asarray(image))
    captions = [parts[i - 1]["text"] for i, part in enumerate(parts) if part["type"] == "image_url"]
    return Sent(captions, pictures, message_text(message))


def log_states(text: str) -> list[int]:
    """The steps after which the text log shows the state: a step block's own, a state block's before."""
    after = {int(s) for s in re.findall(r"^Step (\d+)$", text, re.MULTILINE)}
    before = {int(s) - 1 for s in re.findall(r"^Before step (\d+)", text, re.MULTILINE)}
    return sorted(after | before)


def stored_cells(frames: np.ndarray, size: int) -> dict[bytes, int]:
    """Each stored screen's labelled cell (those after every horizon too), to its step, by its pixels."""
    return {labelled_cell(frame, step, size).tobytes(): step for step, frame in enumerate(frames)}


def cell_steps(picture: np.ndarray, size: int, cols: int, known: dict[bytes, int]) -> list[int]:
    """The steps of a picture's cells read left to right then top to bottom: every cell must be a stored
    screen's, but for the black gaps that end a mosaic's last row."""
    rows, width = picture.shape[0] // size, picture.shape[1] // size
    assert picture.shape == (rows * size, width * size, 3) and width <= cols
    steps, gaps = [], 0
    for row in range(rows):
        for col in range(width):
            cell = picture[row * size:(row + 1) * size, col * size:(col + 1) * size]
            if cell.tobytes() in known:
                assert not gaps, f"a screen after a gap, row {row} column {col}"
                steps.append(known[cell.tobytes()])
            else:
                assert not cell.any(), f"row {row} column {col} is no stored screen"
                gaps += 1
    assert gaps < width
    return steps


def shown_by_images(screens: Sent, images: str, layout: Mosaic, known: dict[bytes, int]) -> list[int]:
    """The steps of the screens a request showed, in the order sent, each checked against its caption."""
    shown = []
    for number, (caption, picture) in enumerate(zip(screens.captions, screens.pictures), start=1):
        steps = cell_steps(picture, layout.cell, layout.cols, known)
        if images == "frames":
            assert len(steps) == 1
            assert caption == ("Screen at the start:" if steps[0] == 0 else f"Screen after step {steps[0]}:")
        else:
            assert 0 < len(steps) <= layout.per_image
            assert caption == f"Mosaic {number} of {len(screens.pictures)}: steps {steps[0]} to {steps[-1]}"
        shown += steps
    assert len(screens.pictures) <= (layout.per_batch if images == "mosaic" else len(shown))
    return shown


def expected_states(context: str, horizon: int, questions: list[dict]) -> list[int]:
    """The states the context shows (docs/evaluation.md), worked out here from the questions."""
    selection = context.partition("+")[0] if "+" in context else "full"
    if selection == "full":
        return list(range(horizon + 1))
    if selection.startswith("last:"):
        return list(range(horizon - int(selection[5:]), horizon + 1))
    evidence = {step for q in questions for step in q["evidence"]}
    return sorted(evidence | {step - 1 for step in evidence if step >= 1})


@pytest.mark.parametrize("context", ["frames", "mosaic", "last:5+mosaic", "evidence+frames", "evidence+mosaic"])
def test_the_logged_states_screens_arrive_in_step_order_and_none_after_the_horizon(recorded, tmp_path, context):
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(recorded.records)) as server:
        assert answer(recorded.qa, [recorded.traces], server.url, out, "--context", context) == 0
    images = context.rpartition("+")[2]
    layout = Mosaic()  # EMemBench's protocol, the flags' defaults
    known = stored_cells(recorded.frames, layout.cell)
    horizons = set()
    for request in server.requests:
        screens = sent(request)
        questions = [recorded.question(text) for text in asked_in(request)]
        # Questions whose evidence is the same share its context, whatever their horizons.
        horizon = min(q["horizon"] for q in questions)
        assert context.startswith("evidence") or {q["horizon"] for q in questions} == {horizon}
        horizons.add(horizon)
        shown = shown_by_images(screens, images, layout, known)
        assert shown == log_states(screens.text) == expected_states(context, horizon, questions)
        if shown:
            assert max(shown) <= horizon
            introduced = re.search(r"^SCREENS: (\d+) ", screens.text, re.MULTILINE)
            assert int(introduced.group(1)) == (len(shown) if images == "frames" else len(screens.pictures))
        else:  # a false premise's evidence is empty: no screen, and the log says so
            assert "(no steps are shown)" in screens.text and not screens.pictures
    assert horizons == set(HORIZONS)
    answers = read_answers_file(out)
    assert sorted(a["id"] for a in answers) == sorted(r["id"] for r in recorded.records)
    assert {a["context"] for a in answers} == {context}
    report = tmp_path / "report.json"
    assert main(["score", "--qa", str(recorded.qa), "--answers", str(out), "--out", str(report),
                 "--bootstrap", "20"]) == 0
    assert json.loads(report.read_text())["overall"]["accuracy"] == 1.0


def test_more_screens_than_a_request_holds_are_thinned_evenly(recorded, tmp_path):
    layout = Mosaic(cols=4, cell=32, per_image=6, per_batch=2)
    flags = ["--mosaic-cols", "4", "--mosaic-cell", "32", "--mosaic-per-image", "6", "--mosaic-per-batch", "2"]
    with ChatCompletionServer(policy_for(recorded.records)) as server:
        assert answer(recorded.qa, [recorded.traces], server.url, tmp_path / "a.jsonl", "--context", "mosaic",
                      *flags) == 0
    known = stored_cells(recorded.frames, layout.cell)
    for request in server.requests:
        screens = sent(request)
        (horizon,) = {recorded.question(text)["horizon"] for text in asked_in(request)}
        assert [picture.shape for picture in screens.pictures] == [(64, 128, 3)] * 2  # 6 cells: 4, then 2 and 2 gaps
        shown = shown_by_images(screens, "mosaic", layout, known)
        assert len(shown) == 12 and shown[0] == 0 and shown[-1] == horizon
        assert set(shown) <= set(log_states(screens.text)) == set(range(horizon + 1))
        spacings = np.diff(shown)
        assert spacings.min() > 0 and spacings.max() - spacings.min() <= 1
        assert f"12 of the {horizon + 1} screens are shown, evenly spaced, the last included." in screens.text


def test_a_dry_run_describes_the_images_and_sends_nothing(recorded, tmp_path, capsys):
    with ChatCompletionServer(policy_for(recorded.records)) as server:
        assert answer(recorded.qa, [recorded.traces], server.url, tmp_path / "a.jsonl", "--context", "mosaic",
                      "--dry-run") == 0
    assert server.requests == [] and not (tmp_path / "a.jsonl").exists()
    out = capsys.readouterr().out
    # Mosaics of 21 and 31 cells, 10 a row of 160 pixels; OpenAI's rule: 85 + 170 per 512-pixel tile.
    tokens = {(1600, 480): 85 + 170 * 4 * 1, (1600, 640): 85 + 170 * 4 * 2}
    assert re.search(rf"screens: \d+ image\(s\) in all, [\d.]+ MB as sent; the most in one request: 1 image\(s\), "
                     rf"[\d.]+ MB as sent, about {tokens[1600, 640]} tokens", out)
    described = re.findall(r"^\[image: (\d+) x (\d+) PNG, \d+ KB as sent, about (\d+) tokens\]$", out, re.MULTILINE)
    assert len(described) == 1
    ((width, height, estimate),) = described
    assert tokens[int(width), int(height)] == int(estimate)
    assert re.search(r"^SCREENS: 1 mosaic image\(s\) .*\nMosaic 1 of 1: steps 0 to (20|30)\n\[image", out, re.MULTILINE)
    assert "nothing was sent" in out


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("argv, message", [
    (["--context", "mosaic+frames"], "--context 'mosaic+frames': expected one of frames, mosaic, alone or joined"),
    (["--context", "last:x+mosaic"], "--context 'last:x': expected full, evidence, none, last:N or budget:B"),
    (["--context", "mosaic", "--mosaic-cols", "0"], "--mosaic-cols must be positive, got 0"),
    (["--context", "frames", "--mosaic-cell", "-1"], "--mosaic-cell must be positive, got -1"),
])
def test_bad_screen_flags_are_one_line(recorded, tmp_path, capsys, argv, message):
    assert answer(recorded.qa, [recorded.traces], UNREACHABLE, tmp_path / "a.jsonl", *argv) == 2
    assert message in _one_line_error(capsys)


def test_an_episode_recorded_without_frames_has_no_screens(tmp_path, crafter_db, crafter_trace_dir, capsys):
    qa = write_jsonl(tmp_path / "qa.jsonl", crafter_questions(crafter_db, 2))
    assert answer(qa, [crafter_trace_dir], UNREACHABLE, tmp_path / "a.jsonl", "--context", "last:3+frames") == 2
    assert (f"episode '{EPISODE}' has no frames: record it with `qtc play crafter --frames`"
            in _one_line_error(capsys))


def test_a_jericho_episode_has_no_screens(tmp_path, trace_db, jericho_trace_dir, capsys):
    (episode,) = trace_db.execute("SELECT episode_id FROM episodes WHERE env = 'jericho'").fetchone()
    qa = write_jsonl(tmp_path / "qa.jsonl", [question("j1", "Where were you at step 2?", episode_id=episode)])
    assert answer(qa, [jericho_trace_dir], UNREACHABLE, tmp_path / "a.jsonl", "--context", "mosaic") == 2
    assert (f"--context mosaic: episode '{episode}' is a jericho episode; only Crafter episodes have screens"
            in _one_line_error(capsys))


@pytest.mark.skipif(os.environ.get("QTC_REAL_MODEL") != "1",
                    reason="a real vision model: set QTC_REAL_MODEL=1 (docs/evaluation.md says what to install)")
def test_a_real_small_vision_model_reads_the_mosaics(recorded, tmp_path):
    """A vision model served by llama-cpp-python's server on 127.0.0.1 answers from a mosaic and the log.
    No PyPI package ships a vision model's weights, so the model is a local GGUF file and its image
    projector, named by QTC_VISION_MODEL and QTC_VISION_MMPROJ (QTC_VISION_CHAT_FORMAT: the server's chat
    format for it, moondream2 by default). Its answers may be poor; the point is real image parts read by a
    real model, end to end."""
    llama_server = pytest.importorskip("llama_cpp.server", reason="pip install 'llama-cpp-python[server]'")
    model, projector = os.environ.get("QTC_VISION_MODEL"), os.environ.get("QTC_VISION_MMPROJ")
    if not (model and projector and Path(model).is_file() and Path(projector).is_file()):
        pytest.skip("no small vision model is installable from PyPI here: set QTC_VISION_MODEL and "
                    "QTC_VISION_MMPROJ to a GGUF vision model and its projector file")
    chat_format = os.environ.get("QTC_VISION_CHAT_FORMAT", "moondream2")
    with llama_cpp_server(llama_server.__name__, tmp_path / "llama-server.log", "--model", model,
                          "--clip_model_path", projector, "--chat_format", chat_format, "--n_ctx", "8192") as url:
        records = [r for r in recorded.records if r["horizon"] == HORIZONS[0] and not r["adversarial"]][:3]
        qa = write_jsonl(tmp_path / "qa.jsonl", records)
        out = tmp_path / "answers.jsonl"
        assert main(["answer", "--qa", str(qa), "--traces", str(recorded.traces), "--model", "vision",
                     "--base-url", url, "--context", "last:5+mosaic", "--out", str(out), "--quiet"]) == 0
        answers = read_answers_file(out)
        assert sorted(a["id"] for a in answers) == sorted(r["id"] for r in records)
        assert all(a["usage"]["prompt_tokens"] > 0 for a in answers)
        assert main(["score", "--qa", str(qa), "--answers", str(out), "--bootstrap", "20"]) == 0
