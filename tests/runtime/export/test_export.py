"""qtc export (runtime/export/): the samples are the prompts `qtc answer` sends, and each harness's own
loader reads its export: `datasets.load_dataset` every folder (by its card), inspect_ai's json_dataset and
task loading, lm-eval's TaskManager; their scorers give qtc's scores. Tests of a harness skip, saying so,
where it is not installed (the `export` extra). Nothing reaches the network: the Hugging Face libraries
are set offline, and no model is run."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json

import pytest

from support.answering import CRAFTER, answer, crafter_questions, policy_for, read_answers_file
from support.handmade_qa import question, write_jsonl
from support.openai_stub_server import ChatCompletionServer
from qtc.cli import main
from qtc.dsl.metadata import CATEGORIES
from qtc.runtime.export.samples import SAMPLE_FEATURES, score_completion
from qtc.runtime.export.write import fence_grids
from qtc.runtime.trace.store import open_store

CONTEXT = "budget:600"
SUMMARY = {"questions": 5, "options": {"seed": 7, "max_per_template": 3, "horizon": 30}}


@pytest.fixture(scope="module")
def qa(tmp_path_factory, crafter_trace_dir):
    con = open_store(crafter_trace_dir)
    records = crafter_questions(con, 4, horizon=30)
    con.close()
    records[1]["bindings"] = {"t": "2"}
    records.append(question("adv", "Which action did you take after you first mined diamond?", "not answerable",
                            "action", episode_id=CRAFTER, env="crafter", game="crafter", horizon=30))
    path = write_jsonl(tmp_path_factory.mktemp("qa") / "qa.jsonl", records)
    path.with_name("qa.summary.json").write_text(json.dumps(SUMMARY))
    return path


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    for variable in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(variable, "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


def export(qa, traces, target: str, out, *extra: str) -> int:
    return main(["export", str(qa), "--traces", str(traces), "--context", CONTEXT, "--to", target, str(out), *extra])


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def reply(answer: str) -> str:
    return json.dumps({"answers": [{"question": 1, "answer": answer}]})


def test_samples_are_the_prompts_qtc_answer_sends(qa, crafter_trace_dir, tmp_path):
    assert export(qa, crafter_trace_dir, "lm-eval", tmp_path / "lm-eval") == 0
    samples = read_jsonl(tmp_path / "lm-eval" / "samples.jsonl")
    records = read_jsonl(qa)
    assert [s["id"] for s in samples] == [r["id"] for r in records]  # the QA set's order
    out = tmp_path / "answers.jsonl"
    with ChatCompletionServer(policy_for(records)) as server:
        assert answer(qa, [crafter_trace_dir], server.url, out, "--context", CONTEXT, "--batch", "1") == 0
    sent = {json.dumps(r["messages"]) for r in server.requests}
    assert {json.dumps(s["input"]) for s in samples} == sent
    # inspect's samples are the same but for the view grids, fenced as code for its Markdown viewer
    assert export(qa, crafter_trace_dir, "inspect", tmp_path / "inspect") == 0
    fenced = read_jsonl(tmp_path / "inspect" / "samples.jsonl")
    assert {json.dumps([m | {"content": fence_grids(m["content"])} for m in r["messages"]])
            for r in server.requests} == {json.dumps(s["input"]) for s in fenced}
    assert [s["metadata"] for s in fenced] == [s["metadata"] for s in samples]
    tokens = {a["id"]: a["context_tokens"] for a in read_answers_file(out)}
    for sample, record in zip(samples, records):
        assert sample["target"] == record["answer"] and sample["metadata"]["context"] == CONTEXT
        assert sample["metadata"]["context_tokens"] == tokens[sample["id"]] > 0
        assert score_completion(sample["metadata"], reply(record["answer"])) == 1.0
        assert score_completion(sample["metadata"], reply("noop" if record["answer"] != "noop" else "do")) == 0.0


def test_crafter_grids_are_fenced_as_code_and_nothing_else_changes():
    log = ("Step 3\n  action: noop\n  standing on grass, facing left\n  view:\n    ~~...\n    _.@.\n    =====\n"
           "  creatures in view: none\nStep 4\n  view:\n    ~~TT")
    assert fence_grids(log) == ("Step 3\n  action: noop\n  standing on grass, facing left\n  view:\n  ```\n    ~~...\n"
                                "    _.@.\n    =====\n  ```\n  creatures in view: none\nStep 4\n  view:\n  ```\n"
                                "    ~~TT\n  ```")
    jericho = "Step 1\n  action: look\n  observation: West of House ~~ a view: of the house"
    assert fence_grids(jericho) == jericho


def test_the_card_says_where_the_samples_come_from(qa, crafter_trace_dir, tmp_path):
    assert export(qa, crafter_trace_dir, "hf", tmp_path / "hf") == 0
    card = (tmp_path / "hf" / "README.md").read_text()
    from qtc import __version__
    assert f"qtc version: {__version__}" in card and "games: crafter" in card
    assert hashlib.sha256(qa.read_bytes()).hexdigest() in card
    for trace in crafter_trace_dir.glob("*.jsonl"):
        assert f"`{trace.name}` `{hashlib.sha256(trace.read_bytes()).hexdigest()}`" in card
    assert '"max_per_template": 3' in card and '"seed": 7' in card
    assert "| adversarial | 1 |" in card and "| action | 5 |" in card and "## Known limits" in card


@pytest.mark.parametrize("target", ["hf", "inspect", "lm-eval"])
def test_every_export_loads_with_datasets_by_its_card(qa, crafter_trace_dir, tmp_path, target):
    datasets = pytest.importorskip("datasets", reason="datasets is not installed (pip install -e '.[export]')")
    out = tmp_path / target
    assert export(qa, crafter_trace_dir, target, out) == 0
    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["test"]
    assert [name for name, _ in SAMPLE_FEATURES] == list(loaded.features)
    rows = list(loaded)
    assert [r["id"] for r in rows] == [r["id"] for r in read_jsonl(qa)]
    assert rows[1]["metadata"]["bindings"] == [{"name": "t", "value": "2"}]
    assert all(score_completion(r["metadata"], reply(r["target"])) == 1.0 for r in rows)


def test_inspect_loads_the_samples_and_the_task(qa, crafter_trace_dir, tmp_path):
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (pip install -e '.[export]')")
    from inspect_ai import Task, list_tasks
    from inspect_ai.dataset import json_dataset
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState

    out = tmp_path / "inspect"
    assert export(qa, crafter_trace_dir, "inspect", out, "--name", "crafter memory") == 0
    dataset = json_dataset(str(out / "samples.jsonl"))
    assert [s.id for s in dataset] == [r["id"] for r in read_jsonl(qa)]
    assert [m.role for m in dataset[0].input] == ["system", "user"] and dataset[0].target == read_jsonl(qa)[0]["answer"]
    assert [t.name for t in list_tasks("task.py", root_dir=out)] == ["crafter_memory"]
    spec = importlib.util.spec_from_file_location("exported_inspect_task", out / "task.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    task = module.crafter_memory()
    assert isinstance(task, Task) and len(task.dataset) == 5
    for sample, completion, expected in ((task.dataset[0], reply(task.dataset[0].target), 1.0),
                                         (task.dataset[4], "Not answerable.", 1.0),
                                         (task.dataset[2], reply("sleep"), 0.0)):
        state = TaskState(model="none/none", sample_id=sample.id, epoch=1, input=sample.input, messages=sample.input,
                          output=ModelOutput.from_content("none/none", completion), metadata=sample.metadata)
        assert asyncio.run(task.scorer[0](state, Target(sample.target))).value == expected
    # accuracy per category beside the overall one, false premises apart as `adversarial`
    groups = {s.metadata["qtc_category"] for s in task.dataset}
    assert "adversarial" in groups and groups <= {*CATEGORIES, "adversarial"}
    assert all((s.metadata["qtc_category"] == "adversarial") == s.metadata["adversarial"] for s in task.dataset)
    assert "grouped(accuracy(), GROUP, all=False)" in (out / "task.py").read_text()
    assert "```" in task.dataset[0].input[-1].text  # the grids fenced


def test_lm_eval_loads_the_task(qa, crafter_trace_dir, tmp_path):
    pytest.importorskip("lm_eval", reason="lm-eval is not installed (pip install -e '.[export]')")
    from lm_eval.tasks import TaskManager

    out = tmp_path / "lm-eval"
    assert export(qa, crafter_trace_dir, "lm-eval", out, "--name", "crafter_memory") == 0
    (task,) = TaskManager(include_path=str(out)).load(["crafter_memory"])["tasks"].values()
    assert task.OUTPUT_TYPE == "generate_until"
    docs = list(task.test_docs())
    samples = read_jsonl(out / "samples.jsonl")
    assert [d["id"] for d in docs] == [s["id"] for s in samples]
    assert task.doc_to_text(docs[0]) == "\n\n".join(m["content"] for m in samples[0]["input"])
    assert task.process_results(docs[0], [reply(docs[0]["target"])]) == {"qtc_score": 1.0}
    assert task.process_results(docs[0], ["Not answerable."]) == {"qtc_score": 0.0}


@pytest.mark.parametrize("argv, message", [
    (["--to", "csv", "OUT"], "--to 'csv': expected one of inspect, lm-eval, hf"),
    (["--to", "hf", "OUT", "--context", "mosaic"], "--context 'mosaic': expected full, evidence, none"),
    (["--to", "hf", "OUT", "--context", "budget:5"], "--context budget:5: an empty crafter log already takes"),
])
def test_bad_flags_are_one_line(qa, crafter_trace_dir, tmp_path, capsys, argv, message):
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main(["export", str(qa), "--traces", str(crafter_trace_dir), *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_missing_files_are_one_line(qa, crafter_trace_dir, tmp_path, capsys):
    assert main(["export", str(tmp_path / "none.jsonl"), "--traces", str(crafter_trace_dir),
                 "--to", "hf", str(tmp_path / "out")]) == 2
    assert main(["export", str(qa), "--traces", str(tmp_path / "no-traces"), "--to", "hf", str(tmp_path / "out")]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and "no such QA file" in errors[0] and "no-traces" in errors[1]


# A QA file's name and a task's name are data: written into task.py, the YAML and utils.py, they must
# stay literals, whatever they hold (quotes that close a docstring, a newline and YAML keys, the line
# separators YAML and str.splitlines break at, a Python keyword).
HOSTILE_QA_NAMES = ("'''\"\"\"\nimport os; os.system('x')\ninclude: evil.yaml\ndataset_path: x\u2028task: y"
                    "\u2029z\u0085w.jsonl", "class.jsonl")


def exported_files(out, target: str) -> dict:
    """What the harness would read first, parsed without running anything: task.py and utils.py as Python
    syntax trees, the task YAML as YAML (lm-eval's `!function` tag read as its text)."""
    import ast

    import yaml

    class TaskLoader(yaml.SafeLoader):
        pass

    TaskLoader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))
    if target == "inspect":
        return {"task.py": ast.parse((out / "task.py").read_text(encoding="utf-8"))}
    (task_yaml,) = out.glob("*.yaml")
    return {"utils.py": ast.parse((out / "utils.py").read_text(encoding="utf-8")),
            "yaml": yaml.load(task_yaml.read_text(encoding="utf-8"), Loader=TaskLoader)}


