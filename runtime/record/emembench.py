"""EMemBench's agent-loop logs (InternLM/EMemBench): their layout and fields, written from a qtc trace and
read back with located errors. docs/trace-format.md ("EMemBench logs") describes both formats.

Jericho (text_game/run_jericho_openai.py): one JSONL file per run, `<run>_logs.jsonl`, a row per step
(`step`; `game`: the state before the action, `name`, `rom`, `score`, `moves`, `location`, `inventory`,
`valid_actions`; `observation`, the text before it; `agent`: `action`, `reason`; `env_feedback`: `text`,
`reward`, `done`, `info`) and a closing `{"final": true, ...}` row. The seed is not logged.
Crafter (visual_game/run_crafter_openai.py): a run folder `seed<N>/<run>/` holding `logs.jsonl`, a row per
step (`seed`, `step`, `action_id`, `action_name`, `reason`, `reward`, `done`, `frame`; `info`: Crafter's
step info with `inventory`, `achievements` (counts so far) and `player_pos`), `map_seed<N>.txt` (the
world's materials at reset, a digit a tile) and `frames/crafter_t<t>.png` (the screen after step t).

`write_emembench` writes a qtc episode in these formats (EMemBench's own generator then reads it);
`find_logs` and `read_log` read them for `qtc import emembench` (emembench_import.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qtc.dsl import crafter_data
from qtc.errors import UserError
from qtc.files import atomic_path, jsonl_line, write_text_atomic
from qtc.runtime.trace.format import read_episode
from qtc.runtime.trace.frames import frames_path

CRAFTER_LOG = "logs.jsonl"
JERICHO_LOG_SUFFIX = "_logs.jsonl"
FRAMES_FOLDER = "frames"
# EMemBench's Jericho runner seeds the game with --seed, 43 unless given, and does not log it.
JERICHO_DEFAULT_SEED = 43
# The runner logs at most this many valid actions a step.
VALID_ACTIONS_LOGGED = 30
# A trace records no clock: converted rows all carry this timestamp (EMemBench's readers order rows by step).
TIMESTAMP = "1970-01-01T00:00:00"
# Where EMemBench's pipeline keeps the story files (text_game/game_envs/): the runner logs the path it was given.
STORY_FOLDER = "game_envs"
# The runner keeps crafter.Env's default episode length: its log says done at a death, or at this step.
CRAFTER_LENGTH = 10000
SEED_FOLDER = re.compile(r"seed(-?\d+)")

# The fields a row must have for the import: the actions replayed, the reasons kept, the game's output checked.
REQUIRED = {
    "jericho": ("step", "game.name", "game.rom", "observation", "agent.action", "agent.reason",
                "env_feedback.text", "env_feedback.reward", "env_feedback.done"),
    "crafter": ("step", "env", "seed", "action_id", "action_name", "reason", "reward", "done", "frame",
                "info.inventory", "info.achievements", "info.player_pos"),
}


def frame_name(step: int) -> str:
    """The file name of the screen after `step` (0: at reset) in a Crafter run's frames folder."""
    return f"crafter_t{step:06d}.png"


# ---- writing a qtc episode as EMemBench's runners log one ----

def write_emembench(trace_path: Path, out_dir: Path) -> Path:
    """Write the episode of `trace_path` in EMemBench's log format under `out_dir`; returns the log file.

    Crafter: `out_dir/seed<seed>/<agent>/logs.jsonl` with `map_seed<seed>.txt` (and `frames/` when the
    episode kept its frames); Jericho: `out_dir/<game>/seed<seed>/<agent>_logs.jsonl`. The run is named by
    the agent, so `qtc import emembench` gives the episode back under its own identifier."""
    episode = read_episode(trace_path)
    header = episode.header
    if header["env"] == "crafter":
        run = Path(out_dir) / f"seed{header['seed']}" / header["agent"]
        frames = _write_frames(trace_path, run / FRAMES_FOLDER)
        write_text_atomic(run / f"map_seed{header['seed']}.txt", crafter_map_text(header["map_init"]["rows"]))
        rows = crafter_rows(header, episode.steps, frames)
        path = run / CRAFTER_LOG
    else:
        path = Path(out_dir) / header["game"] / f"seed{header['seed']}" / f"{header['agent']}{JERICHO_LOG_SUFFIX}"
        rows = jericho_rows(header, episode.steps)
    write_text_atomic(path, "".join(jsonl_line(row) for row in rows))
    return path


