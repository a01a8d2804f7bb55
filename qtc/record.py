"""Record an agent of your own: `qtc.record.open(...)` wraps a live Crafter, Jericho or TextWorld game in a recorder with
a Gymnasium-style `reset()` / `step(action, reason=None)` / `close()` (also a context manager) that writes
the trace `qtc play` writes (docs/recording.md). The public face of runtime/record/recorder.py.

    with qtc.record.open("crafter", out="traces", seed=0, agent="mine", max_steps=100) as env:
        state, ended = env.reset(), False
        while not ended:
            state, reward, ended = env.step("noop", reason="waiting")
"""

from qtc.runtime.record.episodes import EpisodeOver, InvalidAction, RecordingCrashed
from qtc.runtime.record.recorder import Recorder
from qtc.runtime.record.recorder import open_recorder as open

__all__ = ["open", "Recorder", "RecordingCrashed", "InvalidAction", "EpisodeOver"]
