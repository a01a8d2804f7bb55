"""Memory providers: a user's memory system (or a built-in baseline) fed an episode step by step and asked
its questions at each checkpoint horizon (docs/memory.md).

`protocol.py` holds what a provider is given and gives back, and the base class of retrieval providers;
`feed.py` renders an episode as the steps a provider observes; `load.py` finds a provider by name
(built-in, `package.module:Class`, or the entry-point group `qtc.providers`); `driver.py` feeds and asks,
checkpoint by checkpoint, and records the answers; `builtin.py` holds the baselines none, last:N, full and
bm25, `embed.py` the embedding baseline and its cache. The public names are re-exported by `qtc.memory`.
May import `qtc.dsl`, `runtime.qa`, `runtime.trace`, `runtime.chat`, `runtime.episode_rows`,
`runtime.evaluate` (the context a step is rendered in, and the asking of qtc's chat model) and
`runtime/arrow.py`.
"""
