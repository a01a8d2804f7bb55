"""`qtc generate` end to end on real recorded episodes (the session fixtures of conftest.py).

Determinism (same bytes whatever the file order), the horizon (answers recomputed on traces cut to N
steps), false premises (checked against the raw tables), caps and ratios, output formats, and bad
input (a one-line message, exit 2).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import pyarrow.json as pa_json
import pyarrow.parquet as pq
import pytest

from support.handmade import template
from support.strategies import TraceEpisode, jericho_episode, truncated, write_episodes
from support.paths import TEMPLATES
from support.recordings import SAMPLE_LIBRARY
from qtc.cli import main
from qtc.dsl import ast as A
from qtc.dsl import schema
from qtc.dsl.ir.emit import horizon_cut, whole_without_horizon
from qtc.dsl.ir.sql import HORIZON_VARIABLE
from qtc.dsl.reference.evaluator import cut_to_horizon, read_tables
from qtc.dsl.conventions import words
from qtc.dsl.library import load_library
from qtc.dsl.render import make_environment
from qtc.runtime.generate import run
from qtc.runtime.generate.run import STANDARD_LIBRARY
from qtc.runtime.generate.records import EpisodeInfo, RecordMaker
from qtc.runtime.generate.sampling import nearest
from qtc.runtime.qa.format import FIELDS, NOT_ANSWERABLE
from qtc.runtime.trace.format import read_episode
from qtc.runtime.trace.store import open_store

FAST = ["--max-per-template", "6", "--quiet"]  # small caps keep each run to a few seconds
SAMPLE = ["--templates", *SAMPLE_LIBRARY]  # for what does not depend on the templates asked


@pytest.fixture(scope="module")
def trace_dirs(crafter_trace_dir, jericho_trace_dir) -> list[Path]:
    return [crafter_trace_dir, jericho_trace_dir]


@pytest.fixture(scope="module")
def fast_set(tmp_path_factory, trace_dirs) -> Path:
    """The set `generate` writes over both fixture episodes with FAST alone, made once for the tests
    that read it."""
    out = tmp_path_factory.mktemp("fast_set") / "qa.jsonl"
    generate(out, trace_dirs, *FAST)
    return out


@pytest.fixture(scope="module")
def checkpoint_set(tmp_path_factory, trace_dirs) -> Path:
    """The set of FAST asked at the checkpoints 40 and 80 (--horizon 40,80), made once for the tests
    that read it."""
    out = tmp_path_factory.mktemp("checkpoint_set") / "qa.jsonl"
    generate(out, trace_dirs, "--horizon", "40,80", *FAST)
    return out


HORIZON = 24  # within both episodes (zork1 30 steps, Crafter 196)


@pytest.fixture(scope="module")
def horizon_set(tmp_path_factory, trace_dirs) -> Path:
    """The set of FAST at --horizon HORIZON, half of it false premises, made once for the tests that
    read it."""
    out = tmp_path_factory.mktemp("horizon_set") / "qa.jsonl"
    generate(out, trace_dirs, "--horizon", str(HORIZON), "--adversarial-ratio", "0.5", *FAST)
    return out


def generate(out: Path, traces, *flags: str) -> list[dict]:
    assert main(["generate", "--traces", *map(str, traces), "--out", str(out), *flags]) == 0
    return read_jsonl(out) if out.suffix == ".jsonl" else pq.read_table(out).to_pylist()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def summary_of(out: Path) -> dict:
    return json.loads(out.with_name(out.stem + ".summary.json").read_text())


# ---- determinism ----

def copy_of_fast_set(folder: Path, fast_set: Path) -> Path:
    """The set and summary of `fast_set` in `folder`, as a run with FAST leaves them there."""
    for made in (fast_set, fast_set.with_name("qa.summary.json")):
        shutil.copy(made, folder / made.name)
    return folder / fast_set.name


def test_same_inputs_and_seed_give_the_same_bytes_whatever_the_file_order(tmp_path, trace_dirs, fast_set):
    """The run writes over a copy of `fast_set`: a set made with the same options is replaced without
    --force (another seed gives other questions: test_an_output_made_with_other_options_...)."""
    # The same episodes under other file names, so that they sort the other way round on disk.
    shuffled = tmp_path / "shuffled"
    shuffled.mkdir()
    for name, folder in zip(("z.jsonl", "a.jsonl"), trace_dirs):
        shutil.copy(next(folder.glob("*.jsonl")), shuffled / name)
    second = copy_of_fast_set(tmp_path, fast_set)
    copied = second.stat().st_mtime_ns
    generate(second, [shuffled], *FAST)
    assert second.stat().st_mtime_ns != copied  # written again
    assert fast_set.read_bytes() == second.read_bytes()
    assert summary_of(fast_set) == summary_of(second)


def test_parquet_holds_the_same_records_and_is_reproducible(tmp_path, crafter_trace_dir):
    jsonl = generate(tmp_path / "qa.jsonl", [crafter_trace_dir], *SAMPLE, *FAST)
    parquet = generate(tmp_path / "qa.parquet", [crafter_trace_dir], *SAMPLE, *FAST)
    generate(tmp_path / "again.parquet", [crafter_trace_dir], *SAMPLE, *FAST)
    assert (tmp_path / "qa.parquet").read_bytes() == (tmp_path / "again.parquet").read_bytes()
    for row in parquet:
        row["bindings"] = {k: v for k, v in row["bindings"].items() if v is not None}
    assert parquet == jsonl
    assert pq.read_schema(tmp_path / "qa.parquet").names == list(FIELDS)


# ---- the records ----

def test_sets_with_and_without_a_horizon_have_one_horizon_type(trace_dirs, fast_set, checkpoint_set):
    """`datasets` and pyarrow infer each JSONL file's column types on their own: a whole-episode set
    whose horizon was null could not be read beside a set with a horizon (null against int64)."""
    import pyarrow as pa
    whole = read_jsonl(fast_set)
    lengths = dict(open_store(*trace_dirs).execute("SELECT episode_id, n_steps FROM episodes").fetchall())
    assert all(r["horizon"] == lengths[r["episode_id"]] for r in whole)
    tables = [pa_json.read_json(path) for path in (fast_set, checkpoint_set)]
    assert tables[0].schema.field("horizon").type == tables[1].schema.field("horizon").type == pa.int64()
    assert pa.concat_tables([t.select(["horizon"]) for t in tables]).num_rows == len(whole) + tables[1].num_rows


def test_every_record_has_every_field_with_its_type_and_readers_agree(fast_set):
    out = fast_set
    records = read_jsonl(out)
    assert {r["env"] for r in records} == {"crafter", "jericho"}
    types = {"difficulty": (str, type(None)), "accepted_answers": list, "adversarial": bool, "bindings": dict,
             "evidence": list, "horizon": int, "seed": int, "options": list}
    for record in records:
        assert list(record) == list(FIELDS)
        for name in FIELDS:
            assert isinstance(record[name], types.get(name, str)), (name, record)
        assert record["accepted_answers"][0] == record["answer"]
        assert (record["answer"] == NOT_ANSWERABLE) == record["adversarial"] == (not record["evidence"])
        assert all(isinstance(v, str) for v in record["bindings"].values())
        assert not record["options"] or record["adversarial"] or record["answer"] in record["options"]
    assert len({r["id"] for r in records}) == len(records)
    # One line per question, read as it is by DuckDB and by pyarrow (which pandas and datasets use).
    assert duckdb.connect().execute(f"SELECT count(*) FROM read_json_auto('{out}')").fetchone()[0] == len(records)
    assert pa_json.read_json(out, read_options=pa_json.ReadOptions(block_size=1 << 12)).num_rows == len(records)
    pandas = pytest.importorskip("pandas")
    assert len(pandas.read_json(out, lines=True)) == len(records)


def test_multiple_choice_records(tmp_path, trace_dirs, trace_db):
    """Options: the answer once among distractors that are no right answer, shuffled by the seed, then
    'none of these' where the template offers it, right for about one question in four."""
    from qtc.dsl.conventions import NONE_OF_THESE
    from qtc.dsl.render import name_text

    choices = [TEMPLATES / "crafter" / "choices.qtpl", TEMPLATES / "jericho" / "choices.qtpl"]
    flags = ["--templates", *map(str, choices), "--max-per-template", "200", "--adversarial-ratio", "0", "--quiet"]
    records = generate(tmp_path / "qa.jsonl", trace_dirs, *flags)
    actions = dict(((e, s), a) for e, s, a in trace_db.execute("SELECT episode_id, step, action FROM crafter_steps").fetchall())
    action_at = [r for r in records if r["template_id"] == "crafter.choice_action_at"]
    assert len(action_at) >= 100 and {r["template_id"] for r in records} >= {"crafter.choice_never_seen",
                                                                              "jericho.choice_first_gain_after"}
    for r in records:
        options = r["options"]
        assert len(options) == len(set(options)) and r["answer"] in options and r["accepted_answers"] == [r["answer"]]
    for r in action_at:
        truth = name_text(actions[(r["episode_id"], int(r["bindings"]["t"]))])  # options name actions as words
        assert len(r["options"]) == 4 and r["options"][-1] == NONE_OF_THESE
        assert r["answer"] == truth if truth in r["options"] else r["answer"] == NONE_OF_THESE
    none_right = sum(r["answer"] == NONE_OF_THESE for r in action_at) / len(action_at)
    assert 0.1 < none_right < 0.4
    assert len({r["options"].index(r["answer"]) for r in action_at if r["answer"] != NONE_OF_THESE}) == 3
    again = generate(tmp_path / "again.jsonl", trace_dirs, *flags, "--seed", "1")
    assert [r["options"] for r in again if r["template_id"] == "crafter.choice_action_at"] != \
        [r["options"] for r in action_at]


def test_a_question_whose_text_fails_to_render_is_left_out_with_a_warning(tmp_path, trace_dirs, capsys):
    folder = tmp_path / "templates" / "crafter"
    folder.mkdir(parents=True)
    (folder / "huge.qtpl").write_text(
        'template crafter.huge {\n  env crafter\n  category single_hop\n  answer_type action\n\n'
        '  param t: steps.step\n  question "At {{ t | plural(\\"step\\") * 99999999999999 }}?"\n'
        '  answer steps[$t].action\n  evidence $t\n}\n')
    records = generate(tmp_path / "qa.jsonl", trace_dirs, "--templates", str(folder), *FAST)
    assert records == []
    assert "question(s) of crafter.huge could not be rendered and were left out; the first: the question's " \
           "text failed to render: SecurityError: repeating a value past 10000 items" in capsys.readouterr().err


def test_an_output_made_with_other_options_is_not_replaced_without_force(tmp_path, trace_dirs, capsys):
    """(With the same options it is replaced: test_same_inputs_and_seed_give_the_same_bytes_...)"""
    out = tmp_path / "qa.jsonl"
    first = generate(out, trace_dirs, *SAMPLE, *FAST)
    assert main(["generate", "--traces", *map(str, trace_dirs), "--out", str(out), *SAMPLE, *FAST, "--seed", "7"]) == 2
    assert "qa.jsonl was generated with other options (seed 42 -> 7); give --force" in capsys.readouterr().err
    assert read_jsonl(out) == first
    other_seed = generate(out, trace_dirs, *SAMPLE, *FAST, "--seed", "7", "--force")
    assert {r["id"] for r in other_seed} != {r["id"] for r in first}  # another seed asks other questions
    (tmp_path / "qa.summary.json").unlink()  # as a run killed between the set and its summary leaves it
    assert main(["generate", "--traces", *map(str, trace_dirs), "--out", str(out), *SAMPLE, *FAST, "--seed", "7"]) == 2
    assert "has no readable summary beside it" in capsys.readouterr().err


def test_total_keeps_the_mix_at_set_level(tmp_path, trace_dirs):
    """A 30-question set: 6 false premises (20%), though most templates get one question or none, and
    every category its even share."""
    records = generate(tmp_path / "qa.jsonl", trace_dirs, "--total", "30", "--quiet")
    assert len(records) == 30 and sum(r["adversarial"] for r in records) == 6
    categories = Counter(r["category"] for r in records)
    assert max(categories.values()) - min(categories.values()) <= 1, categories
    assert {r["env"] for r in records} == {"crafter", "jericho"}
    summary = json.loads((tmp_path / "qa.summary.json").read_text())
    assert summary["options"]["total"] == 30 and summary["questions"] == 30


def test_total_alone_caps_a_template_by_its_share_only(tmp_path, crafter_trace_dir, trace_db):
    """--total without --max-per-template: the template with one candidate a step gives more than the
    default 100, the one with a candidate per distinct action leaves the rest of its share to it, and
    each draws its candidates for its share of the total (75 of 150 at first: 4 x 75 bindings), not for
    a cap of 150."""
    body = """
  param t: steps.step
  question "Which action did you take at step {{ t }}?"
  answer steps[$t].action
  evidence $t"""
    folder = template_folder(tmp_path, body, answer_type="action")
    scarce = body.replace("param t: steps.step", "param a: steps.action").replace(
        "Which action did you take at step {{ t }}?", "When did you first take the action {{ a }}?").replace(
        "answer steps[$t].action\n  evidence $t", "answer first(steps | where action == $a).step\n"
        "  evidence first(steps | where action == $a).step")
    (folder / "u.qtpl").write_text(template("crafter", scarce, answer_type="step").replace("crafter.t", "crafter.u"))
    actions = trace_db.execute("SELECT count(DISTINCT action) FROM crafter_steps").fetchone()[0]
    out = tmp_path / "qa.jsonl"
    records = generate(out, [crafter_trace_dir], "--templates", str(folder), "--total", "150", "--quiet")
    assert Counter(r["template_id"] for r in records) == {"crafter.t": 150 - actions, "crafter.u": actions}
    reports = {t["template_id"]: t for t in summary_of(out)["templates"]}
    assert reports["crafter.t"]["candidates_per_episode"] == 4 * 75
    assert summary_of(out)["options"]["max_per_template"] == 150


def test_the_limit_on_what_a_template_renders_changes_no_question(tmp_path, trace_dirs, monkeypatch):
    """With --total, a template renders at first only what its share needs (`limit`) and chooses again
    where the set could take more of it; the set and its summary are those that choosing up to the cap
    everywhere makes, whatever the first limit (a `Mix` list is a prefix of any longer one, and a share
    below its size does not grow with the size: sampling.share)."""
    sets = []
    for limit in (lambda self, compiled: self.options.per_template, lambda self, compiled: 1,
                  lambda self, compiled: 3, run._Generator.limit):
        monkeypatch.setattr(run._Generator, "limit", limit)
        out = tmp_path / f"qa{len(sets)}.jsonl"
        sets.append((generate(out, trace_dirs, *SAMPLE, "--total", "40", "--quiet"), summary_of(out)))
    assert all(made == sets[0] for made in sets) and len(sets[0][0]) == 40


def test_no_false_premise_names_a_thing_met_by_name(tmp_path, trace_dirs, trace_db):
    """zork1's walkthrough takes a knife with `get knife` (step 18): the rusty knife, which that command
    could have meant, is no longer offered as never seen (CONVENTIONS.md, False premises)."""
    named = dict(((e, i), s) for e, s, i in trace_db.execute(
        "SELECT episode_id, step, item FROM jericho_named_items").fetchall())
    assert any(item == "rusty knife" for _, item in named)
    records = generate(tmp_path / "qa.jsonl", trace_dirs, "--adversarial-ratio", "1", "--max-per-template", "50",
                       "--quiet")
    # The false-premise parameters that name things (keyword false premises are about words, not things);
    # an event's subject (event_subjects) leaves out the things met by name too.
    things = {c.id: {a.param for a in c.checked.template.adversarials
                     if "named_items" in c.checked.template.source or "event_subjects" in c.checked.template.source}
              for c in load_library([STANDARD_LIBRARY]).compiled if c.env in ("jericho", "any")}
    offered = [(r["episode_id"], r["bindings"][param]) for r in records if r["adversarial"] and r["env"] == "jericho"
               for param in things[r["template_id"]]]
    assert offered and not [pair for pair in offered if pair in named]


def test_answers_are_the_tables_own(fast_set, trace_db):
    records = read_jsonl(fast_set)
    checked = 0
    for env in ("crafter", "jericho"):
        rows = trace_db.execute(f"SELECT episode_id, step, action FROM {env}_steps").fetchall()
        actions = {(episode, step): action for episode, step, action in rows}
        for r in records:
            if r["template_id"] == f"{env}.action_at":
                assert r["answer"] == actions[(r["episode_id"], int(r["bindings"]["t"]))]
                assert r["evidence"] == [int(r["bindings"]["t"])]
                checked += 1
    assert checked >= 6


# ---- the horizon ----

def truncate(trace: Path, steps: int, folder: Path) -> None:
    """A copy of an episode file holding its first `steps` steps only, as if recording had stopped there."""
    episode = read_episode(trace)
    folder.mkdir(exist_ok=True)
    write_episodes([truncated(TraceEpisode(episode.header, episode.steps), steps)], folder)


def test_no_question_touches_a_step_beyond_the_horizon(tmp_path, trace_dirs, horizon_set):
    horizon = HORIZON
    records = read_jsonl(horizon_set)
    assert records and all(r["horizon"] == horizon for r in records)
    assert all(step <= horizon for r in records for step in r["evidence"])
    # The same templates over traces cut to N steps, with every candidate: each question is one of
    # them, with the same answer, evidence and text.
    cut = tmp_path / "cut"
    for folder in trace_dirs:
        for trace in folder.glob("*.jsonl"):
            truncate(trace, horizon, cut)
    con = open_store(cut)
    episodes = {e: EpisodeInfo(env, game, n) for e, env, game, n in
                con.execute("SELECT episode_id, env, game, n_steps FROM episodes").fetchall()}
    by_template = defaultdict(list)
    for record in records:
        by_template[record["template_id"]].append(record)
    compiled = {c.id: c for c in load_library([STANDARD_LIBRARY]).compiled}
    for template_id, questions in by_template.items():
        result = con.execute(compiled[template_id].sql)
        rows = [dict(zip([d[0] for d in result.description], row)) for row in result.fetchall()]
        maker = RecordMaker(compiled[template_id], episodes, horizon, questions[0]["seed"], make_environment())
        recomputed = {maker.row_id(row): row for row in rows}
        for question in questions:
            assert question["id"] in recomputed, (template_id, question["bindings"])
            again = maker.make(recomputed[question["id"]], question["id"])
            assert (again["answer"], again["evidence"], again["question"]) == \
                   (question["answer"], question["evidence"], question["question"]), template_id
    assert len(by_template) >= 20


# The object tree's tables, and the steps (with `changed`), under a horizon: the rows the compiler's cut
# and the reference evaluator's keep are the rows of the same episodes recorded up to the horizon, a
# location that lasts past it included (its last_step cut to the horizon).
HORIZON_TABLES = (schema.JERICHO_STEPS, schema.JERICHO_OBJECTS, schema.JERICHO_OBJECT_LOCATIONS,
                  schema.JERICHO_SIGHTINGS, schema.JERICHO_THINGS_PRESENT, schema.JERICHO_MENTIONS)


def test_the_object_tables_under_a_horizon_are_those_of_traces_cut_there(tmp_path):
    intents = [(("idle", "look"), None, 0), (("take", "brass key"), None, 0), (("move", "north", 20), None, 0),
               (("drop", "brass key"), None, 0), (("idle", "look"), None, 5), (("move", "south", 10), None, 0),
               (("take", "sword"), None, 0), (("drop", "sword"), None, 0)]
    episode = jericho_episode(intents, room=10)
    write_episodes([episode], tmp_path / "whole")
    for horizon in (3, 5):
        write_episodes([truncated(episode, horizon)], tmp_path / f"cut{horizon}")
        with open_store(tmp_path / "whole") as whole, open_store(tmp_path / f"cut{horizon}") as cut:
            whole.execute(f"SET VARIABLE {HORIZON_VARIABLE} = {horizon}")
            for table in HORIZON_TABLES:
                seen = whole.execute(horizon_cut(table)).fetchall()
                recorded = cut.execute(f"SELECT * FROM {table.sql_name}").fetchall()
                assert sorted(seen) == sorted(recorded), (table.name, horizon)
            (referenced,), (cut_rows,) = cut_to_horizon(read_tables(whole), horizon), cut_to_horizon(read_tables(cut), None)
            for table in HORIZON_TABLES:
                assert referenced.tables[table.name] == cut_rows.tables[table.name], (table.name, horizon)


def test_a_run_without_a_horizon_reads_whole_only_tables_whose_cut_then_keeps_every_row(trace_db, textworld_db):
    """Generation without a horizon reads some tables as they are, not through their cuts (ir/emit.py):
    with the horizon unset, each such cut holds the table's rows, on every game's recorded episodes."""
    whole = [table for table in schema.TABLES if whole_without_horizon(table)]
    assert {schema.JERICHO_STEPS, schema.JERICHO_OBJECT_LOCATIONS, schema.TEXTWORLD_FACTS} <= set(whole)
    assert schema.EPISODES not in whole and schema.EVENTS not in whole
    for con in (trace_db, textworld_db):
        assert con.execute(f"SELECT getvariable('{HORIZON_VARIABLE}')").fetchone() == (None,)
        for table in whole:
            rows = con.execute(f"SELECT * FROM {table.sql_name}").fetchall()
            assert sorted(con.execute(horizon_cut(table)).fetchall(), key=repr) == sorted(rows, key=repr), table.name


# ---- false premises ----

def occurring_values(con, domain: A.Expr, episode: str, horizon: int, bindings: dict) -> set[str]:
    """The values a parameter's own domain holds on an episode within the horizon, computed from the raw
    tables in Python (not by the compiler) for the forms the library uses: `table.column`,
    `(table | where COND).column` (COND may read the record's other `bindings`), `words(...)` and
    `flatten(...)`."""
    if isinstance(domain, A.Call) and domain.function in ("words", "flatten"):
        values = occurring_column(con, domain.args[0], episode, horizon, bindings)
        return {str(v) for value in values for v in (words(value) if domain.function == "words" else value or [])}
    return {str(v) for v in occurring_column(con, domain, episode, horizon, bindings)}


def occurring_column(con, field: A.Expr, episode: str, horizon: int, bindings: dict) -> list:
    relation = getattr(field, "base", None)
    condition = relation.condition if isinstance(relation, A.Where) else None
    table = relation.base if condition is not None else relation
    assert isinstance(field, A.Field) and isinstance(table, A.Name) and table.ref[0] == "table", \
        f"teach this test the domain at line {field.span.line}"
    result = con.execute(f"SELECT * FROM {table.ref[1].sql_name} WHERE episode_id = ? AND step <= ?", [episode, horizon])
    columns = [d[0] for d in result.description]
    rows = [dict(zip(columns, row)) for row in result.fetchall()]
    return [row[field.name] for row in rows if condition is None or holds(con, condition, row, episode, bindings)]


def holds(con, e: A.Expr, row: dict, episode: str, bindings: dict):
    """A `where` condition on one row: the few forms the library's parameter domains use."""
    if isinstance(e, A.Name) and e.ref[0] == "column":
        return row[e.name]
    if isinstance(e, A.ParamRef):
        return bindings[e.name]
    if isinstance(e, A.IsNull):
        return (holds(con, e.item, row, episode, bindings) is None) != e.negated
    if isinstance(e, A.Literal):
        return e.value
    if isinstance(e, A.Unary) and e.op == "not":
        return not holds(con, e.operand, row, episode, bindings)
    if isinstance(e, A.Binary):
        left, right = holds(con, e.left, row, episode, bindings), holds(con, e.right, row, episode, bindings)
        return {"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
                ">": left > right, ">=": left >= right, "and": left and right, "or": left or right}[e.op]
    if isinstance(e, A.In) and isinstance(e.container, A.Field) and e.container.base.ref == ("vocab", None):
        game = con.execute("SELECT game FROM episodes WHERE episode_id = ?", [episode]).fetchone()[0]
        kind = con.execute("SELECT list(value) FROM vocab WHERE game = ? AND kind = ?", [game, e.container.name])
        return (holds(con, e.item, row, episode, bindings) in kind.fetchone()[0]) != e.negated
    raise AssertionError(f"teach this test the condition at line {e.span.line}")


def test_every_adversarial_premise_is_false_on_its_trace_within_the_horizon(horizon_set, trace_db):
    """Values that occur after the horizon (most of Crafter's episode) are false premises within it."""
    horizon, out = HORIZON, horizon_set
    records = read_jsonl(out)
    adversarial = [r for r in records if r["adversarial"]]
    assert {r["env"] for r in adversarial} == {"crafter", "jericho"}
    library = {c.id: c for c in load_library([STANDARD_LIBRARY]).compiled}
    # Templates with a premise stated as a condition: the answerability property tests check those.
    stated = {id for id, c in library.items() if any(clause.premise is not None for clause in c.checked.template.adversarials)}
    for record in adversarial:
        if record["template_id"] in stated:
            continue  # its premise is about the binding, not a value that never occurred
        template = library[record["template_id"]].checked.template
        domains = {p.name: p.domain for p in template.params}
        # The question presumes its value occurred: for some adversarial parameter it never did.
        assert any(record["bindings"][clause.param] not in
                   occurring_values(trace_db, domains[clause.param], record["episode_id"], horizon, record["bindings"])
                   for clause in template.adversarials if clause.premise is None), \
            (record["template_id"], record["bindings"])
    summary = summary_of(out)
    asked = {t["template_id"]: t for t in summary["templates"]}
    # A premise drawn as a value the game has but the episode never showed is never true; a stated
    # premise (a far offset) may be, and is then dropped.
    assert all(asked[r["template_id"]]["adversarial_dropped"] == 0 for r in adversarial
               if r["template_id"] not in stated)


def template_folder(tmp_path: Path, body: str, **settings) -> Path:
    """A folder holding one Crafter template around `body` (handmade.template)."""
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "t.qtpl").write_text(template("crafter", body, **settings))
    return folder


