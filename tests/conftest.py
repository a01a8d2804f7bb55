"""Shared fixtures: short real episodes of both games, recorded once per test session.

- `crafter_recording`: a scripted Crafter episode (seed 0, 200 steps; the player lives) with the live
  game's state,
  read directly from the environment at every step while recording (for verification).
- `crafter_trace_dir`, `jericho_trace_dir`: folders holding one recorded episode each
  (zork1 walkthrough, 30 steps, valid actions included).
- `trace_db`: an in-memory DuckDB store with both episodes loaded.
- `textworld_trace_dir`: a folder holding a TextWorld cooking game (seed 1, qtc's default settings: six rooms,
  doors and containers to open, three ingredients to cook and cut) made by `qtc play textworld --make`, and
  its walkthrough episode (23 steps), played by the command itself; `textworld_db`: a store of it.
- `textworld_llm_trace_dir`: that game played by the llm agent of `qtc play textworld` (20 steps) against the
  OpenAI-compatible stub server on 127.0.0.1, an LLM-like stand-in giving reasons (support/llm_stand_in.py).
- `textworld_keys_trace_dir`: a TextWorld game with a locked door and a locked chest, made by TextWorld's
  GameMaker (support/textworld_keys.py, in a temporary folder), and its walkthrough episode (11 steps: both
  unlocked with their keys, things got in three rooms), played by `qtc play textworld --game`;
  `textworld_keys_db`: a store of it.
- `refusal_traces`: a folder of zork1, detective and sorcerer walkthrough prefixes with commands put in
  that the parser refuses or that change nothing (support/refusals.py).
- `ray_cluster`: a local Ray cluster of 2 CPUs whose workers run qtc installed from a wheel
  (support/ray_head.py), one for every Ray test of the session; it starts in the background, so the
  fixtures a test asks for after it are made meanwhile, and its first `address` waits for it.
"""

from __future__ import annotations

import support.hypothesis_profiles  # noqa: F401  (loads the Hypothesis profile: ci, or HYPOTHESIS_PROFILE=deep)

import atexit
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from support.paths import ROMS
from support.recordings import CRAFTER_STEPS, JERICHO_STEPS, MAP_CHECK_STEPS

# qtc's cache (dsl/cache.py) in a folder of the session's own, not the user's, for the commands the tests
# run in this process and in child processes alike.
if "QTC_CACHE_DIR" not in os.environ:
    os.environ["QTC_CACHE_DIR"] = tempfile.mkdtemp(prefix="qtc-test-cache-")
    atexit.register(shutil.rmtree, os.environ["QTC_CACHE_DIR"], True)


def rom_path(name: str) -> Path:
    path = ROMS / name
    if not path.is_file():
        pytest.skip(f"Jericho story file {path} not found (the tests read ROMs from ../shared/roms)")
    return path


@dataclass
class CrafterRecording:
    path: Path
    live: list[dict] = field(default_factory=list)  # the live game's state after each step
    maps: dict[int, np.ndarray] = field(default_factory=dict)  # step -> live material map (names)


def live_crafter_state(session) -> dict:
    """The state of the live game, read from Crafter's own objects (not from the recorder's record)."""
    player, world = session.env._player, session.env._world
    return {"x": int(player.pos[0]), "y": int(player.pos[1]), "facing": tuple(int(v) for v in player.facing),
            "inventory": dict(player.inventory), "achievements": dict(player.achievements),
            "terrain": world[player.pos][0], "sleeping": bool(player.sleeping),
            "daylight": float(world.daylight), "health": int(player.health)}


def live_map(session) -> np.ndarray:
    world = session.env._world
    names = np.array([world._mat_names[i] for i in range(len(world._mat_names))], dtype=object)
    return names[world._mat_map]


