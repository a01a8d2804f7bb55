"""Differential tests: on random episodes of each game, every template of templates/ asks the same
questions through its compiled SQL as through the reference evaluator (R13): the same candidates
(episode, adversarial flag, bindings), the same answers, accepted answers, evidence and display names,
with and without a horizon; with every binding, and sampled in both orders (a cap on bindings per
episode: then each candidate the SQL keeps must be one of the reference's, with the same answer).

One example (a few episodes, loaded once) is checked against every template of its env, because
compiling and planning a template's SQL is most of the cost. Once a template disagrees, shrinking
checks only the templates that disagreed, so a small counterexample is found quickly.

Templates that call a function the reference evaluator does not interpret are skipped, each with its
reason (`pytest -rs` lists them); so are those whose disagreement is a known bug, each shown by a
strict xfail test with a small trace (kept as a regression test in tests/property/test_regressions.py once fixed).
"""

from __future__ import annotations

import pytest
from support.ground_truth import (checked_templates, differences, known_bug, library,
                                  reference_candidates, sql_candidates, store_of, unsupported_reason)
from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples
from support.strategies import episode_sets, horizons, seeded_episode

ENVS = ("jericho", "crafter")
ASKED: dict[str, set[bool]] = {}  # template id -> the kinds of candidate (adversarial or not) seen so far
# Every binding, and three per episode in each sampling order (dsl/ir/sample.py).
SAMPLINGS = ((None, "domain"), (3, "domain"), (3, "compat"))
# What shrinking checks, once something failed, per env and sampling.
FAILING: dict[tuple, set[str]] = {(env, *sampling): set() for env in ENVS for sampling in SAMPLINGS}
# Seeds of fixed episodes per env that, between them, make every template ask something.
RICH_SEEDS = {"jericho": (7,), "crafter": (5, 6)}


@pytest.mark.parametrize("template_id", [c.id for c in library()])
def test_the_reference_evaluator_interprets_the_template(template_id):
    compiled = next(c for c in library() if c.id == template_id)
    reason = unsupported_reason(compiled) or known_bug(compiled)
    if reason:
        pytest.skip(reason)


# The reference's candidates on the rich episodes, by env and template: the same whatever the sampling.
RICH_EXPECTED: dict[tuple[str, str], list] = {}


def disagreements(env: str, episodes, horizon: int | None, sampling: tuple, kept: dict | None = None) -> list[str]:
    """Every template of `env` run both ways on `episodes`; what the SQL gets wrong, by template. `kept`
    keeps the reference's candidates by (env, template) for the next sampling of the same episodes."""
    store = store_of(episodes)
    report = []
    failing = FAILING[(env, *sampling)]
    cap, order = sampling
    for compiled in checked_templates(env):
        if failing and compiled.id not in failing:
            continue
        if kept is None:
            expected = reference_candidates(store, compiled, horizon)
        else:
            if (env, compiled.id) not in kept:
                kept[(env, compiled.id)] = reference_candidates(store, compiled, horizon)
            expected = kept[(env, compiled.id)]
        ASKED.setdefault(compiled.id, set()).update(c.adversarial for c in expected)
        problems = differences(sql_candidates(store.con, compiled, horizon, cap, order), expected,
                               sampled=cap is not None)
        if problems:
            failing.add(compiled.id)
            report += [f"{compiled.id} (cap {cap}, {order} order), horizon {horizon}:", *problems]
    return report


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("env", ENVS)
def test_compiled_sql_agrees_with_the_reference_on_rich_episodes(env, sampling):
    report = disagreements(env, [seeded_episode(env, seed) for seed in RICH_SEEDS[env]], None, sampling,
                           RICH_EXPECTED)
    assert not report, "\n".join(report)


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("env", ENVS)
@examples(2)
@given(data=st.data())
def test_compiled_sql_agrees_with_the_reference_evaluator(env, sampling, data):
    episodes = data.draw(episode_sets(env), label="episodes")
    horizon = data.draw(horizons(episodes), label="horizon")
    report = disagreements(env, episodes, horizon, sampling)
    assert not report, "\n".join(report)


def test_the_random_episodes_reach_every_template():
    """Runs after the test above: every template was asked something on the drawn episodes (and its
    false premises, if it has any), so no agreement above is vacuous."""
    checked = [c for env in ENVS for c in checked_templates(env)]
    if any(c.id not in ASKED for c in checked):
        pytest.skip("runs after the differential test of both envs")
    never = sorted(c.id for c in checked if False not in ASKED[c.id])
    never_false = sorted(c.id for c in checked if c.checked.template.adversarials and True not in ASKED[c.id])
    assert not never, f"never answerable on the drawn episodes: {never}"
    assert not never_false, f"never a false premise on the drawn episodes: {never_false}"
