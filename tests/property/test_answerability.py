"""Answerability, on random episodes under a random horizon, for every template the reference
evaluator checks (the compiled SQL's candidates are what `qtc generate` samples from):

- an answerable question has an answer and evidence, within the horizon; a false premise has neither;
- its answer is recomputed, with the same bindings, from the trace cut at its last evidence step, the
  last step its question names, or the last step at which a thing it names was introduced (so nothing
  after them, and nothing beyond the horizon, decides it); a step answer is one of its evidence steps;
- the trace truncated to the horizon, loaded as a shorter recording, asks exactly the same questions
  (every precondition that held under the horizon holds again on it, and no other);
- a false premise is false: its value is not in the parameter's own domain within the horizon, and
  the same template instantiated with that value (and the parameters declared before it, which its
  domain may read; every other binding) asks nothing answerable.
"""

from __future__ import annotations

import pytest
from support.ground_truth import checked_templates, differences, sql_candidates, store_of
from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples
from support.strategies import episode_sets, truncated

from qtc.dsl import ast as A
from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.dsl.reference.evaluator import Evaluator, Scope

ENVS = ("jericho", "crafter")


def _draw(data, env):
    """Episodes and a horizon inside the longest one, which shrinks toward its end (so that even the
    simplest example cuts a few steps off a trace that has some)."""
    episodes = data.draw(episode_sets(env, min_steps=8), label="episodes")
    longest = max(len(e.steps) for e in episodes)
    horizon = data.draw(st.integers(1, longest - 1).map(lambda back: longest - back), label="horizon")
    return episodes, horizon


def _problems_of(compiled, store, horizon) -> list[str]:
    evaluator = Evaluator(compiled.checked, store.tables, horizon)
    episodes = {e.episode["episode_id"]: e for e in evaluator.episodes}
    cuts: dict[int, Evaluator] = {}
    introduced = {(row["episode_id"], row["item"]): row["step"]
                  for row in store.tables[schema.JERICHO_INTRODUCED_ITEMS.sql_name]}
    premises_checked: set = set()
    problems = []
    for candidate in sql_candidates(store.con, compiled, horizon):
        episode = episodes[candidate.episode_id]
        where = f"{compiled.id} {candidate.episode_id} {candidate.params}"
        if candidate.adversarial:
            if candidate.answer is not None or candidate.evidence:
                problems.append(f"{where}: a false premise with an answer or evidence")
            # A premise is one value of one parameter: checked once, whatever the other bindings.
            premise = (candidate.episode_id, repr([candidate.params[a.param]
                                                   for a in compiled.checked.template.adversarials]))
            if premise not in premises_checked:
                premises_checked.add(premise)
                problems += _premise_problems(compiled, evaluator, episode, candidate.params, where)
            continue
        last = episode.episode["n_steps"]
        if candidate.answer is None or not candidate.evidence:
            problems.append(f"{where}: answerable without an answer or evidence: {candidate}")
            continue
        # Step 0 is the start state (docs/qa-format.md): "had you been in B" rests on it when B is where you began.
        if candidate.evidence != sorted(set(candidate.evidence)) or not 0 <= candidate.evidence[0] <= \
                candidate.evidence[-1] <= last:
            problems.append(f"{where}: evidence {candidate.evidence} outside steps 0..{last}")
            continue
        if compiled.answer_type == "step" and candidate.answer not in candidate.evidence:
            problems.append(f"{where}: step answer {candidate.answer} is not an evidence step {candidate.evidence}")
        named = [v for p, v in candidate.params.items() if compiled.params[p] == T.STEP]
        # A thing the question names is named only once introduced (CONVENTIONS.md, Items): that step too.
        said = [v for value in (*candidate.params.values(), *candidate.lets.values(), candidate.answer)
                for v in (value if isinstance(value, (list, set)) else [value]) if isinstance(v, str)]
        cut_at = max(candidate.evidence + named + [introduced[candidate.episode_id, v] for v in said
                                                   if (candidate.episode_id, v) in introduced])
        if cut_at not in cuts:
            cuts[cut_at] = Evaluator(compiled.checked, store.tables, cut_at)
        cut = cuts[cut_at]
        cut_episode = next(e for e in cut.episodes if e.episode["episode_id"] == candidate.episode_id)
        # Rooms sharing a title are numbered as at the question's horizon (CONVENTIONS.md, Horizon): on the
        # shorter trace the same rooms may bear other names, so the binding and answer name them as it does.
        renamed = _renamed_rooms(episode, cut_episode)
        again = cut.instance(cut_episode, {p: renamed.get(v, v) if isinstance(v, str) else v
                                           for p, v in candidate.params.items()})
        answer = renamed.get(candidate.answer, candidate.answer) if isinstance(candidate.answer, str) \
            else candidate.answer
        if again is None or again.answer != answer:
            problems.append(f"{where}: answer {candidate.answer!r}, but on the trace cut at step {cut_at} "
                            f"(its last evidence or named step): {again and again.answer!r}")
    return problems


