"""The template language: the templates of a .qtpl file, each to one DuckDB SQL statement.

    .qtpl text
      |  parse_source(path, text)              parse.py     -> (templates, diagnostics); a template of
      v                                                     several envs is one per env (instances.py)
    Template (ast.py)
      |  check_template(template, jinja_env)   check.py     -> (CheckedTemplate or None, diagnostics)
      v
    CheckedTemplate: every name resolved, every expression typed
      |  lower(checked, sampling)              ir/lower.py  -> TemplateIR: keyed relations, no correlation
      v
    TemplateIR (ir/nodes.py)
      |  emit(ir, checked)                     ir/emit.py   -> one DuckDB statement
      v
    CompiledTemplate (compile.py: compile_template, statement): the SQL that lists every candidate
    question, its answer and evidence

library.py runs the chain over files and keeps each diagnostic with its template. The built-in
functions are records in functions/ (typing rule, IR lowering, reference reading), read by the
checker, the compiler and the reference evaluator
(reference/): an independent second reading of a checked template, which the property tests compare
with the SQL.
"""
