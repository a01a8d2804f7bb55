"""Templates generated from the language's grammar, well-typed by construction as far as the grammar's
pieces go (a table of the env, a `where` on one of its columns against a literal of the column's type, an
aggregate of the relation, a `choices` domain): every one the checker accepts must run, on drawn episodes
of its game, whole and under a horizon, with no engine error (issue 30, item 12: `vocab | where ...`
passed the checker and stopped `qtc generate` with a DuckDB Binder error). Refusals are fine; a
template `qtc compile` accepts and DuckDB then refuses is the failure.
"""

from __future__ import annotations

import duckdb
from hypothesis import find, given
from hypothesis import strategies as st
from support.ground_truth import sql_candidates, store_of
from support.hypothesis_profiles import examples
from support.strategies import seeded_episode

from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.dsl.check import Checker
from qtc.dsl.compile import compile_template
from qtc.dsl.parse import parse_source
from qtc.dsl.render import make_environment

# A literal of each column type the generated conditions compare with.
LITERALS = {T.INTEGER: ["0", "1", "5"], T.STEP: ["1", "3", "$t"], T.FLOAT: ["0.5"], T.STRING: ['"egg"', '"item"'],
            T.ITEM: ['"egg"', '"wood"'], T.ACTION: ['"do"', '"take egg"'], T.MATERIAL: ['"stone"', '"grass"'],
            T.ROOM: ["10", "20"], T.DIRECTION: ['"north"', '"left"'], T.ACHIEVEMENT: ['"collect_wood"'],
            T.CREATURE: ['"zombie"'], T.EVENT: ['"item_gained"']}


@st.composite
def templates(draw, env: str) -> str:
    tables = sorted(schema.tables_for(env).values(), key=lambda t: t.name)
    table = draw(st.sampled_from(tables + [schema.VOCAB] * 4))  # the one table keyed by game, drawn more often
    comparable = [c for c in table.columns if c.type in LITERALS or c.type == T.BOOLEAN]
    relation = table.name
    for _ in range(draw(st.integers(0, 2))):
        if not comparable:
            break
        column = draw(st.sampled_from(comparable))
        if column.type == T.BOOLEAN:
            condition = draw(st.sampled_from([column.name, f"not {column.name}"]))
        else:
            op = draw(st.sampled_from(["==", "!=", "<=", ">"]))
            condition = f"{column.name} {op} {draw(st.sampled_from(LITERALS[column.type]))}"
        relation = f"{relation} | where {condition}"
    kinds = sorted(schema.VOCAB_KINDS[env])
    column = draw(st.sampled_from(comparable or list(table.columns)))
    let = draw(st.sampled_from([f"count({relation})", f"exists({relation})", f"first({relation})",
                                f"list(({relation}).{column.name})", relation, f"vocab.{draw(st.sampled_from(kinds))}"]))
    answer_type, answer = draw(st.sampled_from([
        ("integer", "count(x)"), ("yesno", "exists(steps | where step == $t)"), ("integer", f"count({relation})"),
        ("step", f"first({relation}).step"), ("steps", f"list(({relation}).step)")]))
    choices = draw(st.sampled_from(["", f"choices 3 from ({relation}).step", f"choices 3 from ({relation}).{column.name}",
                                    "choices 3 from steps.step"]))
    return (f"template {env}.generated {{\n  env {env}\n  category single_hop\n  difficulty easy\n"
            f"  answer_type {answer_type}\n\n  param t: steps.step\n  let x = {let}\n"
            f"  question \"At step {{{{ t }}}}?\"\n  answer {answer}\n  evidence $t\n  {choices}\n}}\n")


def accepted(source: str):
    """The compiled template, if the parser and checker accept the source."""
    (template,), errors = parse_source("generated.qtpl", source)
    checker = Checker(template, make_environment())
    checked = checker.check()
    return None if errors or checked is None or checker.diagnostics else compile_template(checked)


def runs(env: str, source: str) -> None:
    compiled = accepted(source)
    if compiled is None:
        return
    con = store_of([seeded_episode(env, 1, n_steps=12)]).con
    for horizon, cap in ((None, None), (5, None), (None, 20)):
        try:
            sql_candidates(con, compiled, horizon, cap)
        except duckdb.Error as error:
            raise AssertionError(f"accepted by the checker, refused by DuckDB: {error}\n{source}") from None


@examples(40)
@given(templates("jericho"))
def test_every_generated_jericho_template_the_checker_accepts_runs(source):
    runs("jericho", source)


@examples(15)
@given(templates("crafter"))
def test_every_generated_crafter_template_the_checker_accepts_runs(source):
    runs("crafter", source)


def test_the_generator_makes_templates_the_checker_accepts():
    """The property is not empty: the checker accepts generated templates that read a table through a
    condition, and refuses the vocabulary as a relation."""
    assert find(templates("jericho"), lambda s: "| where" in s and accepted(s) is not None)
    assert accepted(SOURCE_WITH_VOCAB_RELATION) is None


SOURCE_WITH_VOCAB_RELATION = """template jericho.generated {
  env jericho
  category single_hop
  difficulty easy
  answer_type item

  param t: steps.step
  question "At step {{ t }}?"
  answer first(item_events | where step == $t).item
  evidence $t
  choices 3 from (vocab | where kind == "item").value
}
"""
