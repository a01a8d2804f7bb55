"""Scoring: every rule and edge case with a hand-computed score, a report with hand-checked Acc and F1,
and `qtc score` end to end (table, JSON on disk, bad input)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from support.handmade_qa import as_question, question, write_jsonl
from qtc.cli import main
from qtc.runtime.qa.answers import AnswerSet
from qtc.runtime.trace.format import read_header
from qtc.runtime.evaluate.report import LENGTH_EDGES, Scored, bucket, build_report, score_run
from qtc.runtime.evaluate.scoring import NOT_ANSWERABLE_FORMS, anls, normalize, says_not_answerable, score_answer


def score(answer: str, prediction: str, answer_type: str = "string", env: str = "jericho",
          accepted: list[str] | None = None) -> float:
    return score_answer(as_question(question("q", answer=answer, answer_type=answer_type, env=env,
                                             accepted=accepted)), prediction)


# --- normalization and not answerable -------------------------------------------------------------------

@pytest.mark.parametrize("text, normalized", [
    ('  "The Kitchen"  ', "the kitchen"),
    ("Forest (2)", "forest"),
    ("'wood'", "wood"),
    ("\u201cWest  of\nHouse\u201d", "west of house"),
    ("a (b (c)) d", "a d"),
])
def test_normalize(text, normalized):
    assert normalize(text) == normalized


@pytest.mark.parametrize("prediction", [
    "not answerable", "Not answerable.", "UNANSWERABLE", "cannot be answered", "Can not be answered.",
    "can't be answered", "can\u2019t be answered", "cannot answer", "'not answerable'", "Not possible to answer!",
    "impossible to answer", "not answerable (the item was never seen)"])
def test_not_answerable_variants_match_the_label(prediction):
    assert says_not_answerable(prediction)
    assert score("not answerable", prediction, "yesno") == 1.0


@pytest.mark.parametrize("prediction", ["no", "unknown", "I don't know", "none", "", "answerable", "not sure"])
def test_other_texts_do_not_say_not_answerable(prediction):
    assert not says_not_answerable(prediction)
    assert score("not answerable", prediction, "string") == 0.0


def test_the_variant_list_is_the_documented_one():
    assert NOT_ANSWERABLE_FORMS == {"not answerable", "unanswerable", "cannot be answered", "can not be answered",
                                    "can't be answered", "cannot answer", "can't answer", "not possible to answer",
                                    "impossible to answer"}


def test_saying_not_answerable_never_scores_on_an_answerable_question():
    # ANLS alone would give 1 - 4/12 = 0.667 for these two strings.
    assert anls("unanswered", "unanswerable") == pytest.approx(2 / 3)
    assert score("unanswered", "unanswerable") == 0.0


# --- strings --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer, prediction, expected", [
    ("abcd", "abcd", 1.0),
    ("abcd", "abcx", 0.75),  # 1 - 1/4
    ("abcd", "abxy", 0.0),  # exactly 0.5: not above the threshold
    ("abcdef", "abcxyz", 0.0),  # 0.5 again
    ("abcde", "abcxy", 0.6),  # 1 - 2/5
    ("abcd", "abcdxy", 2 / 3),  # 1 - 2/6: the longer side divides
    ("The Kitchen", "  the kitchen (dark) ", 1.0),  # normalized on both sides
    ("You are in a kitchen.", "you are in a kitchen", 1 - 1 / 21),
    ("", "", 1.0),
])
def test_string_answers_score_anls_with_threshold(answer, prediction, expected):
    assert score(answer, prediction) == pytest.approx(expected)


def _levenshtein(a: str, b: str) -> int:
    """The textbook dynamic programme (the pure-Python scorer qtc used before rapidfuzz), as the oracle."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcde \u00e9\u4e2d", max_size=40), st.text(alphabet="abcde \u00e9\u4e2d", max_size=40))
def test_anls_equals_the_textbook_edit_distance(reference, prediction):
    longest = max(len(reference), len(prediction))
    similarity = 1 - _levenshtein(reference, prediction) / longest if longest else 1.0
    assert anls(reference, prediction) == (similarity if similarity > 0.5 else 0.0)


@pytest.mark.parametrize("answer, near_miss", [
    ("2024-05-01", "2024-05-02"),  # date
    ("2024-05", "2024-06"),
    ("https://example.org/a", "https://example.org/b"),  # URL
    ("zork1.z5", "zork1.z3"),  # file name
    ("player@example.org", "player@example.com"),  # e-mail
    ("10:30 a.m.", "10:30 p.m."),  # time with a.m./p.m.
    ("+1 555 123 4567", "+1 555 123 4568"),  # phone number
    ("ab-1234", "ab-1235"),  # page-like id
    ("p. 12", "p. 13"),
])
def test_identifier_like_answers_need_an_exact_match(answer, near_miss):
    assert score(answer, near_miss) == 0.0  # ANLS would give 0.8 or more
    assert score(answer, answer.upper()) == 1.0