@pytest.mark.parametrize("target", ["inspect", "lm-eval"])
@pytest.mark.parametrize("qa_name", HOSTILE_QA_NAMES, ids=["quotes-newlines-yaml-keys-separators", "keyword"])
def test_hostile_names_give_task_files_their_tools_load_as_data(qa, crafter_trace_dir, tmp_path, target, qa_name):
    import ast

    hostile = tmp_path / qa_name
    hostile.write_bytes(qa.read_bytes())
    out = tmp_path / "out"
    assert export(hostile, crafter_trace_dir, target, out) == 0
    files = exported_files(out, target)
    if target == "inspect":
        module = files["task.py"]
        (function,) = [node for node in module.body if isinstance(node, ast.FunctionDef)
                       and any(isinstance(d, ast.Name) and d.id == "task" for d in node.decorator_list)]
        assert function.name == ("qtc_class" if qa_name == "class.jsonl" else "import_os_os")
        (qa_file,) = [node.value for node in module.body if isinstance(node, ast.Assign)
                      and node.targets[0].id == "QA_FILE"]
        assert ast.literal_eval(qa_file) == qa_name  # the name, as a literal and nothing else
        assert not [node for node in ast.walk(module) if isinstance(node, ast.Import) and node.names[0].name == "os"]
    else:
        task = files["yaml"]
        assert set(task) == {"task", "custom_dataset", "test_split", "output_type", "doc_to_text", "doc_to_target",
                             "process_results", "generation_kwargs", "metric_list", "metadata"}
        assert task["task"] == ("qtc_class" if qa_name == "class.jsonl" else "import_os_os")
        # utils.py reads the samples as JSONL: one record a line, whatever their text holds.
        samples = (out / "samples.jsonl").read_text(encoding="utf-8")
        assert len([json.loads(line) for line in samples.split("\n") if line.strip()]) == len(read_jsonl(qa))
        assert samples.splitlines() == samples.split("\n")[:-1]


def test_a_keyword_name_gives_a_task_named_apart(qa, crafter_trace_dir, tmp_path):
    import ast

    assert export(qa, crafter_trace_dir, "inspect", tmp_path / "out", "--name", "class") == 0
    module = ast.parse((tmp_path / "out" / "task.py").read_text(encoding="utf-8"))
    assert "qtc_class" in [node.name for node in module.body if isinstance(node, ast.FunctionDef)]