def test_a_true_premise_is_dropped_and_counted(tmp_path, crafter_trace_dir, trace_db):
    # An adversarial domain that wrongly includes the actions the agent took.
    folder = template_folder(tmp_path, """
  param action: steps.action
  question "When did you first take the action '{{ action }}'?"
  answer first(steps | where action == $action).step
  evidence first(steps | where action == $action).step
  adversarial action: vocab.action""", answer_type="step")
    out = tmp_path / "qa.jsonl"
    records = generate(out, [crafter_trace_dir], "--templates", str(folder), "--adversarial-ratio", "0.5", "--quiet")
    taken = {a for (a,) in trace_db.execute("SELECT DISTINCT action FROM crafter_steps").fetchall()}
    vocabulary = {v for (v,) in trace_db.execute("SELECT value FROM vocab WHERE game = 'crafter' AND kind = 'action'")
                  .fetchall()}
    report = summary_of(out)["templates"][0]
    assert report["adversarial_dropped"] == len(taken)
    assert report["adversarial_candidates"] == len(vocabulary - taken) > 0
    assert {r["bindings"]["action"] for r in records if r["adversarial"]} <= vocabulary - taken


# ---- balance ----

def test_caps_per_template_and_per_category_and_the_adversarial_ratio(tmp_path, trace_dirs):
    out = tmp_path / "qa.jsonl"
    records = generate(out, trace_dirs, *SAMPLE, "--max-per-template", "5", "--per-category", "12",
                       "--adversarial-ratio", "0.4", "--quiet")
    per_template = Counter(r["template_id"] for r in records)
    per_category = Counter(r["category"] for r in records)
    assert max(per_template.values()) <= 5 and max(per_category.values()) <= 12
    summary = summary_of(out)
    reports = {t["template_id"]: t for t in summary["templates"]}
    for template_id, report in reports.items():
        assert report["questions"] == per_template.get(template_id, 0)
        assert report["adversarial_questions"] <= nearest(0.4 * report["questions"])
        assert report["asked"] == 5
    # A category's questions are shared evenly among the templates that could give more.
    for category in per_category:
        own = [t for t in reports.values() if t["category"] == category]
        capped = [t["questions"] for t in own if t["limited_by"] == "category cap"]
        others = [t["questions"] for t in own if t["limited_by"] != "category cap"]
        if capped:
            assert max(capped) - min(capped) <= 1 and all(q <= max(capped) for q in others)
    assert sum(c["questions"] for c in summary["categories"]) == summary["questions"] == len(records)


