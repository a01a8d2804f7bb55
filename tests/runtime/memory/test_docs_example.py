"""The providers of docs/memory.md, as written there, run through qtc answer from the working directory."""

from __future__ import annotations

import re

from support.answering import answer, crafter_questions, policy_for, read_answers_file
from support.handmade_qa import write_jsonl
from support.openai_stub_server import ChatCompletionServer
from support.paths import REPO

from qtc.cli import main

HORIZON = 8


def example_files() -> dict[str, str]:
    """Each Python block of docs/memory.md that starts `# NAME.py:`, by file name."""
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "memory.md").read_text(), re.DOTALL)
    return {block.split(":", 1)[0].removeprefix("# "): block for block in blocks if block.startswith("# ")}


def test_the_readme_shows_the_documented_retrieval_provider():
    """README's provider is docs/memory.md's, as tested here: the two copies never drift apart."""
    assert f"```python\n{example_files()['recent_words.py']}```" in (REPO / "README.md").read_text()


def test_the_documented_providers_run(tmp_path, monkeypatch, trace_db, crafter_trace_dir):
    files = example_files()
    assert set(files) == {"notes.py", "recent_words.py"}
    assert all(len(code.strip().splitlines()) < 40 for code in files.values())
    for name, code in files.items():
        (tmp_path / name).write_text(code)
    records = crafter_questions(trace_db, 3, horizon=HORIZON)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    monkeypatch.chdir(tmp_path)  # the providers are imported from the working directory
    assert main(["answer", "--qa", str(qa), "--traces", str(crafter_trace_dir), "--memory", "notes:Notes",
                 "--out", "notes.jsonl", "--quiet"]) == 0
    notes = read_answers_file(tmp_path / "notes.jsonl")
    assert [a["prediction"] for a in notes] == [r["answer"] for r in records]  # the action at step t
    assert [a["retrieved_steps"] for a in notes] == [r["evidence"] for r in records]
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, tmp_path / "recent.jsonl",
                      "--memory", "recent_words:RecentWords") == 0
    recent = read_answers_file(tmp_path / "recent.jsonl")
    assert [a["prediction"] for a in recent] == [r["answer"] for r in records]
    assert all(a["context"] == "memory:recent_words:RecentWords" and 0 < len(a["retrieved_steps"]) <= 10
               and max(a["retrieved_steps"]) <= HORIZON for a in recent)
