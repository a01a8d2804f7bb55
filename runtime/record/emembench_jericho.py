"""Jericho's EMemBench log (emembench_format.py), as text_game/run_jericho_openai.py writes it: one JSONL file
per run, `<run>_logs.jsonl`, a row per step (`step`; `game`: the state before the action, `name`, `rom`,
`score`, `moves`, `location`, `inventory`, `valid_actions`; `observation`, the text before it; `agent`:
`action`, `reason`; `env_feedback`: `text`, `reward`, `done`, `info`) and a closing `{"final": true, ...}`
row. The seed is not logged. An import replays it in the story file the run played and checks the text
before and after each action, the reward and whether the game ended.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Callable

from qtc.errors import UserError
from qtc.runtime.trace.format import episode_id

from .choice import Choice
from .emembench_format import EmembenchLog, Planned, agent_name, not_ended, same

LOG_SUFFIX = "_logs.jsonl"
# EMemBench's Jericho runner seeds the game with --seed, 43 unless given, and does not log it.
DEFAULT_SEED = 43
# The runner logs at most this many valid actions a step.
VALID_ACTIONS_LOGGED = 30
# A trace records no clock: converted rows all carry this timestamp (EMemBench's readers order rows by step).
TIMESTAMP = "1970-01-01T00:00:00"
# Where EMemBench's pipeline keeps the story files (text_game/game_envs/): the runner logs the path it was given.
STORY_FOLDER = "game_envs"
SEED_FOLDER = re.compile(r"seed(-?\d+)")


def rom(log: EmembenchLog) -> str:
    """The file name of the story file the run played."""
    return Path(log.rows[0]["game"]["rom"]).name


class JerichoFormat:
    env = "jericho"
    layout = f"Jericho runs write <run>{LOG_SUFFIX}"
    required = ("step", "game.name", "game.rom", "observation", "agent.action", "agent.reason",
                "env_feedback.text", "env_feedback.reward", "env_feedback.done")
    replays_again = False

    def is_log(self, path: Path) -> bool:
        return path.name.endswith(LOG_SUFFIX)

    def run_name(self, path: Path) -> str:
        return path.name[:-len(LOG_SUFFIX)]

    def check(self, log: EmembenchLog) -> None:
        game = log.rows[0]["game"]
        for index, row in enumerate(log.rows):
            if (row["game"]["name"], row["game"]["rom"]) != (game["name"], game["rom"]):
                raise UserError(f"{log.where(index)}: field 'game.rom': a log holds one game's run; line "
                                f"{log.lines[0]} played {game['rom']!r}, this one {row['game']['rom']!r}")
            if not isinstance(row["agent"]["action"], str):
                raise UserError(f"{log.where(index)}: field 'agent.action': expected a string")
        folder = SEED_FOLDER.fullmatch(log.path.parent.name)
        log.seed = int(folder[1]) if folder else None

    def write(self, trace_path: Path, header: dict, steps: list[dict], out_dir: Path) -> tuple[Path, list[dict]]:
        """`out_dir/<game>/seed<seed>/<agent>_logs.jsonl`."""
        path = Path(out_dir) / header["game"] / f"seed{header['seed']}" / f"{header['agent']}{LOG_SUFFIX}"
        return path, rows(header, steps)

    def choices(self, log: EmembenchLog) -> list[Choice]:
        return [Choice(row["agent"]["action"], row["agent"]["reason"] or None) for row in log.rows]

    def plan(self, log: EmembenchLog, agent: str, find_rom: Callable[[str], Path], seed: int | None) -> Planned:
        """The story file from `find_rom` (which raises a UserError saying where it looked); the seed given,
        else a `seed<N>` folder holding the log, else EMemBench's 43."""
        from .jericho import resolve_seed

        try:
            story = Path(find_rom(rom(log)))
        except UserError as error:
            raise UserError(f"{log.where(0)}: field 'game.rom': unknown game {log.rows[0]['game']['name']!r}: "
                            f"{error}") from None
        chosen = seed if seed is not None else log.seed if log.seed is not None else DEFAULT_SEED
        game_seed = resolve_seed(story, chosen)
        return Planned(log, episode_id(story.stem, agent, game_seed), game_seed, rom=story)

    def session(self, item: Planned, valid_actions: bool):
        from .jericho import JerichoSession

        return (JerichoSession(item.rom, item.seed, agent_name(item.log.run), valid_actions),
                functools.partial(_check, item))


def _check(item: Planned, session, record: dict) -> None:
    """The on_step hook that holds Jericho to the log after each step."""
    log, index = item.log, record["step"] - 1
    row = log.rows[index]
    same(log, index, "observation", row["observation"], record["obs_before"])
    same(log, index, "env_feedback.text", row["env_feedback"]["text"], record["obs_after"])
    same(log, index, "env_feedback.reward", row["env_feedback"]["reward"], record["reward"])
    same(log, index, "env_feedback.done", row["env_feedback"]["done"], record["done"])
    not_ended(log, index, record["done"])


def rows(header: dict, steps: list[dict]) -> list[dict]:
    """One row per step and the closing row, as run_jericho_openai.py logs them. What a trace does not hold
    is written as the runner writes what it could not read: no world-state hash, no maximum score (both
    need the story file); the location is the room's object name, the inventory as qtc names it."""
    rooms = {room["room"]: room["name"] for room in header["rooms"]}
    score, moves = header["initial"]["score"], header["initial"]["moves"]
    logged = []
    for step in steps:
        reason = step["reason"] or ""
        logged.append({
            "step": step["step"], "timestamp": TIMESTAMP,
            "game": {"name": header["game"], "rom": f"{STORY_FOLDER}/{header['rom']}", "world_state_hash": None, "score": score,
                     "max_score": None, "moves": moves, "location": rooms[step["room_before"]],
                     "inventory": step["inventory_before"],
                     "valid_actions": (step["valid_actions"] or [])[:VALID_ACTIONS_LOGGED]},
            "observation": step["obs_before"],
            "model": {"name": f"qtc:{header['agent']}", "history_turns": None, "request_id": None, "usage": None,
                      "raw_text": json.dumps({"action": step["action"], "reason": reason}, ensure_ascii=False)},
            "agent": {"action": step["action"], "reason": reason},
            "env_feedback": {"text": step["obs_after"], "reward": step["reward"], "done": step["done"],
                             "info": {"moves": step["moves"], "score": step["score"]}},
        })
        score, moves = step["score"], step["moves"]
    died = header["death_step"] is not None
    logged.append({"final": True, "timestamp": TIMESTAMP, "victory": header["ended_by"] == "done" and not died,
                   "game_over": died, "final_score": score, "moves": moves})
    return logged