def test_a_template_without_candidates_is_reported_not_silent(tmp_path, crafter_trace_dir, capsys):
    folder = template_folder(tmp_path, """
  require count(steps) > 100000
  question "How many steps did you take?"
  answer count(steps)
  evidence steps.step""")
    out = tmp_path / "qa.jsonl"
    assert main(["generate", "--traces", str(crafter_trace_dir), "--templates", str(folder), "--out", str(out)]) == 0
    (report,) = summary_of(out)["templates"]
    assert report["questions"] == 0 and report["limited_by"] == "candidates"
    assert report["episodes_without_candidates"] == ["crafter-scripted-s0"]
    assert "crafter.t: no candidates on 1 of 1 episode(s): crafter-scripted-s0" in capsys.readouterr().out


# ---- bad input ----

@pytest.mark.parametrize("flags, message", [
    (["--max-per-template", "0"], "--max-per-template must be at least 1, got 0"),
    (["--per-category", "-3"], "--per-category must be at least 1, got -3"),
    (["--horizon", "0"], "--horizon must be at least 1, got 0"),
    (["--adversarial-ratio", "1.5"], "--adversarial-ratio must be between 0 and 1, got 1.5"),
    (["--out", "qa.csv"], "qa.csv: the output must end in .jsonl or .parquet"),
    (["--templates", "nowhere"], "no such file or folder: nowhere"),
])
def test_malformed_options_are_rejected_with_a_message(flags, message, crafter_trace_dir, capsys, tmp_path,
                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--traces", str(crafter_trace_dir), *flags]) == 2
    err = capsys.readouterr().err
    assert err == f"qtc generate: error: {message}\n"
    assert not (tmp_path / "qa.jsonl").exists()


def test_values_argparse_cannot_read_exit_2(crafter_trace_dir, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["generate", "--traces", str(crafter_trace_dir), "--seed", "forty-two"])
    assert exit_.value.code == 2 and "invalid int value: 'forty-two'" in capsys.readouterr().err


def test_bad_templates_and_traces_are_user_errors(tmp_path, crafter_trace_dir, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.qtpl").write_text("template crafter.bad {\n  env crafter\n  category single_hop\n  answer_type step\n"
                                "  param t: steps.stepp\n  question \"{{ t }}\"\n  answer $t\n  evidence $t\n}\n")
    empty, broken = tmp_path / "empty", tmp_path / "broken"
    empty.mkdir()
    broken.mkdir()
    (broken / "x.jsonl").write_text("{not json\n")
    cases = [
        (["--traces", str(crafter_trace_dir), "--templates", str(bad)], "the first at"),
        (["--traces", str(crafter_trace_dir), "--templates", str(empty)], "no .qtpl templates found in"),
        (["--traces", str(broken)], "not valid JSON"),
        (["--traces", str(empty)], "no episodes in"),
        (["--traces", str(tmp_path / "nowhere")], "no such file or folder"),
    ]
    for flags, message in cases:
        assert main(["generate", *flags, "--out", str(tmp_path / "qa.jsonl")]) == 2, flags
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "qa.jsonl").exists()


def test_checkpoint_horizons_make_one_set_with_the_horizon_in_each_id(tmp_path, trace_dirs, checkpoint_set):
    """--horizon 40,80: the set asked at each checkpoint, in one file; a question's id holds its horizon
    (its answer may differ between them); a question can say what it looks back over."""
    records = read_jsonl(checkpoint_set)
    assert {r["horizon"] for r in records} == {40, 80}
    assert len({r["id"] for r in records}) == len(records)
    assert all(max(r["evidence"], default=0) <= r["horizon"] for r in records)
    attacks = [r for r in records if r["template_id"] == "crafter.attack_count"]
    assert all(r["question"].startswith(f"Up to step {r['horizon']}, how many") for r in attacks)
    summary = summary_of(checkpoint_set)
    assert summary["horizons"] == [40, 80] and [c["options"]["horizon"] for c in summary["checkpoints"]] == [40, 80]
    for bad in ("80,40", "40,x"):
        with pytest.raises(SystemExit):
            main(["generate", "--traces", *map(str, trace_dirs), "--out", str(tmp_path / "qa.jsonl"), "--horizon", bad])
