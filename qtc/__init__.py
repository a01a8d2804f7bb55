"""qtc: a question-template compiler for agent memory benchmarks.

The code lives in the subpackages `qtc.dsl` (the language: parse, check, compile, reference evaluator)
and `qtc.runtime` (recorders, trace store, spatial primitives, generator, evaluation); `qtc.cli` is the
command line.
"""

__version__ = "0.1.0"
