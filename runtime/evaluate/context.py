"""The context a model answers from: an episode as the agent observed it, cut at the question's horizon.

A context shows two kinds of block (CONVENTIONS.md, docs/evaluation.md):
- a **step block** for step t: the action and the agent's reason, then the state after step t (what
  the action produced, which is also what the agent saw before step t+1);
- a **state block** "Before step t": the state after step t-1 (the start state for t = 1), shown
  where step t-1 itself is not, so that a step never appears without the state it was chosen in.

Only what the agent could observe is shown, as each environment's evaluation record renders a state
(`state_lines`: text_games.py, crafter.py). A text game: the observation text, the room as the status line
names it, score and moves. Crafter: the local view as a grid of symbols around the player, the
creatures in it (relative to the player), the terrain underfoot, facing, inventory and the HUD stats,
daylight and sleep. Never absolute map coordinates, valid-action lists, inventories the game did not
print, rewards, achievements or damage causes.

The modes choose the steps, where H is the question's horizon, or the episode's length without one:
`full` (1..H), `last:N` (H-N+1..H), `evidence` (the question's evidence steps only), `budget:B` (the
evidence steps, then the latest steps, while the log's estimated tokens stay within B) and `none` (no log
at all: the no-memory control).
"""

from __future__ import annotations

from dataclasses import dataclass

from qtc.errors import InvalidOption
from qtc.runtime.episode_rows import EpisodeRows

from .environment import one_line
from .registry import EVALUATE_ENVIRONMENTS

MODES = ("full", "last:N", "evidence", "budget:B", "none")
CHARS_PER_TOKEN = 4  # a rough rule for English text and JSON; only estimates use it
NO_STEPS = "(no steps are shown)"

def estimated_tokens(chars: int) -> int:
    """About how many tokens a text of `chars` characters takes: a quarter of them, plus one; none for no text."""
    return chars // CHARS_PER_TOKEN + 1 if chars else 0


@dataclass(frozen=True)
class ContextMode:
    kind: str  # "full", "last", "evidence", "budget" or "none"
    last: int | None = None  # N of last:N
    budget: int | None = None  # B of budget:B, in estimated tokens

    @classmethod
    def parse(cls, text: str) -> "ContextMode":
        if text in ("full", "evidence", "none"):
            return cls(text)
        kind, _, count = text.partition(":")
        if kind in ("last", "budget") and count.isdigit() and int(count) > 0:
            return cls(kind, **{kind: int(count)})
        raise InvalidOption("context", f"{text!r}: expected full, evidence, none, last:N or budget:B with N and B "
                                       "positive integers")

    def __str__(self) -> str:
        if self.kind == "last":
            return f"last:{self.last}"
        return f"budget:{self.budget}" if self.kind == "budget" else self.kind


@dataclass(frozen=True)
class Shown:
    """What a context shows: the steps whose action appears, and the steps after which the state does
    (0 is the start state). Every shown action's own state is shown, and so is the state before it."""
    actions: frozenset[int]
    states: frozenset[int]

    @classmethod
    def of_steps(cls, steps) -> "Shown":
        actions = frozenset(s for s in steps if s >= 1)
        return cls(actions, frozenset(steps) | actions | {s - 1 for s in actions})


def shown_steps(mode: ContextMode, horizon: int, evidence: list[int], sizes: "LogSizes | None" = None) -> Shown:
    """The steps shown for a question with this horizon (the last step the question may speak of);
    `budget:B` needs the sizes of the episode's blocks."""
    if mode.kind == "full":
        return Shown.of_steps(range(1, horizon + 1))
    if mode.kind == "last":
        return Shown.of_steps(range(max(1, horizon - mode.last + 1), horizon + 1))
    if mode.kind == "budget":
        return sizes.within_budget(mode.budget, horizon, evidence)
    if mode.kind == "none":
        return Shown.of_steps([])
    return Shown.of_steps([s for s in evidence if 0 <= s <= horizon])


def shown_description(mode: ContextMode, horizon: int, shown: Shown) -> str:
    """Which steps a context of this mode shows, in words, for the prompt's heading."""
    if mode.kind == "full":
        return f"steps 1 to {horizon}, every step"
    if mode.kind == "last":
        return f"steps {min(shown.actions, default=horizon)} to {horizon}; earlier steps are not shown"
    if mode.kind == "budget":
        return (f"{len(shown.actions)} of steps 1 to {horizon}, as many as fit about {mode.budget} tokens; "
                "the others are not shown")
    if mode.kind == "none":
        return "not shown"
    return "only a few steps; the others are not shown"