@pytest.fixture(scope="session")
def crafter_recording(tmp_path_factory) -> CrafterRecording:
    from qtc.runtime.record.agents import ScriptedCrafterAgent
    from qtc.runtime.record.crafter import CrafterSession
    from qtc.runtime.record.episodes import record_episode

    directory = tmp_path_factory.mktemp("crafter_traces")
    session = CrafterSession(0, "scripted", CRAFTER_STEPS)
    recording = CrafterRecording(path=Path())
    recording.live.append(live_crafter_state(session))
    recording.maps[0] = live_map(session)

    def verify(session, record) -> None:
        recording.live.append(live_crafter_state(session))
        if record["step"] in MAP_CHECK_STEPS:
            recording.maps[record["step"]] = live_map(session)

    recording.path = record_episode(session, ScriptedCrafterAgent(0), directory, CRAFTER_STEPS, on_step=verify)
    return recording


@pytest.fixture(scope="session")
def crafter_trace_dir(crafter_recording) -> Path:
    return crafter_recording.path.parent


@pytest.fixture(scope="session")
def zork1_rom() -> Path:
    return rom_path("zork1.z5")


@pytest.fixture(scope="session")
def jericho_trace_dir(tmp_path_factory, zork1_rom) -> Path:
    from qtc.runtime.record.agents import WalkthroughAgent
    from qtc.runtime.record.jericho import JerichoSession
    from qtc.runtime.record.episodes import record_episode

    directory = tmp_path_factory.mktemp("jericho_traces")
    session = JerichoSession(zork1_rom, None, "walkthrough")
    record_episode(session, WalkthroughAgent(session.env.get_walkthrough()), directory, JERICHO_STEPS)
    return directory


def _store(*directories: Path):
    """A store of the episodes in `directories`, closed when the session ends."""
    from qtc.runtime.trace.store import open_store

    con = open_store(*directories)
    yield con
    con.close()


@pytest.fixture(scope="session")
def trace_db(crafter_trace_dir, jericho_trace_dir):
    yield from _store(crafter_trace_dir, jericho_trace_dir)


@pytest.fixture(scope="session")
def textworld_trace_dir(tmp_path_factory) -> Path:
    from qtc.cli import main

    directory = tmp_path_factory.mktemp("textworld_traces")
    assert main(["play", "textworld", "--make", "cooking", "--seed", "1", "--agent", "walkthrough",
                 "--out", str(directory), "--quiet"]) == 0
    return directory


@pytest.fixture(scope="session")
def textworld_db(textworld_trace_dir):
    yield from _store(textworld_trace_dir)


@pytest.fixture(scope="session")
def textworld_llm_trace_dir(tmp_path_factory, textworld_trace_dir) -> Path:
    from qtc.cli import main
    from support.llm_stand_in import stand_in
    from support.openai_stub_server import ChatCompletionServer

    directory = tmp_path_factory.mktemp("textworld_llm_traces")
    with ChatCompletionServer(stand_in) as server:
        assert main(["play", "textworld", "--game", str(textworld_trace_dir / "cooking_s1.z8"), "--agent", "llm",
                     "--base-url", server.url, "--model", "stub", "--max-steps", "20", "--out", str(directory),
                     "--quiet"]) == 0
    return directory


@pytest.fixture(scope="session")
def textworld_keys_trace_dir(tmp_path_factory) -> Path:
    from qtc.cli import main
    from support.textworld_keys import make_keys_game

    game = make_keys_game(tmp_path_factory.mktemp("textworld_keys_game"))
    directory = tmp_path_factory.mktemp("textworld_keys_traces")
    assert main(["play", "textworld", "--game", str(game), "--agent", "walkthrough", "--out", str(directory),
                 "--quiet"]) == 0
    return directory


@pytest.fixture(scope="session")
def textworld_keys_db(textworld_keys_trace_dir):
    yield from _store(textworld_keys_trace_dir)


@pytest.fixture(scope="session")
def refusal_traces(tmp_path_factory) -> Path:
    from support.refusals import record_with_refusals

    return record_with_refusals(tmp_path_factory.mktemp("refusals"), rom_path)


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'qtc[ray]')")
    from support.ray_head import LocalRayCluster, regular_install

    cluster = LocalRayCluster(python=str(regular_install(tmp_path_factory.mktemp("installed"))))
    yield cluster
    cluster.stop()
