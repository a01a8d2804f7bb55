"""The listings a Jericho recording asks of a forked copy of the game (runtime/record/jericho_objects.py)
do not depend on the machine's load: a copy that waits (here: sleeps, as it waits for the CPU on a loaded
machine) longer than a listing's CPU budget still gives its listings, and one that spins past the budget
is left out while the chains after it are still listed. Before, a listing silent for 2 s on the clock
was taken to hang, so a busy machine recorded other traces. A copy that crashes (a fork of a process with
threads can) is listed again, and one that always crashes stops the recording, rather than record the
chain as unlisted."""

from __future__ import annotations

import os
import signal
import time

import jericho
import pytest

from qtc.runtime.record import jericho_objects
from conftest import rom_path


@pytest.fixture
def zork1_env():
    env = jericho.FrotzEnv(str(rom_path("zork1.z5")))
    env.reset()
    yield env
    env.close()


def chains(env) -> list[tuple[int, ...]]:
    """A door (which no listing names) and the leaflet, each alone as the player's only possession."""
    numbers = {obj.name: obj.num for obj in env.get_world_objects()[1:]}
    return [(numbers["door"],), (numbers["leaflet"],)]


def test_a_copy_that_waits_past_the_budget_still_lists(zork1_env, monkeypatch):
    expected = jericho_objects._listings(zork1_env, chains(zork1_env))
    real = jericho_objects._listing

    def slow(env, chain):
        time.sleep(jericho_objects.PROBE_CPU_SECONDS + 0.5)  # on the clock, no CPU
        return real(env, chain)

    monkeypatch.setattr(jericho_objects, "_listing", slow)
    assert jericho_objects._listings(zork1_env, chains(zork1_env)) == expected


def test_a_listing_that_spins_past_its_cpu_budget_is_left_out_and_the_rest_listed(zork1_env, monkeypatch):
    first, *rest = chains(zork1_env)
    expected = jericho_objects._listings(zork1_env, rest)
    assert expected == {(rest[0]): ["A leaflet"]}
    real = jericho_objects._listing

    def spinning_first(env, chain):
        while chain == first:
            pass
        return real(env, chain)

    monkeypatch.setattr(jericho_objects, "PROBE_CPU_SECONDS", 0.5)
    monkeypatch.setattr(jericho_objects, "_listing", spinning_first)
    assert jericho_objects._listings(zork1_env, [first, *rest]) == expected


def die_of_sigterm():
    """End this process by a signal that is neither the CPU budget's nor the wall guard's, whatever
    handler the process that forked it set."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def test_a_copy_that_crashes_is_listed_again_not_left_out(zork1_env, monkeypatch, tmp_path):
    expected = jericho_objects._listings(zork1_env, chains(zork1_env))
    real = jericho_objects._listing
    crashed = tmp_path / "crashed"

    def crashing_once(env, chain):
        if not crashed.exists():  # the copies are processes: the mark is a file
            crashed.touch()
            die_of_sigterm()
        return real(env, chain)

    monkeypatch.setattr(jericho_objects, "_listing", crashing_once)
    assert jericho_objects._listings(zork1_env, chains(zork1_env)) == expected


def test_a_copy_that_always_crashes_stops_the_recording(zork1_env, monkeypatch):
    monkeypatch.setattr(jericho_objects, "_listing", lambda env, chain: die_of_sigterm())
    with pytest.raises(RuntimeError, match="died of SIGTERM 3 times in a row"):
        jericho_objects._listings(zork1_env, chains(zork1_env))