def crafter_map_text(rows: list[list[int]]) -> str:
    """The map file EMemBench's Crafter runner writes at reset: the material ids (row y, column x), each
    tile written as the digit id - 1 when some tile has id - 1, else as "0" (its glyph rule, kept as it is:
    the digits are what its QA generator reads)."""
    present = {tile for row in rows for tile in row}
    return "\n".join("".join(str(tile - 1) if tile - 1 in present else "0" for tile in row)
                     for row in rows) + "\n"


def _write_frames(trace_path: Path, folder: Path) -> bool:
    """The episode's screens as PNG files, if it kept them; whether it did."""
    path = frames_path(trace_path)
    if not path.exists():
        return False
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    with np.load(path) as archive:
        for step, frame in enumerate(archive["frames"]):
            with atomic_path(folder / frame_name(step)) as temporary:
                Image.fromarray(frame).save(temporary, format="PNG")
    return True


def crafter_rows(header: dict, steps: list[dict], frames: bool) -> list[dict]:
    """One row per step, as run_crafter_openai.py logs it with its default `--log-info basic` (the same
    rows for a run imported and converted back, but for `model`)."""
    rows, counts = [], dict.fromkeys(crafter_data.ACHIEVEMENTS, 0)
    # The runner's deltas start from an empty inventory: the first row's holds everything held.
    inventory, total = {}, 0.0
    area = [len(header["map_init"]["rows"][0]), len(header["map_init"]["rows"])]
    for step in steps:
        unlocked = {name: step["achievements"].count(name) for name in crafter_data.ACHIEVEMENTS
                    if name in step["achievements"]}
        for name, count in unlocked.items():
            counts[name] += count
        total += step["reward"]
        health_delta = round(step["reward"] - sum(unlocked.values()), 6)
        delta = {key: step["inventory"][key] - inventory.get(key, 0) for key in crafter_data.INVENTORY_KEYS
                 if step["inventory"][key] != inventory.get(key, 0)}
        inventory = step["inventory"]
        rows.append({
            "episode": 0, "step": step["step"], "env": "crafter", "seed": header["seed"],
            "model": f"qtc:{header['agent']}", "action_id": crafter_data.ACTIONS.index(step["action"]),
            "action_name": step["action"].upper(), "reward": step["reward"],
            "done": step["step"] == header["death_step"] or (step["done"] and step["step"] == CRAFTER_LENGTH),
            "frame": frame_name(step["step"]) if frames else "",
            "info": {"inventory": step["inventory"], "achievements": dict(counts),
                     "discount": 0.0 if step["step"] == header["death_step"] else 1.0,
                     "semantic": {"type": "ndarray", "shape": area, "dtype": "uint8"},
                     "player_pos": [step["x_after"], step["y_after"]], "reward": step["reward"]},
            "reason": step["reason"] or "", "llm_raw": "", "ep_return": round(total, 4),
            "achievements_unlocked": unlocked, "inventory_delta": delta,
            "health_delta": round(health_delta, 4),
            "health_events": int(round(health_delta / 0.1)) if abs(health_delta) > 1e-8 else 0,
        })
    return rows