# --- numbers --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer, prediction, expected", [
    ("1", "1", 1.0), ("1", "1.0", 1.0), ("1", " 1 ", 1.0), ("1.0", "1", 1.0), ("50", "50%", 1.0),
    ("50%", "50", 1.0), ("1000", "1,000", 1.0), ("3", "three", 1.0), ("3", "Three.", 1.0),
    ("1", "1.5", 0.0), ("2", "3", 0.0), ("12", "12 steps", 0.0), ("0", "zero", 1.0), ("-2", "-2", 1.0),
])
def test_integer_answers(answer, prediction, expected):
    assert score(answer, prediction, "integer") == expected


@pytest.mark.parametrize("prediction, expected", [
    ("12", 1.0), ("step 12", 1.0), ("Step #12", 1.0), ("at step 12", 1.0), ("after step 12", 1.0),
    ("12.0", 1.0), ("13", 0.0), ("step 13", 0.0), ("12th", 0.0),
])
def test_step_answers(prediction, expected):
    assert score("12", prediction, "step") == expected


@pytest.mark.parametrize("answer, prediction, expected", [
    ("0.5", "0.5", 1.0), ("0.5", "0.50", 1.0), ("0.5", "50%", 1.0),  # the reference times 100
    ("12.5", "0.125", 1.0),  # the reference divided by 100
    ("0.5", "0.504", 1.0),  # within 1%
    ("0.5", "0.51", 0.0),  # 2% off, and 0.51 != 0.50 at two decimals
    ("0.333", "0.3333", 1.0),  # equal at the reference's three decimals
    ("0.333", "0.33", 1.0),  # 0.9% off
    ("0.333", "0.32", 0.0),
    ("2", "2.004", 1.0),  # rounds to 2.00 at two decimals at least
    ("100", "101", 1.0), ("100", "102", 0.0),
    ("0.5", "half", 0.0),
])
def test_float_answers(answer, prediction, expected):
    assert score(answer, prediction, "float") == expected


# --- typed names ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer, prediction, expected", [
    ("yes", "yes", 1.0), ("yes", "Yes.", 1.0), ("yes", "yes, you were", 1.0), ("yes", "Y", 1.0),
    ("yes", "true", 1.0), ("no", "No!", 1.0), ("no", "false", 1.0),
    ("yes", "no", 0.0), ("no", "nope", 0.0), ("yes", "maybe", 0.0), ("yes", "yess", 0.0),  # no partial credit
])
def test_yes_no_answers(answer, prediction, expected):
    assert score(answer, prediction, "yesno") == expected


@pytest.mark.parametrize("env, answer, prediction, expected", [
    ("jericho", "N", "north", 1.0), ("jericho", "north", "n", 1.0), ("jericho", "N", "go north", 1.0),
    ("jericho", "x mailbox", "examine mailbox", 1.0), ("jericho", "open window", "Open the window.", 1.0),
    ("jericho", "take lamp", "take the lamp", 1.0),
    ("jericho", "open window", "open door", 0.0),  # ANLS would give 0.64
    ("jericho", "N", "south", 0.0), ("jericho", "north", "up", 0.0),
    ("crafter", "move_left", "move left", 1.0), ("crafter", "move_left", "Move_Left.", 1.0),
    ("crafter", "move_left", "move_right", 0.0),  # ANLS would give 0.67
    ("crafter", "do", "noop", 0.0),
])
def test_action_answers(env, answer, prediction, expected):
    assert score(answer, prediction, "action", env) == expected


@pytest.mark.parametrize("answer, prediction, expected", [
    ("Forest (2)", "Forest (2)", 1.0), ("Forest (2)", "forest (2).", 1.0), ("Forest (2)", "'Forest (2)'", 1.0),
    ("Forest (2)", "Forest", 0.0),  # the number tells the two forests apart
    ("Forest (2)", "Forest (1)", 0.0),
    ("Kitchen", "Kitchen (1)", 1.0),  # a room without a number has no namesake to confuse
    ("West of House", "west of house.", 1.0), ("The Troll Room", "Troll Room", 1.0),
    ("Kitchen", "Living Room", 0.0), ("Kitchen", "kitchens", 0.0),
])
def test_location_answers(answer, prediction, expected):
    assert score(answer, prediction, "location") == expected


@pytest.mark.parametrize("answer_type, answer, prediction, expected", [
    ("terrain", "grass", "Grass.", 1.0), ("terrain", "grass", "the grass", 1.0), ("terrain", "sand", "grass", 0.0),
    ("terrain", "tree", "trees", 0.0),
    ("item", "wood_pickaxe", "wood pickaxe", 1.0), ("item", "wood_pickaxe", "stone_pickaxe", 0.0),
    ("item", "brass lantern", "a brass lantern", 1.0),
    ("achievement", "place_table", "place table", 1.0), ("achievement", "collect_wood", "Collect-Wood", 1.0),
    ("achievement", "collect_wood", "collect_stone", 0.0),
])
def test_term_answers(answer_type, answer, prediction, expected):
    assert score(answer, prediction, answer_type, "crafter") == expected


