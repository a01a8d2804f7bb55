"""Metamorphic tests: changes to the traces that must change the questions in a known way, or not at all.

- Renaming an item throughout a Jericho trace (inventories, commands, observations, vocabulary)
  renames it in every binding and answer, and changes nothing else (first on a fixed rich episode
  that holds every item, then on drawn ones).
- Replacing every step beyond the horizon by other steps, and loading the files in another order,
  changes nothing asked under the horizon.
"""

from __future__ import annotations

import json

import pytest
from support.ground_truth import checked_templates, differences, sql_candidates, store_of, stored
from hypothesis import given
from hypothesis import strategies as st
from support.hypothesis_profiles import examples
from support.strategies import EPISODES, ITEMS, REASON_WORDS, TraceEpisode, jericho_episodes, seeded_episode

from qtc.dsl import types as T
from qtc.dsl.reference.evaluator import Candidate

RENAMED = " ii"  # a suffix keeps every order between item names: no name is a prefix of another


def _renamed(value, old: str):
    """`value` with the item name `old` renamed wherever it occurs in a string."""
    return json.loads(json.dumps(value).replace(old, old + RENAMED))


def _renamed_candidate(candidate: Candidate, old: str, compiled) -> Candidate:
    params = {name: value if compiled.params[name] == T.KEYWORD else _renamed(value, old)
              for name, value in candidate.params.items()}
    return Candidate(candidate.episode_id, candidate.adversarial, params, _renamed(candidate.lets, old),
                     _renamed(candidate.answer, old), _renamed(candidate.accepted, old), candidate.evidence,
                     _renamed(candidate.displays, old))


@examples(1)
@given(episode=st.just(seeded_episode("jericho", 3)) | jericho_episodes(min_steps=8),
       old=st.sampled_from([i for i in ITEMS if i not in REASON_WORDS]))
def test_renaming_an_item_renames_it_in_the_questions(episode: TraceEpisode, old: str):
    renamed = TraceEpisode(_renamed(episode.header, old), _renamed(episode.steps, old), episode.summary)
    before, after = store_of([episode]), store_of([renamed])
    report = []
    for compiled in checked_templates("jericho"):
        expected = [_renamed_candidate(c, old, compiled) for c in sql_candidates(before.con, compiled, None)]
        problems = differences(sql_candidates(after.con, compiled, None), expected)
        report += [f"{compiled.id} (left: renamed trace; right: renamed questions):", *problems] if problems else []
    assert not report, "\n".join(report)


@st.composite
def continued_elsewhere(draw, env: str):
    """Two episodes, a horizon inside the first, and the same episodes with every step after the
    horizon replaced by other drawn steps."""
    first = draw(EPISODES[env](seed=0, min_steps=8, max_steps=30))
    second = draw(EPISODES[env](seed=1, min_steps=0, max_steps=8))
    horizon = draw(st.integers(1, len(first.steps) - 1).map(lambda back: len(first.steps) - back))
    other = draw(EPISODES[env](seed=0, min_steps=len(first.steps), max_steps=len(first.steps) + 10))
    return [first, second], horizon, [_continued(first, other, horizon), second]


def _continued(episode: TraceEpisode, other: TraceEpisode, horizon: int) -> TraceEpisode:
    """`episode` up to `horizon`, then `other`'s later steps: a Jericho trace keeps its own rooms;
    Crafter's later steps are replayed from the state they were drawn in, so they need not follow on."""
    steps = episode.steps[:horizon] + other.steps[horizon:]
    header = {**episode.header, "n_steps": len(steps), "death_step": None, "death_cause": None,
              "ended_by": "step_limit"}
    if "rooms" in header:
        rooms = {r["room"]: r for r in episode.header["rooms"] + other.header["rooms"]}
        header["rooms"] = list(rooms.values())
    if header.get("unchanged_steps") is not None and other.header["unchanged_steps"] is not None:
        header["unchanged_steps"] = ([s for s in episode.header["unchanged_steps"] if s <= horizon]
                                     + [s for s in other.header["unchanged_steps"] if s > horizon])
    return TraceEpisode(header, steps, episode.summary[:horizon] + ["... then other steps"])


@pytest.mark.parametrize("env", list(EPISODES))
@examples(1)
@given(data=st.data())
def test_steps_beyond_the_horizon_and_file_order_change_nothing(env, data):
    episodes, horizon, changed = data.draw(continued_elsewhere(env))
    before = store_of(episodes)
    report = []
    with stored(changed, names=["z.jsonl", "a.jsonl"]) as after:  # the first episode now loads last
        for compiled in checked_templates(env):
            problems = differences(sql_candidates(after, compiled, horizon), sql_candidates(before.con, compiled, horizon))
            report += [f"{compiled.id}, horizon {horizon}:", *problems] if problems else []
    assert not report, "\n".join(report)
