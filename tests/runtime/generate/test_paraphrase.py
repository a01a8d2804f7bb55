"""qtc paraphrase: every rejection rule by hand, the seeded choice, and the command end to end against a real
HTTP server on 127.0.0.1 speaking the chat-completions protocol (cache, resume, Parquet, bad input)."""

from __future__ import annotations

import json

import pytest

from support.handmade_qa import as_question, question, write_jsonl
from support.openai_stub_server import ChatCompletionServer, ParaphrasePolicy
from qtc.cli import main
from qtc.runtime.generate.paraphrase import read_reply, rejection, selected
from qtc.runtime.qa.questions import read_questions

NTH = question("nth", "At which step did you take the action 'move_left' for the second time?", "12", "step",
               bindings={"action": "move_left", "k": "2"})
ORDER = question("order", "Had you been in West of House before you first entered Forest (2)?", "yes",
                 bindings={"a": "75", "b": "180"})
ITEM = question("item", "After step 7, were you carrying the brass lantern?", "no", bindings={"t": "7", "item": "brass lantern"})
TIE = question("tie", "Which movement action did you choose most often between steps 3 and 9? (If several tie, answer "
                      "none.)", "move_up", "action", bindings={"L": "3", "R": "9"})


@pytest.mark.parametrize("record, paraphrase, reason", [
    (NTH, "When did you take the action 'move_left' for the second time?", None),
    (NTH, "For the second time, at what step did you choose 'move_left'?", None),
    (NTH, "When did you take the action move_left for the second time?", None),  # the value is kept
    (NTH, "", "empty"),
    (NTH, "Step 12.", "not a question"),  # answered instead of rewritten
    (NTH, "When did you take the action 'move_left' for the second time? " * 4, "too long"),
    (NTH, "When did you take the action 'move_left' for the 2nd time?", "changes a number"),
    (NTH, "When did you move left for the second time?", "drops a quoted value: 'move_left'"),
    (NTH, "When did you take the action 'move_left' for the third time?", "changes a word of meaning: 'second'"),
    (NTH, "When didn't you take the action 'move_left' a second time?", "changes a word of meaning: 'never|not'"),
    (ORDER, "Before first entering Forest (2), had you visited West of House?", None),
    (ORDER, "Prior to your first visit to Forest (2), were you ever in West of House?", None),  # a synonym
    (ORDER, "Before first entering Forest (2), had you visited the house?", "drops a name: 'West'"),
    (ORDER, "Before first entering Forest (1), had you visited West of House?", "changes a number"),
    (ORDER, "After first entering Forest (2), had you visited West of House?",
     "changes a word of meaning: 'after'"),
    (ITEM, "Were you holding the brass lantern after step 7?", None),
    (ITEM, "Were you holding the lantern after step 7?", "drops a name: 'brass lantern'"),
    (ITEM, "Were you holding the brass lantern after step 17?", "changes a number"),
    (ITEM, "Were you holding the brass lantern before step 7?", "changes a word of meaning: 'after'"),
    (TIE, "Between steps 3 and 9, which movement action did you pick the most? (If several tie, answer none.)", None),
    (TIE, "Between steps 3 and 9, which movement action did you pick the most?",
     "changes a word of meaning: 'tie|tied|ties'"),  # the tie rule dropped
    (TIE, "Between steps 3 and 9, which movement action did you pick the least? (If several tie, answer none.)",
     "changes a word of meaning: 'fewest|least|lowest|minimum|smallest'"),
])
def test_rejection_rules(record, paraphrase, reason):
    assert rejection(as_question(record), paraphrase) == reason


@pytest.mark.parametrize("reply, rewrite", [
    ('{"paraphrase": "When?"}', "When?"),
    ('```json\n{"paraphrase": "When?"}\n```', "When?"),
    ('Here it is: {"question": "When?"}', "When?"),
    ('"When?"', "When?"),
    ("When?", "When?"),
])
def test_replies_are_read_robustly(reply, rewrite):
    assert read_reply(reply) == rewrite


def test_the_choice_is_seeded_and_proportional():
    questions = [as_question(question(str(i))) for i in range(40)]
    chosen = selected(questions, 0.25, seed=3)
    assert len(chosen) == 10 and chosen == selected(list(reversed(questions)), 0.25, seed=3)
    assert chosen != selected(questions, 0.25, seed=4)
    assert selected(questions, 0.5, seed=3) >= chosen or len(selected(questions, 0.5, seed=3)) == 20
    assert len(selected(questions, 1, seed=0)) == 40


def paraphrase(qa, url, *extra) -> int:
    return main(["paraphrase", "--qa", str(qa), "--model", "stub", "--base-url", url, "--quiet", *extra])


