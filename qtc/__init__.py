"""qtc: a question-template compiler for agent memory benchmarks.

The language is `qtc.dsl` (the folder `dsl/`: parse, check, compile, and an independent reference
evaluator) with its grammar in `qtc.grammar`; the standard library of templates is `qtc.templates`; the
runtime, one subpackage per stage of the workflow (record, trace, spatial, generate, qa, evaluate), is
`qtc.runtime`. This package holds the command line (`qtc.cli`, `qtc.commands`), the user-facing error
(`qtc.errors`), atomic file writes (`qtc.files`) and the public Python API: memory providers
(`qtc.memory`) and the recorder of an agent of the user's own (`qtc.record`, the public face of
runtime/record/recorder.py). docs/architecture.md draws the stages.
"""


def __getattr__(name: str):
    # The version is pyproject.toml's, as installed: written once, read only where it is asked for
    # (an export's provenance), so that importing qtc does not read package metadata.
    if name == "__version__":
        from importlib.metadata import version
        return version("qtc")
    raise AttributeError(f"module 'qtc' has no attribute {name!r}")
