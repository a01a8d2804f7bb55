"""Crafter's EMemBench log (emembench_format.py), as visual_game/run_crafter_openai.py writes it: a run folder
`seed<N>/<run>/` holding `logs.jsonl`, a row per step (`seed`, `step`, `action_id`, `action_name`, `reason`,
`reward`, `done`, `frame`; `info`: Crafter's step info with `inventory`, `achievements` (counts so far) and
`player_pos`), `map_seed<N>.txt` (the world's materials at reset, a digit a tile) and
`frames/crafter_t<t>.png` (the screen after step t).

An import replays the actions and checks the player's position, inventory and achievement counts, the
reward, the end of the game, and the screen after each step where the run kept its frames (then kept beside
the trace as `qtc play --frames` keeps them). EMemBench ran unmodified Crafter, which picks the creature it
despawns by memory address: a replay that leaves the log is tried again with other despawn choices
(crafter_despawns.py, `despawn_choices`), and an episode that needed them is written with
`ordered_objects: false`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Callable

import numpy as np

from qtc.dsl import crafter_data
from qtc.errors import UserError
from qtc.files import atomic_path, write_text_atomic
from qtc.runtime.trace.format import episode_id
from qtc.runtime.trace.frames import frames_path

from .choice import Choice
from .crafter_despawns import Despawn, DespawnChoices
from .emembench_format import Divergence, EmembenchLog, Planned, agent_name, not_ended, same

LOG = "logs.jsonl"
FRAMES_FOLDER = "frames"
# The runner keeps crafter.Env's default episode length: its log says done at a death, or at this step.
LENGTH = 10000
# Replays tried for one log, each despawning other creatures, before its divergence is reported.
MAX_REPLAYS = 64


def frame_name(step: int) -> str:
    """The file name of the screen after `step` (0: at reset) in a run's frames folder."""
    return f"crafter_t{step:06d}.png"


class CrafterFormat:
    env = "crafter"
    layout = f"Crafter runs seed<N>/<run>/{LOG}"
    required = ("step", "env", "seed", "action_id", "action_name", "reason", "reward", "done", "frame",
                "info.inventory", "info.achievements", "info.player_pos")
    replays_again = True

    def is_log(self, path: Path) -> bool:
        return path.name == LOG

    def run_name(self, path: Path) -> str:
        return path.parent.name

    def check(self, log: EmembenchLog) -> None:
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

    def write(self, trace_path: Path, header: dict, steps: list[dict], out_dir: Path) -> tuple[Path, list[dict]]:
        """`out_dir/seed<seed>/<agent>/logs.jsonl` with `map_seed<seed>.txt` (and `frames/` when the episode
        kept its frames)."""
        run = Path(out_dir) / f"seed{header['seed']}" / header["agent"]
        frames = _write_frames(trace_path, run / FRAMES_FOLDER)
        write_text_atomic(run / f"map_seed{header['seed']}.txt", map_text(header["map_init"]["rows"]))
        return run / LOG, rows(header, steps, frames)

    def choices(self, log: EmembenchLog) -> list[Choice]:
        return [Choice(crafter_data.ACTIONS[row["action_id"]], row["reason"] or None) for row in log.rows]

    def plan(self, log: EmembenchLog, agent: str, find_rom: Callable[[str], Path], seed: int | None) -> Planned:
        folder = log.path.parent / FRAMES_FOLDER
        return Planned(log, episode_id("crafter", agent, log.seed), log.seed,
                       frames=folder if (folder / frame_name(0)).is_file() else None)

    def session(self, item: Planned, valid_actions: bool):
        from .crafter import CrafterSession

        session = CrafterSession(item.seed, agent_name(item.log.run), len(item.log.rows),
                                 keep_frames=item.frames is not None)
        if item.frames:
            _same_screen(item.log, -1, item.frames, frame_name(0), session.state["frame"])

        def check(session, record: dict) -> None:
            _check(item, record["step"] - 1, session.player, record["reward"], record["done"],
                   session.state["frame"])
        return session, check

    def replay_again(self, item: Planned, pristine):
        choices = despawn_choices(item, pristine.env)
        DespawnChoices(choices).install(pristine.env)
        pristine.ordered_objects = not any(choices.values())
        return pristine


