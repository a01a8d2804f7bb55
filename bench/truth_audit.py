"""Ground-truth audit (issue 30's closing check): records episodes, generates QA sets, audits them.

    python bench/truth_audit.py --out DIR [--steps N] [--crafter-steps N] [--cap K] [--max-per-template M]

1. Records, into DIR/traces (resuming: episodes already there are kept), Jericho episodes of GAMES with
   four agents: the walkthrough, a random agent, a scripted one (the walkthrough with commands put in that
   the parser refuses or that change nothing, tests/support/refusals.py) and an LLM-driven one (an
   OpenAI-compatible stand-in on 127.0.0.1 that plays valid actions, now and then a command a model
   types: `help`, `hint`, a made-up verb, each with an LLM-like reason); and Crafter episodes with the
   scripted, random and LLM-driven agents. Steps per episode are few (the whole walkthrough of detective,
   which ends in its `<< Info >>` screen), games many.
2. Agreement with the reference evaluator (dsl/reference/): every template the reference interprets, at
   the whole episode and at each checkpoint, at most K bindings per episode and side drawn as `qtc
   generate` draws them; each SQL candidate is compared whole with the reference's for its binding
   (answer, accepted answers, lets, evidence, display names; options drawn only from the wrong values).
3. Independent checks of what a model is shown, on `qtc generate`'s QA sets (whole episodes, and the
   checkpoint set): no evidence step, step binding or "step N" of a question or an option after its
   horizon; on Jericho, no answerable question, answer or option naming a thing (item or room) whose
   name was neither printed by the horizon nor, for an item, typed (a word of it in a command); a room
   binding of an answerable question is one entered by the horizon. A false premise may name a thing
   of the game the episode never met (that is what makes it false): counted apart, not a disagreement.

Prints the figures: questions checked, disagreements by class, the first examples of each. Exit 1 if any
disagreement. On this shared 2-core machine under load: recording about 20 minutes of wall time (mostly
the random agents' valid-action finder), generating 1 to 10, the reference comparison 3 (--cap 20);
--reuse-qa audits QA sets already made.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the stub server, the refusal commands, the differential helpers

from support.ground_truth import _canonical, outcome, sql_candidates, unsupported_reason  # noqa: E402
from support.llm_stand_in import stand_in  # noqa: E402
from support.openai_stub_server import ChatCompletionServer  # noqa: E402
from support.refusals import JUNK  # noqa: E402

from qtc.cli import main as qtc  # noqa: E402
from qtc.dsl import types as T  # noqa: E402
from qtc.dsl.library import load_library  # noqa: E402
from qtc.dsl.reference.evaluator import Evaluator, Scope, read_tables  # noqa: E402
from qtc.dsl.reference.values import is_true  # noqa: E402
from qtc.runtime.trace.format import read_episode  # noqa: E402
from qtc.runtime.trace.store import open_store  # noqa: E402

GAMES = ("zork1", "detective", "balances", "karn", "905", "awaken", "moonlit", "pentari", "reverb", "sorcerer")
ROMS = ROOT.parent.parent / "shared" / "roms"
CHECKPOINTS = (10, 20)


def rom(game: str) -> Path:
    return next(ROMS.glob(f"{game}.z*"))


def record(out: Path, steps: int, random_steps: int, crafter_steps: int) -> None:
    from qtc.runtime.record.agents import LLMAgent, RandomAgent, WalkthroughAgent
    from qtc.runtime.record.crafter import CrafterSession
    from qtc.runtime.record.crafter_agent import ScriptedCrafterAgent
    from qtc.runtime.record.episodes import record_episode
    from qtc.runtime.record.jericho import JerichoSession, resolve_seed
    from qtc.runtime.trace.format import episode_id
    from qtc.dsl import crafter_data as data

    out.mkdir(parents=True, exist_ok=True)
    os.chdir(out)  # the valid-action finder leaves save files (.qzl) in the working folder
    done = {path.stem for path in out.glob("*.jsonl")}
    with ChatCompletionServer(stand_in) as server:
        for game in GAMES:
            for agent in ("walkthrough", "scripted", "random", "llm"):
                seed = 1 if agent == "random" else None
                if episode_id(game, agent, resolve_seed(rom(game), seed)) in done:
                    continue
                session = JerichoSession(rom(game), seed, agent, record_valid_actions=agent == "random")
                started = time.time()
                walkthrough = session.env.get_walkthrough()
                limit = {"walkthrough": len(walkthrough) if game == "detective" else steps,
                         "random": random_steps}.get(agent, steps)
                player = {"walkthrough": lambda: WalkthroughAgent(walkthrough),
                          "scripted": lambda: WalkthroughAgent(walkthrough[:4] + JUNK + walkthrough[4:]),
                          "random": lambda: RandomAgent(1),
                          "llm": lambda: LLMAgent(server.url, "stub", "jericho")}[agent]()
                record_episode(session, player, out, limit)
                print(f"recorded {session.episode_id} in {time.time() - started:.0f} s", flush=True)
        for agent, seed in (("scripted", 3), ("random", 4), ("llm", 5)):
            if episode_id("crafter", agent, seed) in done:
                continue
            session = CrafterSession(seed, agent, crafter_steps)
            player = {"scripted": lambda: ScriptedCrafterAgent(seed), "random": lambda: RandomAgent(seed, data.ACTIONS),
                      "llm": lambda: LLMAgent(server.url, "stub", "crafter", actions=tuple(data.ACTIONS))}[agent]()
            record_episode(session, player, out, crafter_steps)
            print(f"recorded {session.episode_id}", flush=True)


def _within(evaluator: Evaluator, episode, params: dict, domains: dict) -> bool:
    """Whether a binding is one of the reference's: each value in its domain (`domains` replaces some: a
    false premise's), no kind counted once by construction, each parameter's condition true."""
    bound: dict = {}
    for param in evaluator.template.params:
        value = params[param.name]
        values = evaluator.domain(domains.get(param.name, param.domain), Scope(episode, bound, {}))
        if _canonical(value) not in {_canonical(v) for v in values} or value in evaluator.degenerate.get(param.name, ()):
            return False
        bound[param.name] = value
        if param.condition is not None and not is_true(evaluator.value(param.condition, Scope(episode, bound, {}))):
            return False
    return True


def _distractor_pool(evaluator: Evaluator, episode, right: list) -> set[str]:
    """The texts an option may show: the choices domain less the right answers and unintroduced names."""
    unintroduced = evaluator._unintroduced(episode)
    return {text for value, text in evaluator.choice_values(episode)
            if value not in right and not (isinstance(value, (str, int)) and value in unintroduced)}


def reference_agreement(traces: Path, cap: int, findings: dict, counts: Counter) -> None:
    """Each SQL candidate (at most `cap` per episode and side, drawn as `qtc generate` draws them) against
    the reference's for its binding: an answerable one has the reference's answer, accepted answers, lets,
    evidence and display names, its options drawn from the reference's wrong values; a false premise is a
    binding of its adversarial domain whose premise the reference finds false."""
    con = open_store(str(traces))
    tables = read_tables(con)
    for compiled in load_library([ROOT / "templates"]).compiled:
        if unsupported_reason(compiled):
            counts["templates the reference cannot interpret"] += 1
            continue
        for horizon in (None, *CHECKPOINTS):
            try:
                got = sql_candidates(con, compiled, horizon, cap=cap, premise=True)
            except Exception as error:  # an engine error is itself a finding
                findings["engine error"].append(f"{compiled.id} @{horizon}: {str(error)[:200]}")
                continue
            evaluator = Evaluator(compiled.checked, tables, horizon)
            print(f"  {compiled.id} @{horizon}: {len(got)} candidates; disagreements so far "
                  f"{sum(map(len, findings.values()))}", flush=True)
            episodes = {e.episode["episode_id"]: e for e in evaluator.episodes}
            for candidate in got:
                counts["candidates compared with the reference"] += 1
                episode = episodes[candidate.episode_id]
                where = f"{compiled.id} @{horizon} {candidate.episode_id} {candidate.params}"
                if candidate.adversarial:
                    if not any(_within(evaluator, episode, candidate.params, {a.param: a.domain})
                               and not (evaluator.premise_holds(episode, candidate.params, a) if a.premise is not None
                                        else _within(evaluator, episode, candidate.params, {}))
                               for a in evaluator.template.adversarials):
                        findings["false premise the reference finds true or out of its domain"].append(where)
                    continue
                expected = (evaluator.instance(episode, candidate.params)
                            if _within(evaluator, episode, candidate.params, {}) else None)
                if expected is None:
                    findings["SQL asks what the reference does not"].append(where)
                    continue
                for field, value in outcome(candidate).items():
                    if value != outcome(expected)[field]:
                        findings[f"{field} differs from the reference"].append(
                            f"{where}: SQL {value!r}, reference {outcome(expected)[field]!r}")
                if candidate.distractors is not None:
                    pool = _distractor_pool(evaluator, episode, [expected.answer, *(expected.accepted or [])])
                    if not set(candidate.distractors) <= pool:
                        findings["option that is right or not drawable"].append(
                            f"{where}: {set(candidate.distractors) - pool}")
    con.close()


def _plain(text: str) -> str:
    return " ".join(text.lower().split())


def _room_title(name: str) -> str:
    return re.sub(r" \(\d+\)$", "", name)


class Seen:
    """What one Jericho episode printed and typed up to each step, and the rooms it entered."""

    def __init__(self, path: Path):
        episode = read_episode(path)
        self.steps = episode.steps
        self.initial = episode.header["initial"]
        self.rooms = {r["room"]: r["display_name"] for r in episode.header["rooms"] + episode.header["unvisited_rooms"]}

    def printed(self, horizon: int) -> str:
        return _plain(" ".join([self.initial["observation"]] + [s["obs_after"] for s in self.steps[:horizon]]))

    def typed(self, horizon: int) -> set[str]:
        return {w for s in self.steps[:horizon] for w in re.findall(r"[a-z0-9]+", s["action"].lower())}

    def entered(self, horizon: int) -> set[int]:
        return {self.initial["room"]} | {s["room_after"] for s in self.steps[:horizon]}

    def named(self, name: str, horizon: int, room: bool) -> bool:
        if _plain(_room_title(name) if room else name) in self.printed(horizon):
            return True
        return not room and bool(set(re.findall(r"[a-z0-9]+", name.lower())) & self.typed(horizon))


def qa_checks(qa: Path, traces: Path, findings: dict, counts: Counter) -> None:
    """Horizons and names of what a model is shown, read from the QA set and the trace files alone."""
    compiled = {c.id: c for c in load_library([ROOT / "templates"]).compiled}
    episodes = {path.stem: path for path in traces.glob("*.jsonl")}
    seen: dict[str, Seen] = {}
    for line in qa.read_text().splitlines():
        q = json.loads(line)
        counts[f"questions read ({qa.stem})"] += 1
        horizon, checked = q["horizon"], compiled[q["template_id"]].checked
        where = f"{q['template_id']} @{horizon} {q['episode_id']} {q['bindings']}"
        late = [s for s in q["evidence"] if s > horizon]
        late += [int(v) for p, v in q["bindings"].items() if checked.param_types.get(p) == T.STEP and int(v) > horizon]
        late += [int(n) for text in [q["question"], *q["options"]] for n in re.findall(r"\bsteps? (\d+)", text)
                 if int(n) > horizon]
        if late:
            findings["step after the horizon"].append(f"{where}: {late}")
        if q["env"] != "jericho":
            continue
        trace = seen.setdefault(q["episode_id"], Seen(episodes[q["episode_id"]]))
        names = [(trace.rooms.get(int(v), v), True) if checked.param_types.get(p) == T.ROOM else (v, False)
                 for p, v in q["bindings"].items() if checked.param_types.get(p) in (T.ROOM, T.ITEM)]
        if q["answer_type"] in ("item", "location"):
            room = q["answer_type"] == "location"
            names += [(o, room) for o in [*q["options"], *([] if q["adversarial"] else [q["answer"]])]
                      if o != "none of these"]
        unnamed = [name for name, room in names if not trace.named(name, horizon, room)]
        rooms = [int(v) for p, v in q["bindings"].items() if checked.param_types.get(p) == T.ROOM]
        if q["adversarial"]:
            counts["false premises naming a thing of the game the episode never printed"] += bool(unnamed)
            continue
        counts["answerable Jericho questions checked for names"] += 1
        if unnamed:
            findings["names a thing never printed nor typed by the horizon"].append(f"{where}: {unnamed}")
        if any(r not in trace.entered(horizon) for r in rooms):
            findings["room binding not entered by the horizon"].append(where)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=30, help="steps per Jericho episode")
    parser.add_argument("--random-steps", type=int, default=20,
                        help="steps per random Jericho episode (each runs the valid-action finder)")
    parser.add_argument("--crafter-steps", type=int, default=150)
    parser.add_argument("--cap", type=int, default=20, help="bindings per episode and side compared with the reference")
    parser.add_argument("--max-per-template", type=int, default=40)
    parser.add_argument("--reuse-qa", action="store_true", help="audit the QA sets already in --out")
    args = parser.parse_args()
    args.out = args.out.resolve()
    traces = args.out / "traces"
    started = time.time()
    record(traces, args.steps, args.random_steps, args.crafter_steps)
    print(f"recorded in {time.time() - started:.0f} s", flush=True)
    findings: dict[str, list[str]] = defaultdict(list)
    counts: Counter = Counter()
    for name, horizon in (("whole", []), ("checkpoints", ["--horizon", ",".join(map(str, CHECKPOINTS))])):
        qa = args.out / f"qa-{name}.jsonl"
        if not (args.reuse_qa and qa.exists()):
            qtc(["generate", "--traces", str(traces), "--out", str(qa), "--max-per-template", str(args.max_per_template),
                 "--force", "--quiet", *horizon])
        qa_checks(qa, traces, findings, counts)
    print(f"generated and checked in {time.time() - started:.0f} s", flush=True)
    reference_agreement(traces, args.cap, findings, counts)
    print(f"compared with the reference in {time.time() - started:.0f} s", flush=True)
    for what, n in sorted(counts.items()):
        print(f"{what}: {n}")
    for what, examples in sorted(findings.items()):
        print(f"DISAGREEMENT {what}: {len(examples)}")
        for example in examples[:8]:
            print(f"    {example}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