def jericho_rows(header: dict, steps: list[dict]) -> list[dict]:
    """One row per step and the closing row, as run_jericho_openai.py logs them. What a trace does not hold
    is written as the runner writes what it could not read: no world-state hash, no maximum score (both
    need the story file); the location is the room's object name, the inventory as qtc names it."""
    rooms = {room["room"]: room["name"] for room in header["rooms"]}
    score, moves = header["initial"]["score"], header["initial"]["moves"]
    rows = []
    for step in steps:
        reason = step["reason"] or ""
        rows.append({
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
    rows.append({"final": True, "timestamp": TIMESTAMP, "victory": header["ended_by"] == "done" and not died,
                 "game_over": died, "final_score": score, "moves": moves})
    return rows


# ---- reading logs for the import ----

@dataclass
class EmembenchLog:
    """One run's log: its step rows (the closing row left out) with their line numbers; `seed` is the
    logged seed (Crafter) or the `seed<N>` folder's holding the file (Jericho), else None."""
    path: Path
    env: str
    run: str
    rows: list[dict]
    lines: list[int]
    seed: int | None

    def where(self, index: int) -> str:
        """The file and line of row `index`, for messages."""
        return f"{self.path}:{self.lines[index]}"

    @property
    def rom(self) -> str:
        """Jericho: the file name of the story file the run played."""
        return Path(self.rows[0]["game"]["rom"]).name


def find_logs(directory: Path) -> list[Path]:
    """The EMemBench logs under `directory` (at any depth), in path order."""
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{directory}: no such folder")
    found = sorted(path for path in directory.rglob("*") if path.is_file()
                   and (path.name == CRAFTER_LOG or path.name.endswith(JERICHO_LOG_SUFFIX)))
    if not found:
        raise UserError(f"{directory}: no EMemBench logs in it (Jericho runs write <run>{JERICHO_LOG_SUFFIX}, "
                        f"Crafter runs seed<N>/<run>/{CRAFTER_LOG})")
    return found


def field(row: dict, name: str, where: str):
    """The value of a dotted field of a row; a UserError naming the file, line and field if it is missing."""
    value = row
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            raise UserError(f"{where}: missing field '{name}'")
        value = value[part]
    return value


def read_log(path: Path) -> EmembenchLog:
    """Read and check one log: every step row has the fields the import needs, steps run 1, 2, ...;
    a UserError names the file, the line and the field at fault."""
    path = Path(path)
    env = "crafter" if path.name == CRAFTER_LOG else "jericho"
    rows, lines = [], []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            raise UserError(f"{path}:{number}: not JSON ({error.msg} at column {error.colno})") from None
        if not isinstance(row, dict):
            raise UserError(f"{path}:{number}: expected a JSON object")
        if row.get("final") is True:
            continue
        where = f"{path}:{number}"
        for name in REQUIRED[env]:
            field(row, name, where)
        if row["step"] != len(rows) + 1:
            raise UserError(f"{where}: field 'step': expected {len(rows) + 1}, got {row['step']!r}")
        rows.append(row)
        lines.append(number)
    if not rows:
        raise UserError(f"{path}: no steps logged")
    log = EmembenchLog(path, env, path.parent.name if env == "crafter" else path.name[:-len(JERICHO_LOG_SUFFIX)],
                       rows, lines, None)
    (_check_crafter if env == "crafter" else _check_jericho)(log)
    return log


def _check_crafter(log: EmembenchLog) -> None:
    first = log.rows[0]
    if first["env"] != "crafter":
        raise UserError(f"{log.where(0)}: field 'env': unknown game {first['env']!r} (EMemBench's Crafter "
                        f"runs log 'crafter')")
    for index, row in enumerate(log.rows):
        if row["seed"] != first["seed"] or type(row["seed"]) is not int:
            raise UserError(f"{log.where(index)}: field 'seed': expected {first['seed']!r} as on line "
                            f"{log.lines[0]}, got {row['seed']!r}")
        action = row["action_id"]
        if type(action) is not int or not 0 <= action < len(crafter_data.ACTIONS):
            raise UserError(f"{log.where(index)}: field 'action_id': expected 0-{len(crafter_data.ACTIONS) - 1}, "
                            f"got {action!r}")
        if row["action_name"] != crafter_data.ACTIONS[action].upper():
            raise UserError(f"{log.where(index)}: field 'action_name': action {action} is "
                            f"{crafter_data.ACTIONS[action].upper()}, the row says {row['action_name']!r}")
    log.seed = first["seed"]


def _check_jericho(log: EmembenchLog) -> None:
    game = log.rows[0]["game"]
    for index, row in enumerate(log.rows):
        if (row["game"]["name"], row["game"]["rom"]) != (game["name"], game["rom"]):
            raise UserError(f"{log.where(index)}: field 'game.rom': a log holds one game's run; line "
                            f"{log.lines[0]} played {game['rom']!r}, this one {row['game']['rom']!r}")
        if not isinstance(row["agent"]["action"], str):
            raise UserError(f"{log.where(index)}: field 'agent.action': expected a string")
    folder = SEED_FOLDER.fullmatch(log.path.parent.name)
    log.seed = int(folder[1]) if folder else None