@pytest.mark.parametrize("env, answer, prediction, expected", [
    ("crafter", "left", "left", 1.0), ("crafter", "left", "West", 1.0), ("crafter", "up", "north", 1.0),
    ("crafter", "left", "move_left", 1.0), ("crafter", "left", "right", 0.0),
    ("jericho", "north", "n", 1.0), ("jericho", "northeast", "NE", 1.0),
    ("jericho", "up", "north", 0.0),  # in a text adventure up is not north
])
def test_direction_answers(env, answer, prediction, expected):
    assert score(answer, prediction, "direction", env) == expected


@pytest.mark.parametrize("prediction, expected", [
    ("2 steps left and 3 steps up", 1.0),
    ("3 up, 2 left", 1.0),  # either order, short form
    ("3 steps up and 2 steps left", 1.0),
    ("two steps to the left and three steps up", 1.0),
    ("3 north, 2 west", 1.0),
    ("2 left", 0.0), ("2 steps right and 3 steps up", 0.0), ("3 steps left and 2 steps up", 0.0),
    ("no movement", 0.0), ("somewhere up", 0.0),
])
def test_displacement_answers(prediction, expected):
    assert score("2 steps left and 3 steps up", prediction, "displacement", "crafter") == expected


@pytest.mark.parametrize("answer, prediction, expected", [
    ("no movement", "none", 1.0), ("no movement", "0", 1.0), ("no movement", "1 step left", 0.0),
    ("1 step right", "one step to the right", 1.0), ("1 step right", "1 right and 0 up", 1.0),
])
def test_displacement_edge_cases(answer, prediction, expected):
    assert score(answer, prediction, "displacement", "crafter") == expected


@pytest.mark.parametrize("answer, prediction, expected", [
    ("brass lantern, sword", "sword, brass lantern", 1.0),  # any order
    ("brass lantern, sword", "The sword and the brass lantern.", 1.0),
    ("brass lantern, sword", "sword; brass lantern", 1.0),
    ("brass lantern, sword", "sword", 0.0), ("brass lantern, sword", "sword, brass lantern, leaflet", 0.0),
    ("coin, coin", "coin", 0.0), ("coin, coin", "coin, coin", 1.0),  # a multiset
    ("salt and pepper, sword", "sword, salt and pepper", 1.0),  # a name holding 'and'
    ("", "nothing", 1.0), ("", "none", 1.0), ("", "sword", 0.0),
    ("3, 17", "steps 3 and 17", 1.0), ("3, 17", "17, 3", 1.0), ("3, 17", "3, 18", 0.0),
    ("brass lantern, sword", "sword\nbrass lantern", 1.0),  # one element per line
    ("brass lantern, sword", "- sword\r\n- brass lantern\n", 1.0), ("brass lantern, sword", "sword\nlantern", 0.0),
])
def test_list_answers(answer, prediction, expected):
    assert score(answer, prediction, "list") == expected


# --- alternatives ---------------------------------------------------------------------------------------

def test_accepted_answers_score_the_best_match():
    routes = ["move_left", "move_up"]
    assert score("move_left", "move up", "action", "crafter", accepted=routes) == 1.0
    assert score("move_left", "move_down", "action", "crafter", accepted=routes) == 0.0
    # Strings: the best ANLS over the candidates, 1 - 1/6 against the second.
    assert score("abcdef", "xyzabd", "string", accepted=["abcdef", "xyzabc"]) == pytest.approx(5 / 6)


# --- multiple choice ------------------------------------------------------------------------------------

CHOICE = dict(answer="do", answer_type="action", env="crafter", game="crafter")
OPTIONS = ["noop", "do", "sleep", "none of these"]


@pytest.mark.parametrize("prediction, expected", [
    ("B", 1.0), ("(B)", 1.0), ("B)", 1.0), ("B.", 1.0), ("B: do", 1.0), ("Option B", 1.0), ("option b", 0.0),
    ("do", 1.0), ("Do.", 1.0), ("A", 0.0), ("noop", 0.0), ("D", 0.0), ("E", 0.0), ("none of these", 0.0),
    ("not answerable", 0.0), ("I think it was do", 0.0),
])
def test_a_multiple_choice_answer_scores_only_the_right_option(prediction, expected):
    q = as_question({**question("m", **CHOICE), "options": OPTIONS})
    assert score_answer(q, prediction) == expected


