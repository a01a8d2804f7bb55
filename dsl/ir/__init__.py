"""The relational IR: the compiler (design: ../shared/design/compiler-ir.md).

A checked template is lowered (lower.py, exprs.py, and each built-in function's own `lower`, in
dsl/functions/) to named relations keyed by the episode and the parameters each depends on (nodes.py):
parameter domains and their components, the sampled bindings (sample.py), and each let, require,
answer and evidence computed once for the bindings asked for, with no correlated subquery. emit.py
writes the statement, verify.py checks the invariants, explain.py shows the IR and the SQL for
`qtc compile --explain`. dsl/compile.py is the entry point the rest of qtc calls.
"""
