"""The standard templates on real recorded episodes (the session fixtures of conftest.py), each run as
`qtc generate` runs it: sampled, at most CAP bindings per episode and side, with the false-premise
check. (Every binding, unsampled, is compared with the reference evaluator on drawn episodes in
tests/property/test_reference_differential.py; on these episodes a few range templates have tens of
thousands of bindings.)"""

from qtc.dsl import ast as A
from qtc.dsl.compile import statement
from qtc.dsl.library import load_library
from qtc.runtime.trace.store import open_store
from support.paths import TEMPLATES
from support.textworld_keys import UNLOCKED

# Jericho and Crafter templates that ask nothing answerable on their fixtures, and why. Every other one must.
NOTHING_TO_ASK = {
    "crafter.death_cause": "the scripted agent lives through its 200 fixture steps",
    "jericho.reason_at": "the walkthrough agent gives no reasons",
    "jericho.keyword_in_reason_step": "the walkthrough agent gives no reasons",
    "jericho.keyword_count_reason": "the walkthrough agent gives no reasons",
    "jericho.after_keyword_action": "the walkthrough agent gives no reasons",
    "jericho.after_keyword_obs": "the walkthrough agent gives no reasons",
    "jericho.after_keyword_room": "the walkthrough agent gives no reasons",
    "jericho.after_keyword_score": "the walkthrough agent gives no reasons",
    "jericho.regain_delay": "nothing is gained twice in 30 walkthrough steps",
    "jericho.room_with_most_gains": "no room has more different items than every other in 30 walkthrough steps",
    "jericho.closer_of_two_rooms": "the walkthrough never returns: no two rooms are both reachable",
    "jericho.room_things_when_left": "in 30 walkthrough steps, no room left for the last time showed a thing "
                                     "the walkthrough did not take",
    "jericho.rejected_steps": "the parser refuses no walkthrough command (tests/runtime/trace/test_events.py has some)",
    "jericho.unchanged_steps": "every one of zork1's first 30 walkthrough commands changes the world "
                               "(tests/templates/test_effect_templates.py has some that do not)",
}
CAP = 50


def produced_rows(con, envs: tuple[str, ...]) -> dict[str, list[dict]]:
    """Each template of `envs` run as `qtc generate` runs it on the store `con`, its rows checked."""
    con.execute(f"SET VARIABLE qtc_max_candidates = {CAP}")
    try:
        produced = {}
        for compiled in load_library([TEMPLATES]).compiled:
            if compiled.env not in envs:
                continue
            relation = con.sql(statement(compiled, CAP, premise=True))
            rows = [dict(zip(relation.columns, row)) for row in relation.fetchall()]
            produced[compiled.id] = rows
            for row in rows:
                assert row["adversarial"] == (row["answer"] is None), (compiled.id, row)
                assert row["adversarial"] or row["evidence"], (compiled.id, row)
    finally:
        con.execute("RESET VARIABLE qtc_max_candidates")
    return produced


def silent(produced: dict[str, list[dict]]) -> set[str]:
    """The templates that asked nothing answerable."""
    return {t for t, rows in produced.items() if not any(not r["adversarial"] for r in rows)}


def test_every_template_runs_on_real_traces_and_answers_match_the_trace(trace_db):
    con = trace_db
    produced = produced_rows(con, ("jericho", "crafter", "any"))
    # Answers recomputed directly from the tables, for the simplest families.
    for env in ("crafter", "jericho"):
        actions = dict(((e, s), a) for e, s, a in con.sql(f"SELECT episode_id, step, action FROM {env}_steps").fetchall())
        rows = produced[f"{env}.action_at"]
        assert rows and all(actions[(r["episode_id"], r["p_t"])] == r["answer"] for r in rows)
    rooms = produced["jericho.room_before"]
    assert rooms and all(r["display_answer"] for r in rooms)
    assert silent(produced) <= set(NOTHING_TO_ASK), sorted(silent(produced) - set(NOTHING_TO_ASK))


def reads_reasons(template) -> bool:
    """Whether a template reads the agent's reasons (the column steps.reason)."""
    return any((isinstance(node, A.Field) and node.name == "reason")
               or (isinstance(node, A.Name) and node.ref == ("column", "reason"))
               for _, root in template.expressions() for node in A.walk(root))


def test_every_textworld_template_asks_on_a_textworld_episode(textworld_trace_dir, textworld_llm_trace_dir,
                                                               textworld_keys_trace_dir):
    """TextWorld's templates and those of every game (events), on the recorded cooking walkthrough, the llm
    agent's episode of that game with reasons and the walkthrough of the game with keys (support/textworld_keys.py):
    every one asks something answerable (issue 33's done criterion); those that read the reasons ask on the
    llm episode, those about unlocking and the room of the most gains on the game with keys."""
    con = open_store(textworld_trace_dir, textworld_llm_trace_dir, textworld_keys_trace_dir)
    try:
        produced = produced_rows(con, ("textworld", "any"))
        episodes = {(game, agent): e for game, agent, e in con.sql("SELECT game, agent, episode_id FROM episodes").fetchall()}
        actions = {(e, s): a for e, s, a in con.sql("SELECT episode_id, step, action FROM textworld_steps").fetchall()}
    finally:
        con.close()
    assert not silent(produced), sorted(silent(produced))

    def asked(template: str, agent: str, game: str = "cooking_s1") -> list[dict]:
        return [r for r in produced[template] if not r["adversarial"] and r["episode_id"] == episodes[(game, agent)]]

    assert all(actions[(r["episode_id"], r["p_t"])] == r["answer"] for r in produced["textworld.action_at"]
               if not r["adversarial"])
    [recipe] = asked("textworld.recipe_ingredients", "walkthrough")
    assert sorted(recipe["answer"]) == ["red bell pepper", "red potato", "yellow bell pepper"]
    [fridge] = asked("textworld.contents_when_opened", "walkthrough")
    assert sorted(fridge["answer"]) == ["red bell pepper", "red hot pepper", "yellow bell pepper", "yellow onion"]
    reasoning = {c.id for c in load_library([TEMPLATES]).compiled
                 if c.env == "textworld" and reads_reasons(c.checked.template)}
    assert len(reasoning) == 7 and all(asked(t, "llm") for t in reasoning), sorted(reasoning)
    unlocked = asked("textworld.unlocked_with", "walkthrough", "keys")
    assert {r["p_door"]: r["answer"] for r in unlocked} == {door: key for door, (key, _) in UNLOCKED.items()}
    [richest] = asked("textworld.room_with_most_gains", "walkthrough", "keys")
    assert richest["display_answer"] == "hall"
