"""Memory providers for `qtc answer --memory package.module:Class` (docs/memory.md): the public names.

An answering provider is any class with `reset(episode)`, `observe(step)` and `answer(questions)`
(MemoryProvider describes it); a retrieval provider subclasses RetrievalProvider and writes
`retrieve(question)`, returning step numbers, and qtc's chat model answers from those steps.
"""

from qtc.runtime.memory.protocol import MemoryProvider, RetrievalProvider

__all__ = ["MemoryProvider", "RetrievalProvider"]
