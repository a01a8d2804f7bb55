"""Recording: playing a game with an agent and writing each step to a trace file.

`episodes.py` writes an episode step by step and finishes it (EpisodeRecording), and holds `qtc play`'s
loop over it (resume, Ctrl-C, progress); `recorder.py` is the recorder of a loop of the user's own over
the same recording (qtc.record, qtc/record.py, is its public face); `games.py` finds a game's session by
name; `crafter.py` and `jericho.py` own the live games; `agents.py` holds the agents that choose actions
(walkthrough, random, scripted, LLM); `jericho_actions.py` finds Jericho's valid actions offline; `jericho_objects.py` reads
Jericho's object tree from the game's memory and names objects as the game lists them. `emembench.py` holds
EMemBench's log formats, one per game it ran (`emembench_format.py`, `emembench_jericho.py`,
`emembench_crafter.py`: a trace written as its runners log, their logs read back), and `emembench_import.py`
re-plays such logs through the loop, checked step by step; `crafter_despawns.py` sets which creature
Crafter despawns, to replay runs of unmodified Crafter. May import `qtc.dsl`
(Crafter's data, the trace schema), `runtime.trace` (the format it writes) and `runtime.chat`.
"""