def test_none_of_these_and_false_premises_in_multiple_choice():
    none_right = as_question({**question("n", **{**CHOICE, "answer": "none of these"}), "options": OPTIONS})
    assert [score_answer(none_right, p) for p in ("D", "None of these", "do", "B")] == [1.0, 1.0, 0.0, 0.0]
    premise = as_question({**question("p", **{**CHOICE, "answer": "not answerable"}), "options": OPTIONS})
    assert [score_answer(premise, p) for p in ("not answerable", "D", "B")] == [1.0, 0.0, 0.0]


def test_the_prompt_shows_the_options_with_their_letters():
    from qtc.runtime.evaluate.ask import question_line

    q = as_question({**question("m", "What did you do at step 3?", **CHOICE), "options": OPTIONS})
    assert question_line(2, q) == ("2. [the letter of one option] What did you do at step 3? Options: A) noop; "
                                   "B) do; C) sleep; D) none of these")
    assert question_line(1, as_question(question("o", "Open?"))) == "1. [yes or no] Open?"


def test_a_qa_record_whose_answer_is_not_an_option_is_refused(tmp_path, capsys):
    record = {**question("m", **CHOICE), "options": ["noop", "sleep"]}
    qa = write_jsonl(tmp_path / "qa.jsonl", [record])
    assert main(["score", "--qa", str(qa), "--answers", str(write_jsonl(tmp_path / "a.jsonl", []))]) == 2
    assert "field 'answer': 'do' is not among the options" in capsys.readouterr().err


# --- report ---------------------------------------------------------------------------------------------

# (id, category, answer, type, prediction, score): 1-3 single_hop, 4-5 adversarial, 6-7 temporal.
REPORT_CASES = [
    ("1", "single_hop", "12", "step", "12", 1.0),
    ("2", "single_hop", "12", "step", "13", 0.0),
    ("3", "single_hop", "yes", "yesno", "not answerable", 0.0),  # refused
    ("4", "temporal", "not answerable", "yesno", "Unanswerable", 1.0),
    ("5", "logical", "not answerable", "yesno", "yes", 0.0),
    ("6", "temporal", "abcd", "string", "abcx", 0.75),
    ("7", "temporal", "3", "integer", "cannot be answered", 0.0),  # refused
]


def report_questions() -> tuple[list[dict], AnswerSet]:
    from qtc.runtime.qa.answers import Answer

    records = [question(i, answer=a, answer_type=t, category=c) for i, c, a, t, _, _ in REPORT_CASES]
    answers = AnswerSet(model="m", context="full")
    for i, _, _, _, prediction, _ in REPORT_CASES:
        answers.answers[i] = Answer(i, "m", "full", prediction, None, "r", 1, {"prompt_tokens": 0,
                                                                             "completion_tokens": 0}, 0.0)
    return records, answers


def test_report_metrics_by_hand():
    records, answers = report_questions()
    scored = score_run([as_question(r) for r in records], answers)
    assert [s.score for s in scored] == [case[5] for case in REPORT_CASES]
    report = build_report(scored, ["category"], resamples=200)
    overall = report["overall"]
    # Accuracy: (1 + 0 + 0 + 1 + 0 + 0.75 + 0) / 7.
    assert overall["accuracy"] == pytest.approx(2.75 / 7, abs=1e-4)
    # Recall over the answerable references 1, 2, 3, 6, 7: 1.75 / 5.
    assert overall["recall"] == pytest.approx(0.35)
    # Precision over the predictions that are not 'not answerable' (1, 2, 5, 6): 1.75 / 4.
    assert overall["precision"] == pytest.approx(0.4375)
    assert overall["f1"] == pytest.approx(2 * 0.35 * 0.4375 / (0.35 + 0.4375), abs=1e-4)  # 0.3889
    by = report["by"]["category"]
    assert list(by) == ["single_hop", "temporal", "adversarial"]  # design order; false premises apart
    # single_hop (1, 2, 3): Acc 1/3, recall 1/3, precision 1/2 (3 refused), F1 = 2 (1/3)(1/2) / (5/6) = 0.4.
    assert (by["single_hop"]["accuracy"], by["single_hop"]["precision"], by["single_hop"]["f1"]) == \
        (pytest.approx(1 / 3, abs=1e-4), 0.5, pytest.approx(0.4))
    # temporal (6, 7): Acc = recall = 0.375, precision 0.75 (7 refused), F1 = 2 (0.375)(0.75) / 1.125 = 0.5.
    assert (by["temporal"]["accuracy"], by["temporal"]["recall"], by["temporal"]["f1"]) == (0.375, 0.375, 0.5)
    # adversarial (4, 5): Acc 0.5; no answerable reference, so recall and F1 are undefined.
    assert by["adversarial"]["accuracy"] == 0.5
    assert by["adversarial"]["recall"] is None and by["adversarial"]["f1"] is None
    assert by["adversarial"]["f1_ci"] is None


