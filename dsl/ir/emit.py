"""The IR as one DuckDB statement: the horizon cuts, then one CTE per node (fences MATERIALIZED, the
rest left to DuckDB to inline), then the final SELECT."""

from __future__ import annotations

import re
from dataclasses import dataclass

from qtc.dsl import schema
from qtc.dsl.check import CheckedTemplate
from qtc.dsl.events import ROOM_KINDS
from qtc.dsl.room_names import horizon_display_name_sql
from qtc.dsl.sql import sql_string

from .nodes import CARD_PRODUCT, Node, TemplateIR, read_by
from .sql import HORIZON_VARIABLE, NO_HORIZON, cut_name

SAMPLING_NOTES = {"every": "every binding", "domain": "sampled (domain draws, qtc_max_candidates per episode)",
                  "top_n": "sampled (compat order, streaming top-N of qtc_max_candidates)",
                  "window": "sampled (compat order, window sort of qtc_max_candidates)"}


def emit(ir: TemplateIR, checked: CheckedTemplate, horizon: bool = True) -> str:
    """The statement of `ir`; with `horizon` false, the statement of a run that sets no horizon: the tables
    a horizon only takes rows from are read as they are, not through a cut of their own (_read_whole)."""
    template = checked.template
    when = (f"horizon: SET VARIABLE {HORIZON_VARIABLE} = N; (unset: whole episodes)" if horizon else
            f"whole episodes only: a horizon ({HORIZON_VARIABLE}) does not cut every table read")
    header = (f"-- qtc template {ir.template_id} ({checked.env}, {checked.category}, answer {checked.answer_type}); "
              f"{SAMPLING_NOTES[ir.sampling]}\n-- from {template.path}; {when}\n"
              + "".join(f"-- calls Python primitive {call}\n" for call in ir.primitive_calls))
    whole = {} if horizon else _read_whole(ir)
    ctes = [(name, body, fence and _fence_kept(name, ir)) for name, body, fence in _ctes(ir, ir.nodes, whole)]
    return f"{header}{_with(ctes)}\n{_renamed(ir.final, whole)};\n"


# The nodes whose fence stands when one node reads them: the cardinality fences (the sample and what it
# is numbered or keyed by, the demand, a product of parameter domains and what it joins), without which
# DuckDB's estimates let it join before it cuts (inlined, the keyed domain of the long Crafter episode's
# closest_step_in_range product cost it 30%), and the indexes.
KEPT_FENCES = ("scope", "index", "sample", "demand")


def _fence_kept(name: str, ir: TemplateIR) -> bool:
    """Whether a fenced node stays MATERIALIZED in the statement: a cardinality fence or an index, or a
    node read more than once. A node read once is inlined by DuckDB where it is not marked: its fence
    only cost a materialisation (docs/speed.md)."""
    node = ir.node(name)
    readers = [n for n in ir.nodes if name in n.inputs]
    if node.op in KEPT_FENCES or node.card == CARD_PRODUCT or any(n.card == CARD_PRODUCT for n in readers):
        return True
    # Counted by name, not by reader: a body that names a CTE twice makes DuckDB materialise it.
    word = re.compile(rf"\b{re.escape(name)}\b")
    return len(word.findall(ir.final)) + sum(len(word.findall(n.sql)) for n in readers) > 1


@dataclass(frozen=True)
class Probe:
    """A template's probe: `test` is TRUE where the template has no rows (emit_probe), over `ctes`."""
    ctes: tuple[tuple[str, str, bool], ...]  # (name, body, fence), each reading only those before it
    test: str


def emit_probe(ir: TemplateIR) -> Probe | None:
    """The probe TRUE where on every side one of the nodes of TemplateIR.empty_when is empty on every
    episode at the horizon, so that the template's statement would return no rows; None for a template
    without them. Generate runs the probes of many templates as one statement (probes_statement)."""
    if not ir.empty_when:
        return None
    needed = read_by(ir.nodes, [name for names in ir.empty_when for name in names])
    test = " AND ".join("(" + " OR ".join(f"NOT EXISTS (SELECT 1 FROM {name})" for name in names) + ")"
                        for names in ir.empty_when)
    return Probe(tuple(_ctes(ir, [node for node in ir.nodes if node.name in needed])), test)


def probes_statement(probes: list[Probe]) -> str:
    """One statement whose row holds the tests of `probes`, in order. A CTE of the same body over the
    same inputs is computed once for every probe that has it (the templates of one guard share theirs):
    each is named anew, qtc_probe<N>, outside string literals."""
    names: dict[tuple[str, bool], str] = {}
    tests = []
    for probe in probes:
        renamed: dict[str, str] = {}
        for name, body, fence in probe.ctes:
            renamed[name] = names.setdefault((_renamed(body, renamed), fence), f"qtc_probe{len(names)}")
        tests.append(_renamed(probe.test, renamed))
    return f"{_with([(name, body, fence) for (body, fence), name in names.items()])}\nSELECT {', '.join(tests)}"