def _renamed_rooms(episode, cut_episode) -> dict[str, str]:
    """Each room's name at the horizon -> its name on the trace cut shorter, where they differ."""
    at_cut = {r["room"]: r["display_name"] for r in cut_episode.tables.get("rooms", [])}
    return {r["display_name"]: at_cut[r["room"]] for r in episode.tables.get("rooms", [])
            if r["room"] in at_cut and at_cut[r["room"]] != r["display_name"]}


def _premise_problems(compiled, evaluator, episode, params, where) -> list[str]:
    template = compiled.checked.template
    problems = []
    for adversarial in template.adversarials:
        param = next(p for p in template.params if p.name == adversarial.param)
        earlier = {p.name: params[p.name] for p in template.params[:template.params.index(param)]}
        value = params[param.name]
        # A clause without a premise draws values outside the parameter's own domain; a value inside it was
        # drawn by another clause. A stated premise is about the binding (a material seen, yet out of
        # reach): its values may lie in the domain, and the premise is what must fail.
        if adversarial.premise is None and value in evaluator.domain(param.domain, Scope(episode, earlier, {})):
            continue
        if adversarial.premise is not None:
            # A premise stated as a condition is about this binding: where it holds, generate drops the
            # candidate; where it does not, this very question must not be answerable.
            if not evaluator.premise_holds(episode, params, adversarial) and evaluator.instance(episode, params):
                problems.append(f"{where}: the premise of {param.name}={value!r} is false, yet the question is "
                                f"answerable")
            return problems
        asked = _answerable_with(evaluator, episode, param, value, earlier)
        if asked:
            problems.append(f"{where}: false premise {param.name}={value!r}, yet answerable with {asked}")
        return problems
    return [f"{where}: the value {params} occurs in its parameter's domain within the horizon"]


def _answerable_with(evaluator, episode, param, value, earlier: dict) -> dict | None:
    """A binding, with `param` set to `value` and the parameters declared before it as `earlier` (its
    domain may read them: a subject is a false premise for one kind of event, not for every kind),
    whose question is answerable; None if there is none."""
    def only(v):
        return A.ListLiteral(param.span, [A.Literal(param.span, v)])
    fixed = {name: only(v) for name, v in {**earlier, param.name: value}.items()}
    return next((b for b in evaluator.bindings(episode, fixed) if evaluator.instance(episode, b)), None)


@pytest.mark.parametrize("env", ENVS)
@examples(2)
@given(data=st.data())
def test_questions_rest_on_their_evidence_and_premises_are_false(env, data):
    episodes, horizon = _draw(data, env)
    store = store_of(episodes)
    problems = [p for compiled in checked_templates(env) for p in _problems_of(compiled, store, horizon)]
    assert not problems, f"horizon {horizon}:\n" + "\n".join(problems[:8])


@pytest.mark.parametrize("env", ENVS)
@examples(1)
@given(data=st.data())
def test_a_horizon_asks_what_the_truncated_recording_asks(env, data):
    episodes, horizon = _draw(data, env)
    full, cut = store_of(episodes), store_of([truncated(e, horizon) for e in episodes])
    report = []
    for compiled in checked_templates(env):
        problems = differences(sql_candidates(full.con, compiled, horizon), sql_candidates(cut.con, compiled, None))
        report += [f"{compiled.id} (left: under the horizon {horizon}; right: truncated):", *problems] if problems else []
    assert not report, "\n".join(report)
