"""A template of several envs (dsl/instances.py) is its single-env copies: the same ids, source texts (so
the same template hashes) and SQL, one per env, each checked against its own env's tables."""

from support.handmade import compile_source

BODY = """
  category single_hop
  answer_type action

  param t: steps.step
  question "What did you type at step {{ t }}?"
  answer steps[$t].action
  evidence $t
}
"""


def test_one_template_per_env_as_if_copied():
    shared = compile_source("template action_at {\n  env jericho,\n      textworld" + BODY, "templates/jericho/t.qtpl")
    copies = [compile_source(f"template {env}.action_at {{\n  env {env}" + BODY, f"templates/{env}/t.qtpl")[0]
              for env in ("jericho", "textworld")]
    assert [c.id for c in shared] == ["jericho.action_at", "textworld.action_at"]
    assert [c.env for c in shared] == ["jericho", "textworld"]
    for instance, copy in zip(shared, copies):
        assert instance.checked.template.source == copy.checked.template.source
        # The SQL's header names the file it came from; the rest is the copy's.
        assert instance.sql.split("\n")[2:] == copy.sql.split("\n")[2:]
        assert "textworld_steps" in instance.sql if instance.env == "textworld" else "jericho_steps" in instance.sql


def test_instances_are_typed_apart():
    first, second = compile_source("template action_at {\n  env jericho, textworld" + BODY, "templates/jericho/t.qtpl")
    assert first.checked.template.answer is not second.checked.template.answer
