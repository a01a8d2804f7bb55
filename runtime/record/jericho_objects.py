"""Jericho's object tree read from the game's memory, and objects named as the game itself prints them.

The tree. jericho's `get_object` reads only the first 255 or so objects, so a player inside object 269
(advent's repository, after the cave closes) has no location there. The links (parent, sibling,
child) are read here from the Z-machine's object table in the dynamic memory of `get_state()`, for
every object.

Names. An object's short name in the table is often not what the game prints: `tlabel` is "a tan
label", `(players_coin)` "a silver coin", `ChocolateBar_50` "a bar of chocolate", `Loud ` "Loud
Room". `listed_lines` asks the game: in a copy of the state whose memory makes the object the player's
only possession (with nothing inside it), it runs `inventory` and reads the line the game lists the
object on. An object the game does not list (a spell of a spell book, a hint menu, a thing hidden from
the player) has no listed name: it is not a thing one carries. `listed_inside` asks the same of a thing
inside another: the player holding only the other, with only the thing inside, what does the listing
print (a spell on a scroll, a thing in a closed case: nothing but the scroll, the case).
"""

from __future__ import annotations

import gc
import json
import os
import re
import select
import signal
from dataclasses import dataclass

from qtc.processes import die_with_parent

# An object table entry by Z-machine version: (bytes per entry, offset of the parent link, bytes per
# link, words of property defaults before the first entry). Versions 1-3 have 4 attribute bytes and
# one-byte links, later ones 6 attribute bytes and two-byte links (parent, sibling, child in order).
_LAYOUT = {"small": (9, 4, 1, 31), "large": (14, 6, 2, 63)}
_OBJECT_TABLE = 0x0A  # header word: address of the object table


