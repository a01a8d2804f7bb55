"""What the trace format says of a trace as a whole, beyond each line's fields (docs/trace-format.md,
Consistency): checked at load, so that a trace that loads is one every template can run on.

Each line of a trace can be well formed while the lines disagree: a Jericho room listed twice in the
header (a room's name is then two rows where a question reads one), or a Crafter map whose rows differ
in length, a position, a change or a seen cell off the map (the spatial primitives index the map by
them). Each is refused with the file, the line and the field, as the reader refuses a malformed line.

The Crafter checks run in SQL over the step lines the store's reader holds (`crafter_lines`,
`crafter_states`, `crafter_map_read`: runtime/trace/store.py); the header checks in Python.
"""

from __future__ import annotations

import duckdb

from qtc.errors import UserError

from .format import TraceText

# The map's size per file: rows[y][x], every row as long as the first (checked below).
_SIZES = "SELECT file, len(rows) AS height, len(rows[1]) AS width FROM crafter_map_read"

# (line, field, what is wrong) of each cell, position or change off the map, as SQL over crafter_lines
# and crafter_states; `line` is the trace's line (the header is line 1, step s is line s + 1).
_OFF_MAP = [
    *(f"SELECT l.file, l.line, '{field}', 'position ' || rec.{field} || ' is off the map (0 to ' || "
      f"({size} - 1) || ')' FROM crafter_lines l JOIN sizes USING (file) WHERE rec.{field} NOT BETWEEN 0 AND {size} - 1"
      for field, size in (("x_before", "width"), ("y_before", "height"), ("x_after", "width"),
                          ("y_after", "height"))),
    "SELECT c.file, c.line, 'map_changes[' || (c.k - 1) || ']', 'cell (' || c.change.x || ', ' || c.change.y || ') "
    "is off the map (' || width || ' x ' || height || ')' FROM (SELECT file, line, unnest(rec.map_changes) AS change, "
    "generate_subscripts(rec.map_changes, 1) AS k FROM crafter_lines) c JOIN sizes USING (file) "
    "WHERE c.change.x NOT BETWEEN 0 AND width - 1 OR c.change.y NOT BETWEEN 0 AND height - 1",
    "SELECT v.file, v.step + 1, CASE WHEN v.step = 0 THEN 'initial.' ELSE '' END || 'view.rows[' || (v.j - 1) || "
    "'][' || (v.i - 1) || ']', 'a material seen at (' || (v.x + v.i - 1) || ', ' || (v.y + v.j - 1) || ') is off "
    "the map (' || width || ' x ' || height || '); cells off the map are null' "
    "FROM (SELECT file, step, x, y, j, unnest(row) AS material, generate_subscripts(row, 1) AS i FROM ("
    "SELECT file, step, view.x AS x, view.y AS y, unnest(view.rows) AS row, generate_subscripts(view.rows, 1) AS j "
    "FROM crafter_states)) v JOIN sizes USING (file) WHERE v.material IS NOT NULL "
    "AND (v.x + v.i - 1 NOT BETWEEN 0 AND width - 1 OR v.y + v.j - 1 NOT BETWEEN 0 AND height - 1)",
]


def check_consistency(reader: duckdb.DuckDBPyConnection, traces: list[TraceText]) -> None:
    """Raise a UserError naming the file, line and field of the first inconsistency of `traces`, whose
    lines the reader has read (crafter_lines, crafter_states and crafter_map_read when Crafter's)."""
    for trace in traces:
        _check_header(trace)
    if not any(trace.header["env"] == "crafter" for trace in traces):
        return
    reader.execute(f"CREATE OR REPLACE TEMP TABLE sizes AS {_SIZES}")
    first = reader.execute(f"SELECT * FROM ({' UNION ALL '.join(_OFF_MAP)}) ORDER BY 1, 2, 3 LIMIT 1").fetchone()
    if first:
        number, line, field, reason = first
        raise UserError(f"{traces[number].path}:{line}: field '{field}': {reason}")


def _check_header(trace: TraceText) -> None:
    where, header = f"{trace.path}:1", trace.header
    if header["env"] in ("jericho", "textworld"):
        seen: dict[int, int] = {}
        for i, room in enumerate(header["rooms"]):
            if room["room"] in seen:
                raise UserError(f"{where}: field 'rooms[{i}].room': room {room['room']} is listed again "
                                f"(first as rooms[{seen[room['room']]}])")
            seen[room["room"]] = i
        return
    rows = header["map_init"]["rows"]
    if not rows or not rows[0]:
        raise UserError(f"{where}: field 'map_init.rows': the map has no cells")
    for y, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise UserError(f"{where}: field 'map_init.rows[{y}]': {len(row)} cells, where row 0 has {len(rows[0])}")
    initial = header["initial"]
    for field, size in (("x", len(rows[0])), ("y", len(rows))):
        if not 0 <= initial[field] < size:
            raise UserError(f"{where}: field 'initial.{field}': position {initial[field]} is off the map "
                            f"(0 to {size - 1})")