REWRITES = {
    NTH["question"]: "When did you take the action 'move_left' for the second time?",  # accepted
    ORDER["question"]: "After first entering Forest (2), had you visited West of House?",  # rejected: after
    ITEM["question"]: "Were you holding the brass lantern after step 17?",  # rejected: number
    TIE["question"]: "Between steps 3 and 9, which movement action did you pick the most? (If several tie, answer "
                     "none.)",  # accepted
}


def test_qtc_paraphrase_end_to_end(tmp_path, capsys):
    records = [NTH, ORDER, ITEM, TIE, dict(NTH, id="nth-again", episode_id="e2")]
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    with ChatCompletionServer(ParaphrasePolicy(REWRITES)) as server:
        assert paraphrase(qa, server.url, "--ratio", "1") == 0
    assert len(server.requests) == 4  # one request per distinct text
    assert all(r["messages"][-1]["content"].startswith("Question: ") for r in server.requests)
    printed = capsys.readouterr().out
    assert "paraphrased 3 of 5 chosen question(s) (4 text(s) asked" in printed
    assert "1 changes a number" in printed and "1 changes a word of meaning" in printed
    result = read_questions(tmp_path / "qa.paraphrased.jsonl")
    assert [q.id for q in result] == [r["id"] for r in records]
    assert [q.question for q in result] == [REWRITES[NTH["question"]], ORDER["question"], ITEM["question"],
                                            REWRITES[TIE["question"]], REWRITES[NTH["question"]]]
    for before, after in zip(records, result):  # only the wording changes
        assert {k: v for k, v in after.record().items() if k != "question"} == \
            {k: v for k, v in before.items() if k != "question"}
    cache = [json.loads(line) for line in (tmp_path / "qa.paraphrase-cache.jsonl").read_text().splitlines()]
    assert sorted(c["question"] for c in cache) == sorted(REWRITES) and {c["model"] for c in cache} == {"stub"}
    # Cached: the rerun asks nothing and writes the same file; another model is asked anew.
    first = (tmp_path / "qa.paraphrased.jsonl").read_text()
    with ChatCompletionServer(ParaphrasePolicy(REWRITES)) as server:
        assert paraphrase(qa, server.url, "--ratio", "1") == 0
        assert server.requests == []
        assert main(["paraphrase", "--qa", str(qa), "--model", "other", "--base-url", server.url, "--quiet",
                     "--ratio", "0.4", "--out", str(tmp_path / "other.parquet")]) == 0
        assert len(server.requests) <= 2
    assert (tmp_path / "qa.paraphrased.jsonl").read_text() == first
    assert [q.id for q in read_questions(tmp_path / "other.parquet")] == [r["id"] for r in records]


def test_an_interrupted_cache_is_mended(tmp_path):
    qa = write_jsonl(tmp_path / "qa.jsonl", [NTH, ITEM])
    cache = tmp_path / "cache.jsonl"
    cache.write_text(json.dumps({"model": "stub", "question": NTH["question"], "paraphrase": "When, for the "
                                 "second time, did you take the action 'move_left'?"}) + "\n" + '{"model": "st')
    with ChatCompletionServer(ParaphrasePolicy(REWRITES)) as server:
        assert paraphrase(qa, server.url, "--ratio", "1", "--cache", str(cache)) == 0
    assert [r["messages"][-1]["content"] for r in server.requests] == [f"Question: {ITEM['question']}"]
    assert len(cache.read_text().splitlines()) == 2


@pytest.mark.parametrize("argv, message", [
    (["--ratio", "0"], "--ratio must be in (0, 1], got 0.0"),
    (["--ratio", "1.5"], "--ratio must be in (0, 1], got 1.5"),
    (["--out", "QA"], "is the QA set itself"),
    (["--out", "qa.csv"], "qa.csv: the output must end in .jsonl or .parquet"),
    (["--timeout", "0"], "--timeout must be positive"),
])
def test_bad_flags_are_one_line(tmp_path, capsys, argv, message):
    qa = write_jsonl(tmp_path / "qa.jsonl", [NTH])
    argv = [str(qa) if a == "QA" else str(tmp_path / a) if a.endswith(".csv") else a for a in argv]
    assert paraphrase(qa, "http://127.0.0.1:9/v1", *argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_malformed_cache_line_is_named(tmp_path, capsys):
    qa = write_jsonl(tmp_path / "qa.jsonl", [NTH])
    cache = tmp_path / "cache.jsonl"
    cache.write_text('{"model": "stub", "question": 3, "paraphrase": "x"}\n')
    assert paraphrase(qa, "http://127.0.0.1:9/v1", "--cache", str(cache)) == 2
    assert "cache.jsonl:1: field 'question': expected string, got integer" in capsys.readouterr().err