@dataclass(frozen=True)
class ObjectTree:
    """The parent, sibling and child links of every object, read from a copy of the game's memory."""
    ram: object  # the dynamic memory, as in FrotzEnv.get_state()[0]

    @property
    def _layout(self) -> tuple[int, int, int, int]:
        return _LAYOUT["small" if int(self.ram[0]) <= 3 else "large"]

    def _entry(self, num: int) -> int | None:
        size, links, width, defaults = self._layout
        address = (int(self.ram[_OBJECT_TABLE]) << 8 | int(self.ram[_OBJECT_TABLE + 1])) + defaults * 2 + (num - 1) * size
        return address if num > 0 and address + size <= len(self.ram) else None

    def exists(self, num: int) -> bool:
        return self._entry(num) is not None

    def count(self) -> int:
        """How many objects the table holds: it ends where the first object's properties begin."""
        size, _, _, defaults = self._layout
        start = (int(self.ram[_OBJECT_TABLE]) << 8 | int(self.ram[_OBJECT_TABLE + 1])) + defaults * 2
        properties = int(self.ram[start + size - 2]) << 8 | int(self.ram[start + size - 1])
        return max(0, (properties - start) // size)

    def parents(self) -> dict[int, int]:
        """Every object's parent (0 for none), by object number: the table read once, not link by link."""
        size, links, width, defaults = self._layout
        start = (int(self.ram[_OBJECT_TABLE]) << 8 | int(self.ram[_OBJECT_TABLE + 1])) + defaults * 2
        count = min(self.count(), (len(self.ram) - start) // size)
        table = self.ram[start:start + count * size].astype("uint8").reshape(count, size)
        parent = table[:, links].astype("int64")
        if width == 2:
            parent = parent << 8 | table[:, links + 1]
        return dict(zip(range(1, count + 1), parent.tolist()))

    def _link(self, num: int, which: int) -> int:
        address = self._entry(num)
        if address is None:
            return 0
        _, links, width, _ = self._layout
        start = address + links + which * width
        return int.from_bytes(bytes(int(b) for b in self.ram[start:start + width]), "big")

    def parent(self, num: int) -> int:
        return self._link(num, 0)

    def children(self, num: int) -> list[int]:
        found, child = [], self._link(num, 2)
        while child and child not in found:
            found.append(child)
            child = self._link(child, 1)
        return found

    def descendants(self, num: int) -> list[int]:
        """Every object inside `num` at any depth, depth first in the game's order."""
        found: list[int] = []
        pending = self.children(num)[::-1]
        while pending:
            child = pending.pop()
            if child not in found:
                found.append(child)
                pending += self.children(child)[::-1]
        return found

    def attributes(self, num: int) -> bytes:
        """The object's attribute flags (open, transparent...: each game numbers its own), as stored."""
        address = self._entry(num)
        _, links, _, _ = self._layout
        return b"" if address is None else bytes(int(b) for b in self.ram[address:address + links])

    def set_links(self, num: int, parent: int | None = None, sibling: int | None = None,
                  child: int | None = None) -> None:
        address = self._entry(num)
        _, links, width, _ = self._layout
        for which, value in enumerate((parent, sibling, child)):
            if address is not None and value is not None:
                start = address + links + which * width
                self.ram[start:start + width] = list(value.to_bytes(width, "big"))


def tree(env) -> ObjectTree:
    return ObjectTree(env.get_state()[0])


# What a listing puts before a name ("a", "some", "your", "many") and after it: a remark in parentheses
# that starts in lowercase, about the object's state ("(being worn)", "(which is open)", "(providing
# light)"); a capitalised one is part of the name ("Sheet of Paper (Printed)").
_LEADING = re.compile(r"^(?:(?:a|an|the|some|your|many|a few)\s+)", re.IGNORECASE)
_STATE_REMARK = re.compile(r"\s*\([a-z][^()]*\)\s*$")


def clean_listed_name(line: str, keep_the: bool = False) -> str:
    """A name as listed, without its article or state remarks: "A torch (providing light)" -> "torch".

    Room titles keep a leading "the" ("The Troll Room"); the listing's own "a" is dropped.
    """
    name = " ".join(line.split())
    while _STATE_REMARK.search(name):
        name = _STATE_REMARK.sub("", name)
    leading = _LEADING.match(name)
    if leading and not (keep_the and leading.group(0).lower().startswith("the")):
        name = name[leading.end():]
    return name


# A listing that takes more than this much CPU time is taken to hang: some games loop forever listing
# an object that cannot be carried (zork1's Round Room, objects sorcerer keeps out of play). CPU time, not
# time on the clock: on a loaded machine a listing waits for the CPU, and what a trace holds must not
# depend on the machine's load. A listing takes milliseconds.
PROBE_CPU_SECONDS = 2.0
# A copy silent this long on the clock is killed too: a guard against a copy that hangs without running
# (it never happens in a game seen so far), far above any CPU wait.
PROBE_WALL_GUARD = 300.0
# Copies that crash on one chain before the recording stops (a crash is the fork's, not the chain's: it
# has never recurred).
PROBE_CRASHES = 3


def listed_lines(env, nums: list[int]) -> dict[int, str | None]:
    """The line `inventory` lists each object on when it is the player's only possession, else None."""
    player = env.player_obj_num
    objects = tree(env)
    ancestors = set()
    num = objects.parent(player)
    while num and num not in ancestors:  # an ancestor made the player's possession would be a cycle
        ancestors.add(num)
        num = objects.parent(num)
    chains = [(num,) for num in dict.fromkeys(nums) if num != player and num not in ancestors
              and objects.exists(num)]
    listings = _listings(env, chains)
    return {num: (listings[(num,)] or [None])[0] if (num,) in listings else None for num in nums}


def listed_inside(env, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], list[str]]:
    """For each (container, thing), the lines `inventory` prints, after its header, when the player's only
    possession is the container (as it is now: open or closed) with only the thing inside; [] where
    the listing hangs. The container is a thing the player carries, so it is no ancestor of the player."""
    listings = _listings(env, list(dict.fromkeys(pairs)))
    return {pair: listings.get(pair, []) for pair in pairs}


def _listings(env, chains: list[tuple[int, ...]]) -> dict[tuple[int, ...], list[str]]:
    """The listing lines of each chain of objects made the player's only possessions, each inside the one
    before (nothing else inside them); a chain whose listing hangs is left out.

    The game may loop forever listing an object, so the chains are listed in a forked copy of the
    process, one after another, each result sent back as a JSON line; a copy that spends
    PROBE_CPU_SECONDS of CPU on one chain ends (the kernel's profiling timer, whose signal's default action
    ends a process even inside the interpreter's C code), its chain has no listing, and a new copy goes
    on with the rest. A copy that dies of anything else (a fork of a process with threads can crash in
    its after-fork cleanup) says nothing of its chain, so the chain is listed again in a new copy, and
    after PROBE_CRASHES such deaths in a row the recording stops with that error rather than record the
    chain as unlisted. `env` itself is never changed.
    """
    listings: dict[tuple[int, ...], list[str]] = {}
    pending = list(chains)
    crashes = 0
    while pending:
        done, crash = _list_in_a_copy(env, pending)
        listings.update(done)
        if not crash:
            pending = pending[len(done) + 1:]  # the chain after the last answered one hung
            continue
        crashes = 1 if done else crashes + 1
        if crashes == PROBE_CRASHES:
            raise RuntimeError(f"listing objects {pending[len(done)]} in a forked copy of the game: the copy "
                               f"died {crash} {PROBE_CRASHES} times in a row")
        pending = pending[len(done):]  # the chain it crashed on, again
    return listings


def _list_in_a_copy(env, chains: list[tuple[int, ...]]) -> tuple[dict[tuple[int, ...], list[str]], str | None]:
    """Listings of `chains`, in order, from a forked copy, until the copy ends or hangs; and how the copy
    died where it crashed (killed by a signal other than its CPU budget's or the wall guard's), else None."""
    read, write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the copy: list each chain, report, never return
        try:
            die_with_parent(parent)  # a recorder killed outright leaves no copy spinning
            gc.disable()  # the copy frees nothing: collecting objects the parent owns could crash it
            os.close(read)
            with os.fdopen(write, "w") as out:
                signal.signal(signal.SIGPROF, signal.SIG_DFL)
                for chain in chains:
                    signal.setitimer(signal.ITIMER_PROF, PROBE_CPU_SECONDS)  # this chain's CPU, from now
                    out.write(json.dumps(_listing(env, chain)) + "\n")
                    out.flush()
        finally:
            os._exit(0)
    os.close(write)
    found: dict[tuple[int, ...], list[str]] = {}
    buffer = b""
    with os.fdopen(read, "rb") as source:
        while len(found) < len(chains):
            if not select.select([source], [], [], PROBE_WALL_GUARD)[0]:
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(source.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                found[chains[len(found)]] = json.loads(line)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) not in (signal.SIGPROF, signal.SIGKILL):
        return found, f"of {signal.Signals(os.WTERMSIG(status)).name}"
    return found, None


def _listing(env, chain: tuple[int, ...]) -> list[str]:
    """The lines after the header of `inventory` with `chain` the player's possessions, each in the last."""
    state = env.get_state()
    objects = ObjectTree(state[0].copy())
    holder = env.player_obj_num
    objects.set_links(holder, child=chain[0])
    for num, inner in zip(chain, [*chain[1:], 0]):
        objects.set_links(num, parent=holder, sibling=0, child=inner)
        holder = num
    env.set_state((objects.ram, *state[1:]))
    try:
        listing = env.step("inventory")[0]
    finally:
        env.set_state(state)
    lines = [line.strip() for line in listing.splitlines() if line.strip()]
    header = next((i for i, line in enumerate(lines) if line.endswith(":")), None)
    return [] if header is None else lines[header + 1:]
