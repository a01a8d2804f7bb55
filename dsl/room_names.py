"""Rooms' display names (CONVENTIONS.md, Answers): the title a room printed, numbered when rooms of an
episode share it ("Forest (2)"), in the order the episode first entered them.

The recorder names an episode's rooms so; the store reads each title back (`titles`); under a horizon
the compiler (dsl/ir/emit.py, `horizon_display_name_sql`) and the reference evaluator number the rooms
entered up to it again, as a trace recorded up to the horizon would (CONVENTIONS.md, Horizon).
"""

from __future__ import annotations

import re

_NUMBERED = re.compile(r"^(.*) \(([0-9]+)\)$")


def display_names(titles: dict[int, str]) -> dict[int, str]:
    """Display names for rooms (object number -> title, in order of first visit), disambiguated.

    >>> display_names({7: "Forest", 3: "Clearing", 9: "Forest"})
    {7: 'Forest (1)', 3: 'Clearing', 9: 'Forest (2)'}
    """
    cleaned = {num: title or f"room {num}" for num, title in titles.items()}
    totals: dict[str, int] = {}
    for name in cleaned.values():
        totals[name] = totals.get(name, 0) + 1
    seen: dict[str, int] = {}
    names = {}
    for num, name in cleaned.items():
        if totals[name] > 1:
            seen[name] = seen.get(name, 0) + 1
            names[num] = f"{name} ({seen[name]})"
        else:
            names[num] = name
    return names


def titles(names: list[str]) -> list[str]:
    """Each display name's title: a name numbered as display_names numbers a title two rooms share loses
    its number; any other name is its own title.

    >>> titles(["Forest (1)", "Clearing", "Forest (2)", "Room (1)"])
    ['Forest', 'Clearing', 'Forest', 'Room (1)']
    """
    numbered = [_NUMBERED.match(name) for name in names]
    shared: dict[str, int] = {}
    for match in numbered:
        if match:
            shared[match[1]] = shared.get(match[1], 0) + 1
    return [match[1] if match and shared[match[1]] > 1 else name for match, name in zip(numbered, names)]


def horizon_display_name_sql(rooms: str) -> str:
    """The SQL of display_names over the rows of `rooms` (an alias with title, visited, first_entered)
    a query keeps: visited rooms sharing a title numbered by first entry; others keep their name."""
    group = f"PARTITION BY {rooms}.episode_id, {rooms}.visited, {rooms}.title"
    return (f"CASE WHEN NOT {rooms}.visited OR count(*) OVER ({group}) = 1 THEN {rooms}.title "
            f"ELSE {rooms}.title || ' (' || row_number() OVER ({group} ORDER BY {rooms}.first_entered) || ')' END")