@dataclass(frozen=True)
class Block:
    """One block of a context: a step's action and the state after it, or the state before a step."""
    step: int  # the step whose action (or, for a state block, the step after which the state) it shows
    action: bool
    text: str


def context_blocks(rows: EpisodeRows, episode_id: str, env: str, shown: Shown) -> list[Block]:
    """The blocks of one episode's log, in step order (without the legend)."""
    states = EVALUATE_ENVIRONMENTS[env].state_lines(rows, episode_id, sorted(shown.states))
    actions = {step: (action, reason) for step, action, reason in rows.execute(
        f"SELECT step, action, reason FROM {{{env}_steps}} WHERE step IN (SELECT unnest($steps))",
        episode_id, steps=sorted(shown.actions)).fetchall()}
    blocks = []
    for step in sorted(states.keys() | actions.keys()):  # the steps the episode has: a horizon may pass its end
        if step in actions:
            action, reason = actions[step]
            block = [f"Step {step}", f"action: {action}"] + ([f"reason: {one_line(reason)}"] if reason else [])
        else:
            block = [f"Before step {step + 1}" + (" (the start)" if step == 0 else "")]
        block += states.get(step, [])
        blocks.append(Block(step, step in actions, "\n".join([block[0], *(f"  {line}" for line in block[1:])])))
    return blocks


def _headed(env: str, blocks: list[str]) -> list[str]:
    """The parts of a log, joined by newlines: the environment's legend (if any), then the blocks."""
    legend = EVALUATE_ENVIRONMENTS[env].legend
    return ([legend] if legend else []) + (blocks or [NO_STEPS])


def render_context(rows: EpisodeRows, episode_id: str, env: str, shown: Shown) -> str:
    """The log text of one episode: the shown steps and states, in step order."""
    return "\n".join(_headed(env, [block.text for block in context_blocks(rows, episode_id, env, shown)]))


@dataclass(frozen=True)
class LogSizes:
    """The characters of every block one episode's log can show, so that the size of any choice of steps
    is known without rendering it: render_context's text is the legend and the blocks joined by newlines."""
    env: str
    step_chars: dict[int, int]  # the block of step t: its action and the state after it
    state_chars: dict[int, int]  # the block of the state after step t shown alone ("Before step t+1")

    @classmethod
    def of_episode(cls, rows: EpisodeRows, episode_id: str, env: str, n_steps: int) -> "LogSizes":
        actions, states = frozenset(range(1, n_steps + 1)), frozenset(range(n_steps + 1))
        return cls(env, {b.step: len(b.text) for b in context_blocks(rows, episode_id, env, Shown(actions, states))},
                   {b.step: len(b.text) for b in context_blocks(rows, episode_id, env, Shown(frozenset(), states))})

    def _chars(self, blocks: int, block_chars: int) -> int:
        """The characters of a log of `blocks` blocks whose own characters add up to `block_chars`."""
        if not blocks:
            return len("\n".join(_headed(self.env, [])))
        return len("\n".join(_headed(self.env, [""]))) + block_chars + blocks - 1  # a newline between blocks

    def within_budget(self, budget: int, horizon: int, evidence: list[int]) -> Shown:
        """The evidence steps up to the horizon, latest first, then the steps horizon, horizon-1, ..., each
        taken while the log stays within `budget` estimated tokens: the first that would pass it ends the
        choice, so the recent steps shown are one run ending at the horizon."""
        empty = estimated_tokens(self._chars(0, 0))
        if empty > budget:
            raise InvalidOption("context", f"budget:{budget}: an empty {self.env} log already takes about {empty} "
                                           "tokens; give a larger budget")
        blocks: dict[int, int] = {}  # step -> characters of its block, as the steps chosen so far show it
        block_chars = 0
        chosen = []
        preferred = sorted({s for s in evidence if 0 <= s <= horizon}, reverse=True) + list(range(horizon, 0, -1))
        for step in dict.fromkeys(preferred):
            # An action shows its own block (in place of its state's alone) and the state it was chosen in
            # (Shown.of_steps); step 0 is the start state.
            changed = {step: self.step_chars[step]} if step >= 1 else {}
            state = step - 1 if step >= 1 else step
            if state not in blocks:
                changed[state] = self.state_chars[state]
            grown = block_chars + sum(chars - blocks.get(s, 0) for s, chars in changed.items())
            count = len(blocks) + sum(s not in blocks for s in changed)
            if estimated_tokens(self._chars(count, grown)) > budget:
                break
            blocks.update(changed)
            block_chars = grown
            chosen.append(step)
        return Shown.of_steps(chosen)