def _renamed(sql: str, names: dict[str, str]) -> str:
    if not names:
        return sql
    words = re.compile(r"'(?:[^']|'')*'|\b(" + "|".join(map(re.escape, names)) + r")\b")
    return words.sub(lambda match: names[match.group(1)] if match.group(1) else match.group(0), sql)


def _ctes(ir: TemplateIR, nodes: list[Node], whole: dict[str, str] | None = None) -> list[tuple[str, str, bool]]:
    """The horizon cuts and `nodes`, as (name, body, fence); the cuts named in `whole` left out, and read
    as the tables they name."""
    whole = whole or {}
    ctes = [(cut_name(table), horizon_cut(table), False) for table in ir.tables.values()
            if cut_name(table) not in whole]
    return ctes + [(node.name, _renamed(node.sql, whole), node.fence) for node in nodes]


def _read_whole(ir: TemplateIR) -> dict[str, str]:
    """The cuts a run without a horizon reads as their tables (whole_without_horizon), by name."""
    return {cut_name(table): table.sql_name for table in ir.tables.values() if whole_without_horizon(table)}


def whole_without_horizon(table: schema.Table) -> bool:
    """Whether a run that sets no horizon reads `table` as it is rather than through its cut: a table whose
    cut then keeps every row as it is (a step, the step a row is known from and an end cut to the horizon
    are never null: an end that stays is the episode's last step). Each cut costs its statement a CTE,
    2-5% of its CPU (docs/speed.md, fourteenth session). The cuts that rewrite other values stay: the
    episodes' (a death's cause kept only with its step, which a header need not give) and the rooms' and
    the events' (rooms numbered as entered by then)."""
    return table not in (schema.EPISODES, schema.EVENTS, schema.JERICHO_ROOMS)


def _with(ctes: list[tuple[str, str, bool]]) -> str:
    return "WITH " + ",\n".join(f"{name} AS {'MATERIALIZED ' if fence else ''}(\n  {body}\n)" for name, body, fence in ctes)


# The horizon, N or (unset) no end: DuckDB reads the variable as a constant when it binds the statement, so
# the cuts below are plain filters (a subquery of a CTE holding it planned a join into every table read:
# 4% of a small statement's CPU on five Jericho walkthroughs: docs/speed.md, sixth session).
HORIZON = f"COALESCE(TRY_CAST(getvariable({sql_string(HORIZON_VARIABLE)}) AS BIGINT), {NO_HORIZON})"

_KNOWN_ROOMS = (f"FROM {schema.JERICHO_ROOMS.sql_name} r "
                f"WHERE coalesce(r.{schema.JERICHO_ROOMS.known_from}, 0) <= {HORIZON}")


def horizon_cut(table: schema.Table) -> str:
    """A table as seen at the horizon: the steps up to it, and an episode that ran past it as cut there."""
    if table == schema.EPISODES:  # by value: a library read from the cache holds copies of the tables
        return (f"SELECT * REPLACE (least(n_steps, {HORIZON}) AS n_steps, "
                f"CASE WHEN n_steps > {HORIZON} THEN 'horizon' ELSE ended_by END AS ended_by, "
                f"CASE WHEN death_step <= {HORIZON} THEN death_step END AS death_step, "
                f"CASE WHEN death_step <= {HORIZON} THEN death_cause END AS death_cause) FROM episodes")
    if table.known_from:  # a table without steps: the rows known by the horizon (schema.Column.known_from)
        if table == schema.JERICHO_ROOMS:  # numbered among the rooms entered by then
            return f"SELECT r.* REPLACE ({horizon_display_name_sql('r')} AS display_name) {_KNOWN_ROOMS}"
        return f"SELECT r.* FROM {table.sql_name} r WHERE coalesce(r.{table.known_from}, 0) <= {HORIZON}"
    if table == schema.EVENTS:  # a room's events name it as the rooms entered by then do
        kinds = ", ".join(sql_string(kind) for kind in ROOM_KINDS)
        return (f"SELECT e.* REPLACE (coalesce(n.display_name, e.subject) AS subject) FROM events e LEFT JOIN ("
                f"SELECT r.episode_id, r.display_name AS recorded, {horizon_display_name_sql('r')} AS display_name "
                f"{_KNOWN_ROOMS}) n ON n.episode_id = e.episode_id AND n.recorded = e.subject AND e.kind IN ({kinds}) "
                f"WHERE e.step <= {HORIZON}")
    if table.horizon_ends:
        ends = ", ".join(f"least({name}, {HORIZON}) AS {name}" for name in table.horizon_ends)
        return f"SELECT * REPLACE ({ends}) FROM {table.sql_name} WHERE step <= {HORIZON}"
    if table.has_step:
        return f"SELECT * FROM {table.sql_name} WHERE step <= {HORIZON}"
    return f"SELECT * FROM {table.sql_name}"
