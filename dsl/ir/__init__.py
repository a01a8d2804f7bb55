"""The relational IR of the compiler (design: ../shared/design/compiler-ir.md).

A checked template is lowered (lower.py, exprs.py, functions.py) to named relations keyed by the
episode and the parameters each depends on (nodes.py): parameter domains and their components, the
sampled bindings (sample.py: compat mode, byte-identical to the legacy emitter's sample), and each let,
require, answer and evidence computed once for the bindings asked for, with no correlated subquery.
emit.py writes the statement, verify.py checks the invariants, backend.py chooses per template
between the IR and the legacy emitter (dsl/compile.py), explain.py shows both for `qtc compile --explain`.
"""
