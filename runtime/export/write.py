"""Writing an export folder: the samples for inspect_ai, lm-eval or `datasets`, the task files that run
them and score with qtc, and a dataset card (README.md) with the features and the provenance.

- `inspect`: samples.jsonl (inspect_ai's Sample fields: input, target, id, metadata; Crafter's view grids
  fenced as code, since inspect's viewer reads messages as Markdown) and task.py, which reads it with
  inspect_ai's json_dataset and scores with `score_completion`, with accuracy per category too;
- `lm-eval`: samples.jsonl, a task YAML (generate_until) and utils.py beside it: the samples loaded from
  the YAML's own folder (the folder can move), the prompt, and the metric, which calls `score_completion`;
- `hf`: data/test.parquet, which `datasets.load_dataset(DIR)` reads as the card's `configs` say.

Every file is written atomically. Nothing of the data is written into code as code: the task's name is
an identifier made by `task_name` (never a keyword), and the QA file's name appears only as a literal
(Python's repr in task.py, JSON text in a YAML comment), so any name gives files their tools load.
"""

from __future__ import annotations

import hashlib
import json
import keyword
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from qtc.errors import InvalidOption
from qtc.files import atomic_path, jsonl_line, write_text_atomic
from qtc.runtime.qa.format import NOT_ANSWERABLE
from qtc.runtime.qa.questions import Question
from qtc.runtime.qa.write import summary_path
from qtc.runtime.trace.format import trace_files
from qtc.runtime.trace.store import DB_SUFFIX

from .samples import SAMPLE_FEATURES

TARGETS = ("inspect", "lm-eval", "hf")
SAMPLES_FILE = "samples.jsonl"
PARQUET_FILE = "data/test.parquet"
SPLIT = "test"
KNOWN_LIMITS = (
    "Contexts are text only: the screens of Crafter's visual setting (`--context frames`/`mosaic`) are not "
    "exported.",
    "Each question is asked alone (as `qtc answer --batch 1`); `qtc answer` batches questions that share a "
    "context, so its prompts list several questions.",
    "The prompt asks for a JSON reply; the scorer reads free text too, as `qtc answer` does.",
    f"False-premise questions are answered `{NOT_ANSWERABLE}`; in `evidence` mode they see an empty log, so "
    "their score there says nothing.",
    "Scoring needs qtc installed where the harness runs (the task files import it).",
    "Token counts (`context_tokens`) are estimates: characters over four, plus one.",
)


@dataclass(frozen=True)
class Provenance:
    qa: Path
    traces: tuple[Path, ...]  # as given: trace files, folders, or a .duckdb store
    context: str
    qtc_version: str


def task_name(text: str) -> str:
    """A name usable as a task's and a Python function's: lowercase letters, digits and underscores, not
    a Python keyword (`class`)."""
    name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")
    return name if name and not name[0].isdigit() and not keyword.iskeyword(name) else f"qtc_{name}"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _input_files(traces: tuple[Path, ...]) -> list[Path]:
    """The files the traces were read from: the store, or the complete trace files (as open_store reads them)."""
    stores = [path for path in traces if str(path).endswith(DB_SUFFIX)]
    complete, _ = trace_files([path for path in traces if not str(path).endswith(DB_SUFFIX)])
    return sorted(stores + complete)


# ---- the features, as the card's YAML and as Arrow types ----

def _yaml_feature(name: str | None, feature) -> dict:
    entry = {} if name is None else {"name": name}
    if isinstance(feature, str):
        return entry | {"dtype": feature}
    kind, sub = feature
    if kind == "struct":
        return entry | {"struct": [_yaml_feature(n, f) for n, f in sub]}
    inner = _yaml_feature(None, sub)
    return entry | {"list": inner["dtype"] if "dtype" in inner else inner["struct"]}


def arrow_type(feature):
    import pyarrow as pa

    if isinstance(feature, str):
        return {"string": pa.string(), "int64": pa.int64(), "bool": pa.bool_()}[feature]
    kind, sub = feature
    if kind == "struct":
        return pa.struct([(n, arrow_type(f)) for n, f in sub])
    return pa.list_(arrow_type(sub))


def _yaml(value, indent: int = 0) -> list[str]:
    """Block-style YAML of dicts, lists and scalars (strings as JSON, which YAML reads alike)."""
    pad = " " * indent
    lines = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines += [f"{pad}{key}:", *_yaml(item, indent + 2)]
            else:
                lines.append(f"{pad}{key}: {json.dumps(item)}")
    else:
        for item in value:
            nested = _yaml(item, indent + 2) if isinstance(item, (dict, list)) else [f"{pad}  {json.dumps(item)}"]
            lines.append(f"{pad}- {nested[0].lstrip()}")
            lines += nested[1:]
    return lines


