"""Sampling the bindings of a side: at most `qtc_max_candidates` per episode, without sorting the product.

The bindings kept are the smallest by (a seeded hash of the episode and the parameters, then the
parameters), as `row_number() OVER (... ORDER BY hash, params)` would keep them (the order the first
emitter sampled in, so questions stayed the same when the IR replaced it). It is a streaming top-N
aggregate (`min_by(binding, order, n)`) over the components crossed per episode, so the product is
hashed but never materialised or sorted. Ordering by the whole (hash, parameters) struct settles equal
hashes exactly as that ORDER BY does, so no tie can change the sample; a larger cap keeps every binding
a smaller one kept.
"""

from __future__ import annotations

from qtc.dsl.sql import sql_string

from .sql import CAP_VARIABLE, NO_HORIZON, SCOPE, SEED_VARIABLE, pcol

CAP_SQL = f"COALESCE(TRY_CAST(getvariable({sql_string(CAP_VARIABLE)}) AS BIGINT), {NO_HORIZON})"
SEED_SQL = f"COALESCE(getvariable({sql_string(SEED_VARIABLE)}), 0)"
MAX_TOP_N = 1_000_000  # DuckDB's min_by(x, order, n) takes n below this


def sampling_for(cap: int | None) -> str:
    """How to sample for a cap: every binding, a streaming top-N, or (caps beyond what DuckDB's top-N
    aggregate takes) a window sort that keeps the same bindings."""
    if cap is None:
        return "every"
    return "top_n" if cap < MAX_TOP_N else "window"


def _crossed(components: list[str]) -> str:
    """The components of one episode crossed (only ever inside the sample)."""
    if not components:
        return SCOPE
    return " JOIN ".join([components[0], *(f"{c} USING (episode_id)" for c in components[1:])])


def bindings_sql(components: list[str], params: list[str]) -> str:
    """Every binding (no cap): the product itself."""
    columns = ", ".join(["episode_id", *map(pcol, params)])
    return f"SELECT {columns} FROM {_crossed(components)}"


def sample_sql(components: list[str], params: list[str], mode: str) -> str:
    """The sampled bindings: `every` binding, the `top_n` aggregate, or the `window` sort."""
    if mode == "every":
        return bindings_sql(components, params)
    if not params:
        return f"SELECT episode_id FROM {SCOPE} WHERE {CAP_SQL} >= 1"
    if mode == "window":
        order = ", ".join([f"hash({', '.join(['episode_id', *map(pcol, params), SEED_SQL])})", *map(pcol, params)])
        return (f"{bindings_sql(components, params)} QUALIFY row_number() OVER (PARTITION BY episode_id "
                f"ORDER BY {order}) <= {CAP_SQL}")
    binding = "{" + ", ".join(f"{sql_string('p_' + p)}: {pcol(p)}" for p in params) + "}"
    hashed = f"hash({', '.join(['episode_id', *map(pcol, params), SEED_SQL])})"
    order = "{" + ", ".join([f"'qtc_h': {hashed}", *(f"{sql_string('p_' + p)}: {pcol(p)}" for p in params)]) + "}"
    return (f"SELECT episode_id, unnest(list_slice(qtc_top, 1, {CAP_SQL}), recursive := true) FROM ("
            f"SELECT episode_id, min_by({binding}, {order}, greatest({CAP_SQL}, 1)) AS qtc_top "
            f"FROM {_crossed(components)} GROUP BY episode_id)")