def test_bootstrap_intervals_are_seeded_and_hold_the_estimate():
    records, answers = report_questions()
    scored = score_run([as_question(r) for r in records], answers)
    first = build_report(scored, ["category"], resamples=300, seed=7)
    assert first == build_report(scored, ["category"], resamples=300, seed=7)
    assert first["overall"]["accuracy_ci"] != build_report(scored, [], resamples=300, seed=8)["overall"]["accuracy_ci"]
    low, high = first["overall"]["accuracy_ci"]
    assert 0 <= low <= first["overall"]["accuracy"] <= high <= 1
    perfect = [Scored(as_question(question(str(i))), "yes", 1.0) for i in range(20)]
    assert build_report(perfect, [])["overall"]["accuracy_ci"] == [1.0, 1.0]


def test_a_question_without_an_answer_scores_zero_and_counts_as_attempted():
    records, answers = report_questions()
    del answers.answers["1"]
    scored = score_run([as_question(r) for r in records], answers)
    report = build_report(scored, [], resamples=10)
    assert report["answered"] == 6 and scored[0].score == 0.0 and scored[0].prediction is None
    assert report["overall"]["precision"] == pytest.approx(0.75 / 4)


def test_groupings_by_agent_seed_length_and_evidence():
    from qtc.runtime.evaluate.report import bucket
    from qtc.runtime.qa.answers import Answer

    # (id, episode, horizon, evidence, prediction); every answer is "12".
    cases = [("a", "zork1-walkthrough-s1", None, [3], "12"), ("b", "zork1-walkthrough-s2", 40, [1, 2, 30], "12"),
             ("c", "zork1-random-s1", None, [150, 151], "0"), ("d", "zork1-random-s2", 300, [], "0")]
    records = [question(i, answer="12", answer_type="integer", episode_id=e, horizon=h, evidence=ev)
               for i, e, h, ev, _ in cases]
    answers = AnswerSet(model="m", context="full")
    for i, *_, prediction in cases:
        answers.answers[i] = Answer(i, "m", "full", prediction, None, "r", 1, {"prompt_tokens": 0,
                                                                             "completion_tokens": 0}, 0.0)
    lengths = {"zork1-walkthrough-s1": 120, "zork1-random-s1": 160}  # d has a horizon; b too
    scored = score_run([as_question(r) for r in records], answers, lengths)
    assert [s.seen for s in scored] == [120, 40, 160, 300]
    by = build_report(scored, ["agent", "seed", "episode_length", "evidence_depth", "evidence_age"],
                      resamples=20)["by"]
    assert {name: m["n"] for name, m in by["agent"].items()} == {"random": 2, "walkthrough": 2}
    assert by["agent"]["walkthrough"]["accuracy"] == 1.0 and by["agent"]["random"]["accuracy"] == 0.0
    assert list(by["seed"]) == ["1", "2"]
    assert list(by["episode_length"]) == ["0-50", "101-200", "201-500"]  # in bucket order, not text order
    assert {n: m["n"] for n, m in by["evidence_depth"].items()} == {"0": 1, "1": 1, "2": 1, "3-4": 1}
    # Ages: a 120 - 3 = 117, b 40 - 1 = 39, c 160 - 150 = 10; d has no evidence.
    assert list(by["evidence_age"]) == ["0-10", "11-50", "101-200", "unknown"]
    assert (bucket(0, (0, 1)), bucket(1, (0, 1)), bucket(2, (0, 1)), bucket(None, (0, 1))) == ("0", "1", "2+", "unknown")


def test_the_spread_of_accuracy_across_episode_seeds():
    from qtc.runtime.evaluate.report import seed_spread

    def scored(episode: str, score: float, game: str = "crafter") -> Scored:
        return Scored(as_question(question("x", episode_id=episode, game=game)), "yes", score)
    # Seed 1: 1.0 and 0.0 -> 0.5; seed 2: 1.0; seed 3: 0.0. Mean 0.5, sample std 0.5. A game's name may hold
    # hyphens (a TextWorld game of one's own, my-game.z8), as an agent's may.
    spread = seed_spread([scored("crafter-scripted-s1", 1.0), scored("my-game-my-agent-s1", 0.0, "my-game"),
                          scored("crafter-scripted-s2", 1.0), scored("crafter-scripted-s3", 0.0)])
    assert spread == {"n": 3, "accuracy_mean": 0.5, "accuracy_std": 0.5, "accuracy_min": 0.0, "accuracy_max": 1.0}
    assert seed_spread([scored("crafter-scripted-s1", 1.0), scored("handmade", 0.0)]) is None


# --- qtc score ------------------------------------------------------------------------------------------

def write_run(tmp_path, cases=REPORT_CASES) -> tuple:
    records = [question(i, answer=a, answer_type=t, category=c) for i, c, a, t, _, _ in cases]
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    usage = {"prompt_tokens": 100, "completion_tokens": 10}
    answers = write_jsonl(tmp_path / "answers.jsonl", [
        {"id": i, "model": "m", "context": "last:5", "prediction": p, "error": None, "request": f"r{int(i) // 4}",
         "batch_size": 4, "usage": usage, "seconds": 0.5} for i, _, _, _, p, _ in cases])
    return qa, answers


