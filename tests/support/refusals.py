"""Short Jericho episodes with commands put in that the parser refuses or that change nothing: zork1 and
two other games, each the start of its walkthrough with JUNK after the fourth command (tests of events,
rejected commands and the effect templates)."""

from __future__ import annotations

from pathlib import Path

# Commands put in (steps 5 to 9): "inventory" is understood and changes nothing; a command the game
# understood and turned down (zork1's "take zorkmid": "You can't be serious.") or completed ("take"
# takes what is at hand) is not refused.
JUNK = ["inventory", "xyzzyq", "inventory", "take zorkmid", "take"]
# The steps whose command each game's parser refused.
REFUSED = {"zork1": {6}, "detective": {6, 8}, "sorcerer": {6, 8}}
ROMS = {"zork1": "zork1.z5", "detective": "detective.z5", "sorcerer": "sorcerer.z3"}
STEPS = 16


def record_with_refusals(directory: Path, rom_path) -> Path:
    """The three episodes recorded into `directory` (`rom_path(name)` finds a story file or skips)."""
    from qtc.runtime.record.agents import WalkthroughAgent
    from qtc.runtime.record.episodes import record_episode
    from qtc.runtime.record.jericho import JerichoSession

    for game, rom in ROMS.items():
        session = JerichoSession(rom_path(rom), None, "walkthrough", record_valid_actions=False)
        walkthrough = session.env.get_walkthrough()
        commands = walkthrough[:4] + JUNK + walkthrough[4:STEPS - len(JUNK)]
        record_episode(session, WalkthroughAgent(commands), directory, len(commands))
    return directory
