"""Kills at random moments of the long commands (docs/testing.md, The deep fuzz run), not part of the
default suite: QTC_FUZZ=deep.

`qtc answer`, `qtc load --db`, `qtc generate` with `--jobs 1`, `--jobs 2` and `--ray` each run
QTC_FUZZ_KILLS times as the process a user starts (in a session of its own), stopped after a random
delay within their usual run time by SIGKILL, SIGTERM or Ctrl-C (SIGINT to the whole group, as a
terminal sends it). After each stop:

- no process of the command is left (its group is empty within a minute; Ray's workers belong to the
  cluster); a SIGTERM or Ctrl-C ends it with exit 130 (or 0 if it had finished) and no traceback;
- generate's QA set and summary are absent or the bytes of an uninterrupted run (written atomically);
  a database is empty or holds every episode as an uninterrupted load does (one transaction), and
  loading again completes it or refuses it in one line;
- the answers file holds only the right answer to each question (the stub server answers each
  question with a text of its own, so an answer filed under another question shows), never two, and
  the next run, itself killed at random, resumes it; once every question is answered, a new file starts.

A finished run (at the end, or when the delay outlasted it) must give the uninterrupted bytes with no
temporary file left. Findings are printed and appended to QTC_FUZZ_REPORT as JSON, as the deep run's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from support.answering import crafter_questions, prompt_text
from support.handmade_qa import write_jsonl
from support.openai_stub_server import AnswerPolicy, ChatCompletionServer
from support.strategies import seeded_episode, write_episodes

from qtc.runtime.trace.store import open_store

pytestmark = pytest.mark.skipif(os.environ.get("QTC_FUZZ") != "deep",
                                reason="the deep fuzz run: set QTC_FUZZ=deep (docs/testing.md)")

KILLS = int(os.environ.get("QTC_FUZZ_KILLS", "200"))
SEED = int(os.environ.get("QTC_FUZZ_SEED") or random.randrange(2**32))
# The child sets Ctrl-C's handling itself: a suite started in the background inherits SIGINT ignored.
QTC = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
       "from qtc.cli import main; sys.exit(main())")
SIGNALS = (signal.SIGKILL, signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGINT)
GONE_SECONDS = 60  # how long a stopped command's processes may take to end
QUESTIONS = 40


class Campaign:
    """One command killed KILLS times: what became of the runs, and the findings."""

    def __init__(self, name: str, argv, env: dict | None = None, own_group: bool = True):
        self.name, self.argv, self.env, self.own_group = name, argv, env or {}, own_group
        self.chance = random.Random(f"{SEED}-{name}")
        self.outcomes: dict[str, int] = {}
        self.findings: list[dict] = []
        self.seconds = 0.0
        self.kills = 0

    def count(self, what: str) -> None:
        self.outcomes[what] = self.outcomes.get(what, 0) + 1

    def finding(self, what: str, detail: str) -> None:
        self.findings.append({"finding": what, "detail": detail[-2000:]})
        print(f"{self.name}: finding: {what}: {detail[-2000:]}", file=sys.stderr, flush=True)

    def start(self, *extra: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", QTC, *self.argv(), *extra], env={**os.environ, **self.env},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def run_whole(self, *extra: str) -> tuple[int, str]:
        """A run left to finish; its duration sets the range of the random delays."""
        began = time.monotonic()
        process = self.start(*extra)
        _, stderr = process.communicate(timeout=1800)
        self.seconds = max(self.seconds, time.monotonic() - began)
        return process.returncode, stderr

    def run_killed(self, *extra: str) -> tuple[str, int | None, str]:
        """A run stopped after a random delay: (the signal's name, its exit code, stderr); a hang or a
        process left behind is a finding."""
        chosen = self.chance.choice(SIGNALS)
        process = self.start(*extra)
        time.sleep(self.chance.uniform(0, 1.1 * self.seconds))
        handled = True  # whether qtc's handler of the signal was in place when it was sent
        if process.poll() is None:
            handled = chosen == signal.SIGKILL or _catches(process.pid, chosen)
            if chosen == signal.SIGINT:
                os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches the whole group
            else:
                process.send_signal(chosen)
        try:
            _, stderr = process.communicate(timeout=max(120, 5 * self.seconds))
        except subprocess.TimeoutExpired:
            self.finding(f"hang after {chosen.name}", " ".join(self.argv()))
            os.killpg(process.pid, signal.SIGKILL)
            _, stderr = process.communicate()
        if self.own_group and not _group_ends(process.pid):
            self.finding(f"processes left after {chosen.name}", " ".join(self.argv()))
            os.killpg(process.pid, signal.SIGKILL)
        code = process.returncode
        if not handled and code == -chosen and not stderr:
            # Sent while Python started, before qtc set its handlers, or as it exited (Python restores
            # the default action then): the process ends by the signal, as any program does.
            self.count(f"{chosen.name}: exit {code}, before qtc's handlers or after")
        else:
            self.count(f"{chosen.name}: exit {code}")
        if "Traceback (most recent call last)" in stderr:
            self.finding(f"traceback after {chosen.name}", stderr)
        elif chosen != signal.SIGKILL and code not in (0, 130) and handled:
            self.finding(f"exit {code} after {chosen.name}", stderr)
        self.kills += 1
        if self.kills % 10 == 0:  # a long campaign shows how far it got
            print(f"{self.name}: {self.kills} kills: {self.outcomes}, {len(self.findings)} findings", file=sys.stderr,
                  flush=True)
        return chosen.name, code, stderr

    def report(self) -> dict:
        figures = {"run": f"kills: {self.name}", "seed": SEED, "kills": KILLS, "outcomes": self.outcomes,
                   "findings": self.findings}
        print(json.dumps(figures, indent=1))
        if os.environ.get("QTC_FUZZ_REPORT"):
            with open(os.environ["QTC_FUZZ_REPORT"], "a", encoding="utf-8") as out:
                out.write(json.dumps(figures) + "\n")
        return figures


def _catches(pid: int, chosen: signal.Signals) -> bool:
    """Whether process `pid` has a handler of the signal `chosen` (its SigCgt mask in Linux's /proc)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            caught = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return True  # ended meanwhile, or not Linux: judged by its exit code alone
    return bool(caught >> (chosen - 1) & 1)


def _group_ends(group: int) -> bool:
    deadline = time.monotonic() + GONE_SECONDS
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _temporary_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> list[Path]:
    """Drawn episodes of both games, enough that generating from them takes seconds."""
    return write_episodes([seeded_episode(env, seed, 30) for env in ("jericho", "crafter") for seed in range(4)],
                          tmp_path_factory.mktemp("kill_traces"))


# ---- generate ----

def _generate_campaign(name: str, traces: list[Path], folder: Path, *flags: str, env: dict | None = None,
                       own_group: bool = True) -> None:
    def arguments(out: Path, *extra: str) -> list[str]:
        return ["generate", "--traces", *map(str, traces), "--out", str(out), "--force", "--quiet",
                "--max-per-template", "4", *extra]

    out = folder / "qa.jsonl"
    campaign = Campaign(name, lambda: arguments(out, *flags), env, own_group)
    reference_folder = folder / "reference"
    reference_folder.mkdir()
    code, stderr = Campaign("reference", lambda: arguments(reference_folder / "qa.jsonl", "--jobs", "1")).run_whole()
    assert code == 0, stderr
    expected = {name: (reference_folder / name).read_bytes() for name in ("qa.jsonl", "qa.summary.json")}
    code, stderr = campaign.run_whole()
    assert code == 0, stderr
    for _ in range(KILLS):
        for path in (out, out.with_name("qa.summary.json")):
            path.unlink(missing_ok=True)
        campaign.run_killed()
        for file, data in expected.items():
            if (folder / file).exists() and (folder / file).read_bytes() != data:
                campaign.finding(f"{file} neither absent nor whole", str(folder / file))
    code, stderr = campaign.run_whole()
    if code != 0 or any((folder / f).read_bytes() != data for f, data in expected.items()):
        campaign.finding("the run after the kills differs from an uninterrupted one", stderr)
    if _temporary_files(folder):
        campaign.finding("temporary files left", " ".join(_temporary_files(folder)))
    assert not campaign.report()["findings"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_generate_killed_at_random_writes_all_or_nothing(traces, tmp_path, jobs):
    _generate_campaign(f"generate --jobs {jobs}", traces, tmp_path, "--jobs", jobs)


def test_generate_on_ray_killed_at_random_writes_all_or_nothing(traces, tmp_path, ray_cluster):
    _generate_campaign("generate --ray", traces, tmp_path, "--ray", ray_cluster.address, env=ray_cluster.env,
                       own_group=False)


# ---- load ----

def _contents(path: Path) -> dict[str, list] | None:
    """Every table's rows, sorted; None for a database without qtc's tables."""
    with duckdb.connect(str(path)) as con:
        tables = [name for (name,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        if "episodes" not in tables:
            return None
        return {table: con.execute(f'SELECT * FROM "{table}" ORDER BY ALL').fetchall() for table in tables}


def test_load_killed_at_random_loads_all_or_nothing(traces, tmp_path):
    db = tmp_path / "store.duckdb"
    campaign = Campaign("load --db", lambda: ["load", *map(str, traces), "--db", str(db)])
    code, stderr = campaign.run_whole()
    assert code == 0, stderr
    expected = _contents(db)
    for _ in range(KILLS):
        for leftover in tmp_path.glob("store.duckdb*"):
            leftover.unlink()
        campaign.run_killed()
        found = _contents(db) if db.exists() else None
        if found is not None and found != expected and any(found[t] for t in found):
            campaign.finding("a database neither empty nor whole", str(found.get("episodes")))
        again = subprocess.run([sys.executable, "-c", QTC, *campaign.argv()], capture_output=True, text=True,
                               timeout=600)
        if "Traceback" in again.stderr or again.returncode not in (0, 2) or \
                again.returncode == 2 and "is already loaded in this database" not in again.stderr:
            campaign.finding(f"loading again after a kill: exit {again.returncode}", again.stderr)
        elif _contents(db) != expected:
            campaign.finding("loading again after a kill gives another database", again.stderr)
    assert not campaign.report()["findings"]


# ---- answer ----

def test_answer_killed_at_random_loses_and_misfiles_nothing(tmp_path, crafter_trace_dir):
    con = open_store(crafter_trace_dir)
    records = [r | {"answer": f"answer to {r['id']}"} for r in crafter_questions(con, QUESTIONS)]
    con.close()
    qa = write_jsonl(tmp_path / "qa.jsonl", records)
    right = {r["id"]: r["answer"] for r in records}
    policy = AnswerPolicy({prompt_text(r): (r["answer"], "correct") for r in records}, delay=0.05)
    files = iter(range(10**6))
    out = tmp_path / f"answers-{next(files)}.jsonl"
    with ChatCompletionServer(policy) as server:
        campaign = Campaign("answer", lambda: ["answer", "--qa", str(qa), "--traces", str(crafter_trace_dir),
                                               "--model", "stub", "--base-url", server.url, "--out", str(out),
                                               "--batch", "3", "--quiet"])
        code, stderr = campaign.run_whole()
        assert code == 0, stderr
        for _ in range(KILLS):
            campaign.run_killed()
            answered = _check_answers(campaign, out, right)
            if answered == set(right):
                campaign.count("answers file completed")
                out = tmp_path / f"answers-{next(files)}.jsonl"
        code, stderr = campaign.run_whole()
        if code != 0 or _check_answers(campaign, out, right) != set(right):
            campaign.finding("the run after the kills left questions unanswered", stderr)
    assert not campaign.report()["findings"]


def _check_answers(campaign: Campaign, out: Path, right: dict[str, str]) -> set[str]:
    """The questions `out` answers; a wrong, doubled or unknown answer is a finding. A last line cut
    short by the kill is left for the next run to mend."""
    if not out.exists():
        return set()
    answered: set[str] = set()
    text = out.read_text(encoding="utf-8")
    for line in text.split("\n")[:-1]:
        record = json.loads(line)
        if record["error"] and not record["prediction"]:  # failed: asked again by the next run
            continue
        if record["id"] not in right or record["prediction"] != right[record["id"]]:
            campaign.finding("an answer filed under another question", line)
        if record["id"] in answered:
            campaign.finding("a question answered twice", line)
        answered.add(record["id"])
    return answered