def test_qtc_score_prints_a_table_and_writes_the_report(tmp_path, capsys):
    qa, answers = write_run(tmp_path)
    out = tmp_path / "reports" / "report.json"
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--by", "category,template,game",
                 "--out", str(out), "--bootstrap", "200"]) == 0
    printed = capsys.readouterr().out
    assert "category: adversarial" in printed and "template: jericho.test" in printed and "game: zork1" in printed
    assert "39.3 [" in printed  # overall accuracy 2.75 / 7, in percent
    report = json.loads(out.read_text())
    assert report["model"] == "m" and report["context"] == "last:5"
    assert report["usage"] == {"requests": 2, "prompt_tokens": 200, "completion_tokens": 20}  # once per request
    assert report["overall"]["f1"] == pytest.approx(0.3889, abs=1e-4)
    assert [q["score"] for q in report["per_question"]] == [case[5] for case in REPORT_CASES]
    assert set(report["by"]) == {"category", "template", "game"}
    assert not list(out.parent.glob(".*.tmp"))  # written atomically: no temporary file left


# Ordered answers (ids 8-10) and a false premise on an ordered template (11, no order credit).
ORDERED_CASES = [
    ("8", "temporal", "wood, stone, coal", "sequence", "wood, stone, coal", 1.0),  # order credit 1
    ("9", "temporal", "wood, stone, coal", "sequence", "wood, coal, stone", 0.0),  # pairs (w,s) (w,c) right: 2/3
    ("10", "temporal", "wood, stone, coal", "sequence", "coal, stone, wood", 0.0),  # no pair right: 0
    ("11", "temporal", "not answerable", "sequence", "not answerable", 1.0),
]


def test_qtc_score_groups_by_episode_and_prints_the_seed_spread(tmp_path, capsys):
    cases = [(str(i), "temporal", "3", "integer", "3" if i % 2 else "4", 0.0) for i in range(4)]
    records = [question(i, answer=a, answer_type=t, category=c, episode_id=f"zork1-walkthrough-s{int(i) // 2}")
               for i, c, a, t, _, _ in cases]
    _, answers = write_run(tmp_path, cases)
    qa = write_jsonl(tmp_path / "qa.jsonl", records)  # the same questions, on episodes of two seeds
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--by", "seed,episode_length",
                 "--bootstrap", "20"]) == 0
    captured = capsys.readouterr()
    assert "seed: 0" in captured.out and "episode_length: unknown" in captured.out
    assert "Accuracy across 2 episode seeds: mean 50.0, std 0.0" in captured.out
    assert "4 question(s) have no horizon and no episode length" in captured.err


def test_qtc_score_reads_episode_lengths_from_the_traces(tmp_path, crafter_trace_dir, capsys):
    cases = [(str(i), "temporal", "3", "integer", "3", 1.0) for i in range(2)]
    _, answers = write_run(tmp_path, cases)
    records = [question(i, answer=a, answer_type=t, category=c, episode_id="crafter-scripted-s0", env="crafter",
                        game="crafter") for i, c, a, t, _, _ in cases]
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--by", "episode_length",
                 "--traces", str(crafter_trace_dir), "--bootstrap", "20"]) == 0
    captured = capsys.readouterr()
    n_steps = read_header(crafter_trace_dir / "crafter-scripted-s0.jsonl")["n_steps"]
    assert f"episode_length: {bucket(n_steps, LENGTH_EDGES)}" in captured.out and "unknown" not in captured.out
    assert "no episode length" not in captured.err


def test_qtc_score_reports_the_order_credit_of_ordered_answers(tmp_path, capsys):
    qa, answers = write_run(tmp_path, REPORT_CASES + ORDERED_CASES)
    out = tmp_path / "report.json"
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--by", "category", "--out", str(out),
                 "--bootstrap", "50"]) == 0
    assert "Order %" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert (report["overall"]["n_ordered"], report["overall"]["order_credit"]) == (3, pytest.approx(5 / 9, abs=1e-4))
    assert report["by"]["category"]["single_hop"]["order_credit"] is None
    credits = {q["id"]: q.get("order_credit") for q in report["per_question"]}
    assert credits == {**dict.fromkeys("1234567"), "8": 1.0, "9": pytest.approx(0.6667), "10": 0.0, "11": None}
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--format", "csv"]) == 0
    header, overall = (line.split(",") for line in capsys.readouterr().out.splitlines()[:2])
    row = dict(zip(header, overall))
    assert (row["n_ordered"], row["order_credit"]) == ("3", "0.5556")