# ---- the dataset card ----

def _table(title: str, counts: Counter) -> list[str]:
    return [f"| {title} | questions |", "|---|---|", *(f"| {k} | {n} |" for k, n in sorted(counts.items())), ""]


def dataset_card(questions: list[Question], provenance: Provenance, data_file: str, name: str) -> str:
    summary_file = summary_path(provenance.qa)
    summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.is_file() else None
    header = {
        "pretty_name": f"qtc {name}",
        "tags": ["qtc", "agent-memory", "question-answering"],
        "configs": [{"config_name": "default", "data_files": [{"split": SPLIT, "path": data_file}]}],
        "dataset_info": {"features": [_yaml_feature(n, f) for n, f in SAMPLE_FEATURES]},
    }
    categories = Counter("adversarial" if q.adversarial else q.category for q in questions)
    inputs = [(path, sha256(path)) for path in _input_files(provenance.traces)]
    lines = [
        "---", *_yaml(header), "---", "",
        f"# {name}", "",
        f"{len(questions)} questions about recorded game episodes, generated by qtc from question templates, each "
        f"with the context `qtc answer --context {provenance.context}` shows a model (`input`: the system and "
        f"user messages), its answer (`target`) and its question record (`metadata`; docs/qa-format.md of qtc). "
        f"Score a completion with `qtc.runtime.export.samples.score_completion(metadata, completion)`.", "",
        "## Provenance", "",
        f"- qtc version: {provenance.qtc_version}",
        f"- QA set: `{provenance.qa.name}` (SHA-256 `{sha256(provenance.qa)}`)",
        f"- context: `{provenance.context}`",
        f"- games: {', '.join(sorted({q.game for q in questions}))}", "",
        "Trace files (SHA-256):", "",
        *(f"- `{path.name}` `{digest}`" for path, digest in inputs), "",
        "Generation options (from the QA set's summary file):" if summary else
        "Generation options: unknown (the QA set has no summary file beside it).", "",
    ]
    if summary:
        # A set asked at several horizons has the options of each checkpoint's generation (docs/qa-format.md).
        options = summary.get("options") or {"horizons": summary.get("horizons"),
                                             "checkpoints": [c["options"] for c in summary.get("checkpoints", [])]}
        lines += ["```json", json.dumps(options, indent=2, sort_keys=True), "```", ""]
    lines += ["## Counts", "", *_table("category", categories),
              *_table("answer type", Counter(q.answer_type for q in questions)),
              "## Known limits", "", *(f"- {limit}" for limit in KNOWN_LIMITS), ""]
    return "\n".join(lines)


# ---- the task files ----

INSPECT_TASK = '''"""inspect_ai task: the questions of the QA set QA_FILE with their qtc contexts, scored by
qtc's scorer.

    inspect eval task.py --model PROVIDER/MODEL

Metrics: accuracy and its standard error overall, and accuracy per category (false premises as
`adversarial`), inspect's grouped metric over the samples' metadata.

A local OpenAI-compatible server (llama-cpp-python, vLLM, Ollama) is inspect's `openai-api` provider:
name the server's model after it and give the base URL and a key (any text, for a server that checks
none) in variables named after the service you call it, here LOCAL:

    export LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=none
    inspect eval task.py --model openai-api/local/gemma-3-270m

(or `--model openai/MODEL --model-base-url http://127.0.0.1:8000/v1` with OPENAI_API_KEY set).
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import Score, Target, accuracy, grouped, scorer, stderr
from inspect_ai.solver import TaskState, generate

from qtc.runtime.export.samples import score_completion

QA_FILE = {qa}
SAMPLES = Path(__file__).with_name("{samples}")
GROUP = "qtc_category"  # qtc score's category: a false premise is `adversarial`, apart from its template's


def samples():
    dataset = json_dataset(str(SAMPLES))
    for sample in dataset:
        sample.metadata[GROUP] = "adversarial" if sample.metadata["adversarial"] else sample.metadata["category"]
    return dataset


@scorer(metrics=[accuracy(), stderr(), grouped(accuracy(), GROUP, all=False)])
def qtc_score():
    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        return Score(value=score_completion(state.metadata, completion), answer=completion)

    return score


@task
def {name}():
    return Task(dataset=samples(), solver=generate(), scorer=qtc_score())
'''

