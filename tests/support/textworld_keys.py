"""A small TextWorld game with locks and keys, made by TextWorld's own GameMaker at test time (a second):
the one TextWorld episode of the tests that unlocks anything (the cooking game locks nothing).

The hall (where the player starts) has a brass key and an old coin on its floor and a locked oak door
east to the study, which the brass key unlocks; the cellar, south of the hall, a silver key on a dusty
shelf; the study a locked wooden chest, which the silver key unlocks, holding a red gem. The game's own
walkthrough (WALKTHROUGH, kept in its metadata as TextWorld's cooking games keep theirs) takes the key and
the coin in the hall, the silver key in the cellar, unlocks the door and the chest with their keys and
takes the gem: things got in three rooms, two of them in the hall. The quest is won holding the gem and
the coin.
"""

from __future__ import annotations

from pathlib import Path

WALKTHROUGH = ["take brass key", "take old coin", "go south", "take silver key from dusty shelf", "go north",
               "unlock oak door with brass key", "open oak door", "go east", "unlock wooden chest with silver key",
               "open wooden chest", "take red gem from wooden chest"]
# What each locked thing is unlocked with, and at which step of the walkthrough.
UNLOCKED = {"oak door": ("brass key", 6), "wooden chest": ("silver key", 9)}


def make_keys_game(directory: Path) -> Path:
    """Compile the game into `directory` (keys.z8, with TextWorld's world beside it as keys.json)."""
    import textworld
    from textworld.generator.game import Event, Quest

    options = textworld.GameOptions()
    options.seeds = 1  # the grammar's descriptions of rooms and things, the same every time
    maker = textworld.GameMaker(options)
    hall, study, cellar = maker.new_room("hall"), maker.new_room("study"), maker.new_room("cellar")
    maker.set_player(hall)
    door = maker.new_door(maker.connect(hall.east, study.west), name="oak door")
    door.add_property("locked")
    maker.connect(hall.south, cellar.north)

    def thing(kind: str, name: str, where):
        entity = maker.new(type=kind, name=name)
        where.add(entity)
        return entity

    brass, coin = thing("k", "brass key", hall), thing("o", "old coin", hall)
    silver = thing("k", "silver key", thing("s", "dusty shelf", cellar))
    chest = thing("c", "wooden chest", study)
    chest.add_property("locked")
    gem = thing("o", "red gem", chest)
    maker.add_fact("match", brass, door)
    maker.add_fact("match", silver, chest)
    carried = {maker.new_fact("in", gem, maker.inventory), maker.new_fact("in", coin, maker.inventory)}
    maker.quests = [Quest(win_events=[Event(conditions=carried)])]
    game = maker.build()
    game.objective = "Find the red gem and take it, with the old coin."
    game.metadata["walkthrough"] = WALKTHROUGH
    options.path = str(Path(directory) / "keys.z8")
    options.force_recompile = True
    return Path(textworld.generator.compile_game(game, options))