def map_text(rows: list[list[int]]) -> str:
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


def rows(header: dict, steps: list[dict], frames: bool) -> list[dict]:
    """One row per step, as run_crafter_openai.py logs it with its default `--log-info basic` (the same
    rows for a run imported and converted back, but for `model`)."""
    logged, counts = [], dict.fromkeys(crafter_data.ACHIEVEMENTS, 0)
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
        logged.append({
            "episode": 0, "step": step["step"], "env": "crafter", "seed": header["seed"],
            "model": f"qtc:{header['agent']}", "action_id": crafter_data.ACTIONS.index(step["action"]),
            "action_name": step["action"].upper(), "reward": step["reward"],
            "done": step["step"] == header["death_step"] or (step["done"] and step["step"] == LENGTH),
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
    return logged


def _screen(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def _same_screen(log: EmembenchLog, index: int, folder: Path, name: str, played: np.ndarray) -> None:
    """Step index + 1's logged screen (index -1: the one at reset) against the game's."""
    path = folder / name
    where = log.where(max(index, 0))
    if not path.is_file():
        raise UserError(f"{where}: field 'frame': {path} not found (the run's other frames are there)")
    if not np.array_equal(_screen(path), played):
        step = f"step {index + 1}: the screen after it" if index >= 0 else "the screen at reset"
        raise Divergence(f"{where}: {step} differs from the game's ({path})", index + 1)


def _check(item: Planned, index: int, player, reward: float, done: bool, frame: np.ndarray) -> None:
    """Crafter after step index + 1 against the log: what its step info logged, and the screen."""
    log = item.log
    row, info = log.rows[index], log.rows[index]["info"]
    same(log, index, "info.player_pos", info["player_pos"], [int(player.pos[0]), int(player.pos[1])])
    same(log, index, "info.inventory", info["inventory"], dict(player.inventory))
    same(log, index, "info.achievements", info["achievements"], dict(player.achievements))
    same(log, index, "reward", row["reward"], reward)
    if row["done"] and not done:  # the game may end at the run's step limit without the log saying so
        same(log, index, "done", row["done"], done)
    if item.frames:
        _same_screen(log, index, item.frames, row["frame"], frame)
    not_ended(log, index, done)


def _replay(item: Planned, pristine, choices: dict[int, int]) -> tuple[Divergence | None, list[Despawn]]:
    """Replay the log in a copy of the game at reset with these despawn choices: where it diverges (None if
    nowhere) and the despawn draws made."""
    env = copy.deepcopy(pristine)
    despawns = DespawnChoices(dict(choices)).install(env)
    try:
        for index, row in enumerate(item.log.rows):
            frame, reward, done, _ = env.step(row["action_id"])
            _check(item, index, env._player, float(reward), bool(done), frame)
    except Divergence as divergence:
        return divergence, despawns.draws
    return None, despawns.draws


def despawn_choices(item: Planned, pristine) -> dict[int, int]:
    """The despawn choices (crafter_despawns.py) under which the game plays the whole log, found depth
    first: on a divergence, the last despawn draw before it with a creature left untried takes the next
    one and the draws after it start over. Raises the divergence of the replay that went furthest when
    every choice was tried or MAX_REPLAYS replays were made."""
    choices: dict[int, int] = {}
    furthest = None
    for replays in range(1, MAX_REPLAYS + 1):
        divergence, draws = _replay(item, pristine, choices)
        if divergence is None:
            return choices
        if furthest is None or divergence.step > furthest.step:
            furthest = divergence
        open_draws = [number for number, draw in enumerate(draws)
                      if draw.step <= divergence.step and choices.get(number, 0) + 1 < draw.among]
        if not open_draws:
            break
        turned = open_draws[-1]
        turn = choices.get(turned, 0) + 1
        choices = {number: earlier for number, earlier in choices.items() if number < turned}
        choices[turned] = turn
    if replays > 1:
        raise Divergence(f"{furthest} (the furthest of {replays} replays, each despawning other creatures)",
                         furthest.step)
    raise furthest