def test_qtc_score_warns_about_a_half_written_line_and_strange_ids(tmp_path, capsys):
    qa, answers = write_run(tmp_path)
    extra = {"id": "zz", "model": "m", "context": "last:5", "prediction": "x", "error": None, "request": "r",
             "batch_size": 1, "usage": {"prompt_tokens": 1, "completion_tokens": 1}, "seconds": 0.1}
    with answers.open("a") as stream:
        stream.write(json.dumps(extra) + "\n" + '{"id": "8", "mod')
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--bootstrap", "10"]) == 0
    err = capsys.readouterr().err
    assert f"{answers}:9: a half-written last line was left out" in err
    assert "1 answer(s)" in err and "zz" in err


@pytest.mark.parametrize("edit, message", [
    (lambda lines: lines[:2] + ["{not json"] + lines[3:], "answers.jsonl:3: not valid JSON"),
    (lambda lines: [lines[0].replace('"prediction": "12"', '"prediction": 12')] + lines[1:],
     "answers.jsonl:1: field 'prediction': expected string, got integer"),
    (lambda lines: lines + [lines[0]], "answers.jsonl:8: field 'id': a second answer to question '1' "
                                       "(the first is at"),
    (lambda lines: lines + [lines[0].replace('"id": "1"', '"id": "9"').replace('"m"', '"other"')],
     "answers.jsonl:8: field 'model': an answer of other"),
])
def test_qtc_score_names_the_line_and_field_of_a_bad_answer(tmp_path, capsys, edit, message):
    qa, answers = write_run(tmp_path)
    answers.write_text("\n".join(edit(answers.read_text().splitlines())) + "\n")
    assert main(["score", "--qa", str(qa), "--answers", str(answers)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_qtc_score_rejects_bad_flags_and_missing_files(tmp_path, capsys):
    qa, answers = write_run(tmp_path)
    for argv, message in [
        (["--by", "category,colour"], "--by: unknown grouping 'colour'"),
        (["--bootstrap", "0"], "--bootstrap must be positive"),
    ]:
        assert main(["score", "--qa", str(qa), "--answers", str(answers), *argv]) == 2
        assert message in capsys.readouterr().err
    assert main(["score", "--qa", str(tmp_path / "nope.jsonl"), "--answers", str(answers)]) == 2
    assert "nope.jsonl: no such QA file" in capsys.readouterr().err
    assert main(["score", "--qa", str(qa), "--answers", str(tmp_path / "none.jsonl")]) == 2
    assert "none.jsonl: no such answers file" in capsys.readouterr().err


@pytest.mark.parametrize("change, message", [
    ({"answer_type": "colour"}, "qa.jsonl:1: field 'answer_type': unknown value 'colour'"),
    ({"evidence": ["1"]}, "qa.jsonl:1: field 'evidence[0]': expected integer, got string"),
    ({"adversarial": True}, "qa.jsonl:1: field 'answer': 'not answerable' is the answer of every adversarial"),
    ({"question": None}, "qa.jsonl:1: field 'question': expected string, got null"),
])
def test_malformed_qa_records_are_named_by_line_and_field(tmp_path, capsys, change, message):
    qa, answers = write_run(tmp_path)
    records = [json.loads(line) for line in qa.read_text().splitlines()]
    records[0].update(change)
    write_jsonl(qa, records)
    assert main(["score", "--qa", str(qa), "--answers", str(answers)]) == 2
    assert message in capsys.readouterr().err


def test_a_missing_qa_field_and_a_duplicate_id_are_named(tmp_path, capsys):
    qa, answers = write_run(tmp_path)
    records = [json.loads(line) for line in qa.read_text().splitlines()]
    del records[1]["horizon"]
    write_jsonl(qa, records)
    assert main(["score", "--qa", str(qa), "--answers", str(answers)]) == 2
    assert "qa.jsonl:2: missing field 'horizon'" in capsys.readouterr().err
    write_jsonl(qa, [records[0], records[0]])
    assert main(["score", "--qa", str(qa), "--answers", str(answers)]) == 2
    assert "qa.jsonl:2: field 'id': '1' is also the id at" in capsys.readouterr().err


def test_the_reader_reads_the_fields_qtc_generate_writes():
    from dataclasses import fields

    from qtc.runtime.qa.format import FIELDS
    from qtc.runtime.qa.questions import Question

    assert tuple(f.name for f in fields(Question)) == FIELDS


def test_every_answer_type_has_a_scorer_and_an_answer_form():
    """An answer type a template may declare is scored and explained to the model (runtime/evaluate/)."""
    from qtc.dsl.types import ANSWER_TYPES
    from qtc.runtime.evaluate.ask import ANSWER_FORMS
    from qtc.runtime.evaluate.scoring import SCORERS
    assert set(ANSWER_TYPES) == set(SCORERS) == set(ANSWER_FORMS)


# --- failed answers, evidence recall@k, accuracy by horizon ------------------------------------------------

def answer_record(i: str, prediction: str, error: str | None = None, retrieved: list[int] | None = None) -> dict:
    return {"id": i, "model": "m", "context": "memory", "prediction": prediction, "error": error, "request": f"r{i}",
            "batch_size": 1, "usage": {"prompt_tokens": 10, "completion_tokens": 1}, "seconds": 0.1,
            "retrieved_steps": retrieved}


def test_failed_answers_are_counted_apart_and_score_zero(tmp_path, capsys):
    # 1 right, 2 wrong, 3 and 4 failed (two kinds), 5 not in the answers file; 6 read from a malformed
    # reply (an error, but an answer: it counts as answered).
    records = [question(str(i), answer="12", answer_type="integer") for i in range(1, 7)]
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    answers = write_jsonl(tmp_path / "answers.jsonl", [
        answer_record("1", "12"), answer_record("2", "13"),
        answer_record("3", "", "context too long: about 9000 tokens"), answer_record("4", "", "no answer in the reply"),
        answer_record("6", "12", "answer read from a malformed reply")])
    out = tmp_path / "report.json"
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--out", str(out), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    assert "3 of 6 questions answered, 2 failed" in printed and "6 of 6" not in printed
    assert ("2 of 5 asked failed (context too long 1, no answer in the reply 1); 1 not asked (not in the answers "
            "file); they score 0 in Accuracy and F1. Accuracy over the 3 answered: 66.7") in " ".join(printed.split())
    report = json.loads(out.read_text())
    assert (report["answered"], report["failed"], report["not_asked"]) == (3, 2, 1)
    assert report["failures"] == {"context too long": 1, "no answer in the reply": 1}
    assert report["overall"]["accuracy"] == pytest.approx(2 / 6, abs=1e-4)  # failures and the unasked score 0
    assert report["accuracy_answered"] == pytest.approx(2 / 3, abs=1e-4)
    errors = {q["id"]: q["error"] for q in report["per_question"]}
    assert errors == {"1": None, "2": None, "3": "context too long: about 9000 tokens",
                      "4": "no answer in the reply", "5": None, "6": None}


def test_evidence_recall_at_k_by_hand():
    # Evidence {3, 7}: retrieved 7 first, 3 sixth: recall@1 1/2, @5 1/2, @10 1. Evidence {0, 4}: step 0 (the
    # start state) is left out, 4 is second: 0, 1, 1. A false premise and an answer without retrieved steps
    # are left out.
    from qtc.runtime.qa.answers import Answer

    cases = [("a", [3, 7], [7, 1, 2, 4, 5, 3]), ("b", [0, 4], [9, 4]), ("c", None, [1, 2]), ("d", [5], None)]
    records = [question(i, answer="not answerable" if ev is None else "12", answer_type="integer", evidence=ev)
               for i, ev, _ in cases]
    answers = AnswerSet(model="m", context="memory")
    for i, _, retrieved in cases:
        answers.answers[i] = Answer(i, "m", "memory", "12", None, "r", 1, {"prompt_tokens": 0, "completion_tokens": 0},
                                    0.0, retrieved_steps=retrieved)
    scored = score_run([as_question(r) for r in records], answers)
    overall = build_report(scored, [], resamples=50)["overall"]
    assert overall["n_retrieved"] == 2
    assert (overall["evidence_recall@1"], overall["evidence_recall@5"], overall["evidence_recall@10"]) == \
        (0.25, 0.75, 1.0)
    low, high = overall["evidence_recall@1_ci"]
    assert 0 <= low <= 0.25 <= high <= 0.5
    plain = build_report(score_run([as_question(r) for r in records], report_questions()[1]), [], resamples=10)
    assert plain["overall"]["n_retrieved"] == 0 and plain["overall"]["evidence_recall@5"] is None


def test_qtc_score_prints_recall_columns_and_groups_by_horizon(tmp_path, capsys):
    records = [question(str(i), answer="12", answer_type="integer", evidence=[i], horizon=h)
               for i, h in ((1, 50), (2, 200), (3, None), (4, 50))]
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    answers = write_jsonl(tmp_path / "answers.jsonl", [answer_record(str(i), "12", retrieved=[i] if i % 2 else [9])
                                                       for i in range(1, 5)])
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--by", "horizon", "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    assert "R@1 % [95% CI]" in printed and "R@10 % [95% CI]" in printed and "evidence recall@k" in printed
    groups = [line.split("horizon: ")[1].split("│")[0].strip() for line in printed.splitlines() if "horizon:" in line]
    assert groups == ["50", "200", "whole episode"] * 2  # the scores' table, then recall's
    assert main(["score", "--qa", str(qa), "--answers", str(answers), "--by", "horizon", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert "evidence_recall@1,evidence_recall@1_low" in rows[0]
    overall = dict(zip(rows[0].split(","), rows[1].split(",")))
    assert (overall["n_retrieved"], overall["evidence_recall@1"]) == ("4", "0.5")