LM_EVAL_TASK = '''# lm-eval task: the questions of the QA set {qa_json} with their qtc contexts, scored by qtc's
# scorer (utils.py).
#   lm_eval --include_path THIS_FOLDER --tasks {name} --model ...
task: "{name}"
custom_dataset: !function utils.load_samples
test_split: {split}
output_type: generate_until
doc_to_text: !function utils.doc_to_text
doc_to_target: target
process_results: !function utils.process_results
generation_kwargs:
  until: []
  max_gen_toks: {max_tokens}
  do_sample: false
  temperature: 0.0
metric_list:
  - metric: qtc_score
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
'''

LM_EVAL_UTILS = '''"""lm-eval hooks of the {name} task: the samples beside this file, the prompt, and qtc's scorer."""

import json
from pathlib import Path

from qtc.runtime.export.samples import score_completion

SAMPLES = Path(__file__).with_name("{samples}")


def load_samples(**kwargs):
    import datasets

    # JSONL lines end at "\\n" only (str.splitlines would also split at U+2028 and its kind).
    records = [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").split("\\n") if line.strip()]
    return datasets.DatasetDict({{"{split}": datasets.Dataset.from_list(records)}})


def doc_to_text(doc) -> str:
    """The system and user messages qtc sends, as one prompt."""
    return "\\n\\n".join(message["content"] for message in doc["input"])


def process_results(doc, results) -> dict:
    return {{"qtc_score": score_completion(doc["metadata"], results[0])}}
'''


def _jsonl(samples: list[dict]) -> str:
    return "".join(jsonl_line(sample) for sample in samples)


def _write_parquet(path: Path, samples: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(n, arrow_type(f)) for n, f in SAMPLE_FEATURES])
    with atomic_path(path) as temporary:
        pq.write_table(pa.Table.from_pylist(samples, schema=schema), temporary)


# A Crafter view grid in a log: its heading line, then its rows (docs/evaluation.md, What the model sees).
VIEW_GRID = re.compile(r"^(?P<indent> *)view:\n(?P<rows>(?:(?P=indent)  \S+\n?)+)", re.MULTILINE)


def fence_grids(text: str) -> str:
    """Crafter's view grids fenced as code, so that a viewer that reads messages as Markdown (inspect's)
    shows them as they are: `~~` is no strikethrough there, and leading spaces stay."""
    def fenced(match: re.Match) -> str:
        rows, fence = match["rows"], f"{match['indent']}```"  # a fence indented 4 spaces would be text
        return f"{match['indent']}view:\n{fence}\n{rows.rstrip(chr(10))}\n{fence}" + ("\n" if rows.endswith("\n") else "")
    return VIEW_GRID.sub(fenced, text)


def inspect_samples(samples: list[dict]) -> list[dict]:
    """The samples with the grids of their messages fenced, as inspect's viewer needs them."""
    return [sample | {"input": [m | {"content": fence_grids(m["content"])} for m in sample["input"]]}
            for sample in samples]


def check_target(target: str) -> None:
    if target not in TARGETS:
        raise InvalidOption("to", f"{target!r}: expected one of {', '.join(TARGETS)}")


def write_export(target: str, out: Path, samples: list[dict], questions: list[Question],
                 provenance: Provenance, name: str, max_tokens: int) -> list[Path]:
    """Write the export folder (for a target check_target accepts); the files written, the card last."""
    out = Path(out)
    files = {}
    if target == "hf":
        _write_parquet(out / PARQUET_FILE, samples)
        data_file = PARQUET_FILE
    else:
        files[SAMPLES_FILE] = _jsonl(inspect_samples(samples) if target == "inspect" else samples)
        data_file = SAMPLES_FILE
    # Text from outside qtc goes in as literals: Python's repr, and JSON (ASCII only, so one line) in YAML.
    values = {"qa": repr(provenance.qa.name), "qa_json": json.dumps(provenance.qa.name), "name": name,
              "samples": SAMPLES_FILE, "split": SPLIT, "max_tokens": max_tokens}
    if target == "inspect":
        files["task.py"] = INSPECT_TASK.format(**values)
    elif target == "lm-eval":
        files[f"{name}.yaml"] = LM_EVAL_TASK.format(**values)
        files["utils.py"] = LM_EVAL_UTILS.format(**values)
    files["README.md"] = dataset_card(questions, provenance, data_file, name)
    for file, text in files.items():
        write_text_atomic(out / file, text)
    return ([out / PARQUET_FILE] if target == "hf" else []) + [out / file for file in files]
