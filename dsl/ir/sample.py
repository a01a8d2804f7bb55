"""Sampling the bindings of a side: at most `qtc_max_candidates` per episode, without sorting the product.

Two orders of the bindings, each prefix-stable (a larger cap keeps every binding a smaller one kept,
which generate relies on when it raises a template's cap):

- domain (the default): bindings drawn in the parameters' domain space. Each component of linked
  parameters is numbered in its canonical order (sorted bindings), so the episode's bindings are the
  indexes 0..N-1 of the product, N the product of the component sizes, read mixed-radix. A keyed
  permutation of [0, 2^2h) >= N (a four-round Feistel network whose round function is MD5 of the seed,
  the template, the side, the episode, the round and the half) lists the indexes in a seeded order;
  those below N, in the order of their draw, are the sample. So the sample is uniform without
  replacement, costs O(sum of the component sizes + cap) rather than O(N), and depends on MD5 (fixed
  by RFC 1321) rather than on DuckDB's `hash()`, which is not promised stable across versions. The
  draws made per episode and side are as many as land 2 cap + 16 below N on average: (2 cap + 16) /
  p, p = N / 2^2h the share of the permutation's domain below N (at least 1/4, so at most 8 cap + 64
  draws, the number made for every p before qtc 0.17; where p is larger, fewer draws land as many on
  average, with a smaller spread, so the same samples for fewer MD5 rounds). Fewer than cap land only
  when the permutation's domain is nearly all drawn (then it is drawn whole) or with a probability
  below 2^-20.
- compat: the smallest by (DuckDB's seeded `hash()` of the episode and the parameters, then the
  parameters), the order qtc sampled in before the domain order, kept so QA sets made then can be made
  again: a streaming top-N aggregate (`min_by(binding, order, n)`) over the components crossed per
  episode, so the product is hashed but never materialised or sorted; ordering by the whole (hash,
  parameters) struct settles equal hashes as `row_number() OVER (ORDER BY hash, params)` does. Caps
  beyond DuckDB's top-N limit use that window form (`window`), which keeps the same bindings.

A component whose parameters draw from each other's domains (`param first: ... where step < $t`) is a
product. It is a chain where a head (its first parameter, or the pairs of a frame) is followed by a tail
drawn from one domain keyed by the first parameter at most: one value without a condition (a range's two
ends and a material seen before the first), or two distinct values (`where $second != $first`: two rooms
visited before a step). Each binding of the head then has as many completions as the tail domain's
values for it give (m, or m (m - 1)), so prefix sums of those counts over the head number the component
in its canonical order without making it (pair_starts_sql, chain_starts_sql), at the cost of the head
and the domain; and a range's pairs whose requires bound the second step are numbered with each first
value's partners cut to the interval the requires leave them (intervals.py, interval_pair_starts_sql).
(A step and one value keyed by it is a product no larger than that value's domain, and is not taken as a
chain: the keyed top-N below streams it for less.) Any other product component must be enumerated
whatever the order; where a side has one, crossed with nothing but lists the template writes (`param k:
[first, second]`), the domain order keeps the bindings with the smallest keys mixed from their values'
MD5 keys (keyed_top_n_sql) by the same streaming top-N as compat, which no sort and no numbering of that
product can beat. Crossed with another component sized by the trace, that top-N would enumerate the
product of the components (an anchor event and a counted event: the square of the episode's events), so
each component is numbered instead, at the cost of its own size. Conditions never span components
(components are the parameters linked by domains and conditions), so no drawn binding is rejected here;
requires are checked after the sample.
"""

from __future__ import annotations

from dataclasses import dataclass

from qtc.dsl.sql import ident, sql_string

from .sql import CAP_VARIABLE, CAPS_VARIABLE, DEFAULT_CAP, SCOPE, SEED_VARIABLE, key_match, pcol

CAP_SQL = f"COALESCE(TRY_CAST(getvariable({sql_string(CAP_VARIABLE)}) AS BIGINT), {DEFAULT_CAP})"
CAPS_SQL = f"COALESCE(TRY_CAST(getvariable({sql_string(CAPS_VARIABLE)}) AS BIGINT[]), [{CAP_SQL}])"
# Each sampled binding's smallest cap that samples it: the sample at a cap c no larger than the
# statement's is its rows with MIN_CAP_COLUMN <= c (prefix stability, read row by row).
MIN_CAP_COLUMN = "qtc_min_cap"
# Domain draws are as many as land LANDED_PER_CAP x cap + EXTRA_LANDED below N on average.
LANDED_PER_CAP, EXTRA_LANDED = 2, 16
SEED_SQL = f"COALESCE(getvariable({sql_string(SEED_VARIABLE)}), 0)"
MAX_TOP_N = 1_000_000  # DuckDB's min_by(x, order, n) takes n below this
EVERY_CAP = 9223372036854775807  # a bound above every cap


ORDERS = ("domain", "compat")
FEISTEL_ROUNDS = 4
MAX_PRODUCT_BITS = 62  # the permutation's domain 2^2h must fit a BIGINT
GOLDEN_64 = 11400714819323198485  # 2^64 / the golden ratio, odd: multiplying by it mixes the bits upward
MASK_64 = "((1::UHUGEINT << 64) - 1)"


@dataclass(frozen=True)
class Numbered:
    """A component numbered for domain draws: its node, the parameters it binds, and how the binding
    numbered i is found. Plain: the node's row with qtc_i = i (numbered_sql). A frame's pairs, or a chain:
    the node's row with the largest qtc_s <= i (pair_starts_sql, chain_starts_sql), then for a frame the
    second value among `positions` (positions_sql) and for a chain its `tail` last parameters' values
    among `members` (members_sql) for the head's values of `key`."""
    node: str
    params: list[str]
    positions: str | None = None
    members: str | None = None
    key: tuple[str, ...] = ()
    tail: int = 1


def sampling_for(cap: int | None, order: str = "domain") -> str:
    """The sampling plan for a cap and an order: every binding; domain draws; compat's streaming top-N,
    or, for caps beyond what DuckDB's top-N aggregate takes, compat's window sort."""
    if cap is None:
        return "every"
    if order == "domain":
        return "domain"
    return "top_n" if cap < MAX_TOP_N else "window"


def _crossed(components: list[str]) -> str:
    """The components of one episode crossed (only ever inside the sample)."""
    if not components:
        return SCOPE
    return " JOIN ".join([components[0], *(f"{c} USING (episode_id)" for c in components[1:])])


def bindings_sql(components: list[str], params: list[str], *extra: str) -> str:
    """Every binding (no cap): the product itself (with `extra` columns)."""
    columns = ", ".join(["episode_id", *map(pcol, params), *extra])
    return f"SELECT {columns} FROM {_crossed(components)}"


def numbered_sql(component: str, params: list[str]) -> str:
    """A component's bindings numbered 0..n-1 per episode in their canonical (sorted) order, with n."""
    order = ", ".join(map(pcol, params))
    return (f"SELECT *, row_number() OVER (PARTITION BY episode_id ORDER BY {order}) - 1 AS qtc_i, "
            f"count(*) OVER (PARTITION BY episode_id) AS qtc_n FROM {component}")


def _offset(x: int) -> str:
    """A RANGE frame bound `x` after the current row's value (before it where negative)."""
    return f"{abs(x)} {'FOLLOWING' if x >= 0 else 'PRECEDING'}"


def _over(frame: str = "") -> str:
    return f"OVER (PARTITION BY episode_id ORDER BY v{' ' + frame if frame else ''})"


def frame_sql(domain: str, first: str, second: str, bounds: tuple[int, int], keyed: bool = False) -> str:
    """The pairs (first, second) of values of a domain with second - first in bounds: each value's
    partners as one RANGE window frame. `keyed`: the domain's rows carry their value keys (column k),
    and the pairs carry both values' keys (kcol), listed over the same frame, so a product made from
    the pairs is keyed at the cost of the pairs rather than joined to the keys binding by binding."""
    low, high = map(_offset, bounds)
    over = _over(f'RANGE BETWEEN {low} AND {high}')
    keys = (f", k AS {kcol(first)}", f", unnest(qtc_partner_keys) AS {kcol(second)}",
            f", list(k) {over} AS qtc_partner_keys") if keyed else ("", "", "")
    return (f"SELECT episode_id, v AS {pcol(first)}{keys[0]}, unnest(qtc_partners) AS {pcol(second)}{keys[1]} "
            f"FROM (SELECT episode_id, v{', k' if keyed else ''}, list(v) {over} AS qtc_partners{keys[2]} "
            f"FROM {domain})")


def pair_starts_sql(domain: str, first: str, bounds: tuple[int, int], counts: str | None = None,
                    key: tuple[str, ...] = ()) -> str:
    """The pairs of frame_sql numbered without being made: each first value with partners, with how many
    (qtc_c), the number of the first of its pairs in the canonical (first, second) order (qtc_s, a prefix
    sum of the counts), the position among the domain's sorted values of its first partner (qtc_p0: the
    values up to the frame's end less those inside it) and the episode's number of pairs (qtc_n). The
    pair numbered i is then (first, the value at position qtc_p0 + i - qtc_s) for the row with the largest
    qtc_s <= i: what numbered_sql would number i, at the cost of the domain rather than of its pairs.
    With `counts` (chain_counts_sql: a chain's tail domain, keyed by `key`, the first parameter or
    nothing), each pair stands for its qtc_m bindings, one per completion of the tail, and the sums count
    bindings: the one numbered i has the pair numbered (i - qtc_s) // qtc_m among the first's pairs and
    the tail numbered (i - qtc_s) % qtc_m."""
    low, high = map(_offset, bounds)
    counted = (f"SELECT episode_id, v, count(*) {_over(f'RANGE BETWEEN {low} AND {high}')} AS qtc_c, "
               f"count(*) {_over(f'RANGE BETWEEN UNBOUNDED PRECEDING AND {high}')} AS qtc_upto FROM {domain}")
    source, weight, extra = f"({counted})", "qtc_c", ""
    if counts is not None:
        match = " AND ".join(["m.episode_id = c.episode_id", *(f"m.{pcol(p)} = c.v" for p in key)])
        source = f"(SELECT c.*, m.qtc_v, m.qtc_m FROM ({counted}) c JOIN ({counts}) m ON {match})"
        weight, extra = "qtc_c * qtc_m", "qtc_v, qtc_m, "
    summed = (f"SELECT episode_id, v AS {pcol(first)}, qtc_c, {extra}qtc_upto - qtc_c AS qtc_p0, "
              f"{_prefix_sums(weight, 'v')} FROM {source}")
    return f"SELECT * FROM ({summed}) WHERE qtc_c > 0"


def interval_pair_starts_sql(limits: str, positions: str, first: str) -> str:
    """pair_starts_sql for the pairs whose second value lies, for each first value v, between qtc_from and
    qtc_to (limits: intervals.py, a frame's partners cut by requires): its count of such partners (qtc_c)
    and the position of the first of them (qtc_p0), found among the domain's sorted values (`positions`,
    positions_sql), then the prefix sums."""
    counted = (f"SELECT l.episode_id, l.v, coalesce(s.qtc_pos + 1, 0) AS qtc_p0, "
               f"greatest(coalesce(e.qtc_pos + 1, 0) - coalesce(s.qtc_pos + 1, 0), 0) AS qtc_c FROM {limits} l "
               f"ASOF LEFT JOIN {positions} s ON s.episode_id = l.episode_id AND l.qtc_from > s.v "
               f"ASOF LEFT JOIN {positions} e ON e.episode_id = l.episode_id AND l.qtc_to >= e.v")
    summed = (f"SELECT episode_id, v AS {pcol(first)}, qtc_c, qtc_p0, {_prefix_sums('qtc_c', 'v')} "
              f"FROM ({counted})")
    return f"SELECT * FROM ({summed}) WHERE qtc_c > 0"


def chain_counts_sql(domain: str, key: tuple[str, ...], tail: int) -> str:
    """For each value of its key (the head's first parameter, or none: then per episode), how many values
    a chain's tail domain has (qtc_v) and how many completions its tail of one or two distinct values
    has (qtc_m: qtc_v, or qtc_v (qtc_v - 1)); values of the key with none are left out."""
    completions, having = ("count(*)", "") if tail == 1 else ("count(*) * (count(*) - 1)", " HAVING count(*) > 1")
    return (f"SELECT {', '.join(['episode_id', *map(pcol, key)])}, count(*) AS qtc_v, {completions} AS qtc_m "
            f"FROM {domain} GROUP BY ALL{having}")


def chain_starts_sql(head: str, first: str, counts: str, key: tuple[str, ...]) -> str:
    """A chain whose head is one parameter, numbered without being made: each head value with its qtc_m
    completions (counts: chain_counts_sql), the number of its first binding in the canonical order (qtc_s,
    a prefix sum of the counts) and the episode's number of bindings (qtc_n). The binding numbered i is
    the head value of the row with the largest qtc_s <= i and the tail numbered i - qtc_s among its
    completions (drawn from members_sql)."""
    joined = (f"SELECT h.episode_id, h.{pcol(first)}, m.qtc_v, m.qtc_m FROM {head} h JOIN ({counts}) m "
              f"ON {key_match('m', key, 'h')}")
    return f"SELECT *, {_prefix_sums('qtc_m', pcol(first))} FROM ({joined})"


def _prefix_sums(weight: str, order: str) -> str:
    """The number of each row's first binding (qtc_s: the weights of the rows before it in `order`) and
    the episode's number of bindings (qtc_n), a row standing for `weight` bindings."""
    return (f"sum({weight}) OVER (PARTITION BY episode_id ORDER BY {order} ROWS UNBOUNDED PRECEDING) - {weight} "
            f"AS qtc_s, sum({weight}) OVER (PARTITION BY episode_id) AS qtc_n")


def members_sql(domain: str, key: tuple[str, ...]) -> str:
    """A chain's tail domain, its values numbered 0..m-1 in sorted order for each value of its key (qtc_j)."""
    part = ", ".join(["episode_id", *map(pcol, key)])
    return f"SELECT {part}, v, row_number() OVER (PARTITION BY {part} ORDER BY v) - 1 AS qtc_j FROM {domain}"


def positions_sql(domain: str) -> str:
    """A domain's values numbered 0..n-1 per episode in sorted order (qtc_pos)."""
    return f"SELECT episode_id, v, row_number() {_over()} - 1 AS qtc_pos FROM {domain}"


def sizes_sql(numbered: list[str]) -> str:
    """The episodes with the size of each numbered component (qtc_n0, qtc_n1, ...) and their product
    (qtc_N): the episodes with bindings to draw."""
    sizes = " JOIN ".join(f"(SELECT episode_id, any_value(qtc_n) AS qtc_n{i} FROM {name} GROUP BY episode_id)"
                          + (" USING (episode_id)" if i else "") for i, name in enumerate(numbered))
    product = " * ".join(f"qtc_n{i}" for i in range(len(numbered)))
    return (f"SELECT *, CASE WHEN {product} > (1::BIGINT << {MAX_PRODUCT_BITS}) THEN error('more than "
            f"2^{MAX_PRODUCT_BITS} bindings in one episode: too many to sample') ELSE {product} END AS qtc_N "
            f"FROM {sizes}")


def domain_sample_sql(numbered: list[Numbered], sizes: str, params: list[str], stream: str) -> str:
    """The first `cap` bindings of each episode in the seeded permutation of its product's indexes;
    `numbered` are the components (Numbered), `sizes` their sizes (sizes_sql); `stream` names the
    template and side, so each draws its own permutation."""
    kept = ", ".join(f"qtc_n{i}" for i in range(len(numbered)))
    # h: half the bits of the permutation's domain 2^2h >= N (the float log2 corrected where it is short).
    bits = "CAST(ceil(log2(qtc_N)) AS BIGINT)"
    halves = (f"SELECT episode_id, {kept}, qtc_N, greatest(1, (qtc_b + 1) // 2) AS qtc_h FROM (SELECT *, {bits} + "
              f"CASE WHEN (1::BIGINT << {bits}) < qtc_N THEN 1 ELSE 0 END AS qtc_b FROM {sizes})")
    # ceil(landed / p) draws, p = N / 2^2h: (landed << 2h) / N rounded up, in 128 bits (2h is up to 62).
    domain = "(1::HUGEINT << (2 * qtc_h))"
    landed = f"({LANDED_PER_CAP} * {CAP_SQL} + {EXTRA_LANDED})"
    draws = (f"SELECT *, unnest(range(0, CAST(least({domain}, ({landed} * {domain} + qtc_N - 1) // qtc_N) AS BIGINT)))"
             f" AS qtc_j FROM ({halves})")

    def round_function(r: int, half: str) -> str:
        key = f"concat_ws('|', {SEED_SQL}, {sql_string(stream)}, episode_id, {r}, {half})"
        return f"CAST(md5_number_lower({key}) & ((1::UBIGINT << qtc_h) - 1) AS BIGINT)"
    # One SELECT per round, so that each round's halves are computed once, not re-expanded in the next.
    rounds = f"SELECT *, qtc_j >> qtc_h AS qtc_l, qtc_j & ((1::BIGINT << qtc_h) - 1) AS qtc_r FROM ({draws})"
    for r in range(1, FEISTEL_ROUNDS + 1):
        rounds = (f"SELECT * REPLACE (qtc_r AS qtc_l, xor(qtc_l, {round_function(r, 'qtc_r')}) AS qtc_r) "
                  f"FROM ({rounds})")
    permuted = (f"SELECT episode_id, {kept}, qtc_N, qtc_h, qtc_j, (qtc_l << qtc_h) | qtc_r AS qtc_k FROM ({rounds})")
    # A draw is in the sample at cap c when fewer than c landed before it and it is among c's draws:
    # j < (LANDED_PER_CAP c + EXTRA_LANDED) 2^2h / N, so c > (j N - EXTRA_LANDED 2^2h) / (LANDED_PER_CAP 2^2h)
    # (where that is negative, every cap: truncated toward zero it gives 1, as landed does at least).
    among = f"(qtc_j::HUGEINT * qtc_N - {EXTRA_LANDED} * {domain}) // ({LANDED_PER_CAP} * {domain}) + 1"
    chosen = (f"SELECT *, greatest(qtc_landed, CAST({among} AS BIGINT)) AS {MIN_CAP_COLUMN} "
              f"FROM (SELECT *, row_number() OVER (PARTITION BY episode_id ORDER BY qtc_j) AS qtc_landed "
              f"FROM ({permuted}) WHERE qtc_k < qtc_N QUALIFY qtc_landed <= {CAP_SQL})")
    # Each component's index in the draw, read mixed-radix.
    indexes = ", ".join(f"(qtc_k // ({' * '.join(f'qtc_n{later}' for later in range(i + 1, len(numbered))) or '1'}))"
                        f" % qtc_n{i} AS qtc_x{i}" for i in range(len(numbered)))
    joins, found = [], {}
    for i, component in enumerate(numbered):
        found.update((p, f"c{i}.{pcol(p)}") for p in component.params)
        if component.positions is None and component.members is None:
            joins.append(f"JOIN {component.node} c{i} ON c{i}.episode_id = d.episode_id AND c{i}.qtc_i = d.qtc_x{i}")
            continue
        joins.append(f"ASOF JOIN {component.node} c{i} ON c{i}.episode_id = d.episode_id AND d.qtc_x{i} >= c{i}.qtc_s")
        offset = f"(d.qtc_x{i} - c{i}.qtc_s)"  # the binding's number among those of its row of the node
        pair = offset
        if component.members is not None:
            tail = offset  # the number of the tail's completion
            if component.positions is not None:
                pair, tail = f"{offset} // c{i}.qtc_m", f"{offset} % c{i}.qtc_m"
            picked = [tail]
            if component.tail == 2:  # two distinct values: the second's number skips the first's
                first, rest = f"({tail}) // (c{i}.qtc_v - 1)", f"({tail}) % (c{i}.qtc_v - 1)"
                picked = [first, f"{rest} + CASE WHEN {rest} >= {first} THEN 1 ELSE 0 END"]
            for n, (param, number) in enumerate(zip(component.params[-component.tail:], picked)):
                alias = f"m{i}_{n}"
                match = "".join(f" AND {alias}.{pcol(p)} = c{i}.{pcol(p)}" for p in component.key)
                joins.append(f"JOIN {component.members} {alias} ON {alias}.episode_id = d.episode_id{match} "
                             f"AND {alias}.qtc_j = {number}")
                found[param] = f"{alias}.v"
        if component.positions is not None:
            joins.append(f"JOIN {component.positions} r{i} ON r{i}.episode_id = d.episode_id "
                         f"AND r{i}.qtc_pos = c{i}.qtc_p0 + {pair}")
            found[component.params[1]] = f"r{i}.v"
    columns = ["d.episode_id", f"d.{MIN_CAP_COLUMN}", *(f"{found[p]} AS {pcol(p)}" for p in params)]
    return f"SELECT {', '.join(columns)} FROM (SELECT *, {indexes} FROM ({chosen})) d {' '.join(joins)}"


def cut_sql(groups: list[tuple[str, list[tuple[str, str | None]]]]) -> str:
    """The caps of CAPS_SQL (each at most the statement's cap) that cut the sample of some episode on one
    of a group's sides, one row (adversarial, qtc_cap) each. Each group is its adversarial flag (SQL) and
    its sides, each a sample node with the sizes of its numbered components (domain draws, sizes_sql) or
    None (a top-N, or the window sort): a cut cap is one at which a larger cap would draw bindings the sample lacks. Uncut,
    every binding is drawn, so a larger cap draws the very same (the run need not be made again with
    one). The sample at a cap c is its rows with MIN_CAP_COLUMN <= c; so a side's caps that cut are
    those below one bound (_cut_below), and a group's those below the largest of its sides' bounds."""
    caps = f"(SELECT unnest(list_distinct({CAPS_SQL})) AS qtc_cap) l"
    bounds = []
    for adversarial, sides in groups:
        below = [_cut_below(sample, sizes) for sample, sizes in sides]
        bound = below[0] if len(below) == 1 else f"SELECT max(qtc_below) AS qtc_below FROM ({' UNION ALL '.join(below)})"
        bounds.append(f"SELECT {adversarial} AS adversarial, qtc_below FROM ({bound})")
    return f"SELECT q.adversarial, l.qtc_cap FROM {caps} JOIN ({' UNION ALL '.join(bounds)}) q ON l.qtc_cap < q.qtc_below"


def _cut_below(sample: str, sizes: str | None) -> str:
    """One row: the bound (qtc_below) below which a cap cuts the sample of some episode (null: none does).
    A top-N keeps its K rows with MIN_CAP_COLUMN 1..K, K the cap or fewer where it kept every binding:
    cut at each cap up to K. Domain draws keep their landed draws in the order of their draw, MIN_CAP_COLUMN
    never decreasing along it: they kept them all at cap c when they kept N, the product of the component
    sizes (fewer than the cap is not enough: the draws may run out, with a probability below 2^-20),
    and the last of them by c; an episode whose draws did not keep N is cut at every cap."""
    kept = (f"SELECT episode_id, count(*) AS qtc_kept, max({MIN_CAP_COLUMN}) AS qtc_last FROM {sample} "
            f"GROUP BY episode_id")
    if sizes is None:
        return f"SELECT max(qtc_kept) + 1 AS qtc_below FROM ({kept})"
    return (f"SELECT max(CASE WHEN s.qtc_kept = z.qtc_N THEN s.qtc_last ELSE {EVERY_CAP} END) AS qtc_below "
            f"FROM {sizes} z LEFT JOIN ({kept}) s ON s.episode_id = z.episode_id")


def value_key(value: str, episode: str = "episode_id") -> str:
    """A value's MD5 key: the seed, the episode and the value as text."""
    return f"md5_number_lower(concat_ws('|', {SEED_SQL}, {episode}, CAST({value} AS VARCHAR)))"


def kcol(param: str) -> str:
    """The column of a parameter's value key, carried on the rows of a product component."""
    return ident("k_" + param)


def value_keys_sql(domain: str) -> str:
    """Each value of a parameter's domain with its key, once per episode and value however many
    bindings of earlier parameters the domain is keyed by."""
    return f"SELECT episode_id, v, {value_key('v')} AS k FROM (SELECT DISTINCT episode_id, v FROM {domain})"


def keyed_top_n_sql(components: list[str], params: list[str], carried: set[str], keys: dict[str, str],
                    stream: str) -> str:
    """The domain order where a component is a product of dependent domains, which must be enumerated
    whatever the order: the bindings with the smallest keys, a binding's key mixing its values' MD5 keys
    (value_key) in parameter order into a 64-bit integer (multiply by 2^64 / golden ratio, keep 64
    bits), started from MD5 of the seed and `stream`, then the parameters for equal keys; by a streaming
    top-N, so no sort and no string is made per binding. A product component's rows carry their values'
    keys (`carried`, column k_<param>); the other parameters' keys are joined from `keys` (value_keys_sql)."""
    joins = " ".join(f"JOIN {keys[p]} k{i} ON k{i}.episode_id = b.episode_id AND k{i}.v = b.{pcol(p)}"
                     for i, p in enumerate(params) if p not in carried)
    mixed = f"md5_number_lower(concat_ws('|', {SEED_SQL}, {sql_string(stream)}))::UHUGEINT"
    for i, p in enumerate(params):
        key = f"b.{kcol(p)}" if p in carried else f"k{i}.k"
        mixed = f"((xor({mixed}, {key}::UHUGEINT) * {GOLDEN_64}::UHUGEINT) & {MASK_64})"
    binding = "{" + ", ".join(f"{sql_string('p_' + p)}: b.{pcol(p)}" for p in params) + "}"
    # The key fits 64 bits (masked): compared as a UBIGINT, the same order for less work per binding.
    order = "{" + ", ".join([f"'qtc_h': ({mixed})::UBIGINT",
                             *(f"{sql_string('p_' + p)}: b.{pcol(p)}" for p in params)]) + "}"
    columns = ", ".join(["episode_id", *map(pcol, params), *(kcol(p) for p in params if p in carried)])
    return (f"SELECT episode_id, {_unnest_top()} FROM ("
            f"SELECT b.episode_id, min_by({binding}, {order}, greatest({CAP_SQL}, 1)) AS qtc_top "
            f"FROM (SELECT {columns} FROM {_crossed(components)}) b {joins} GROUP BY b.episode_id)")


def _unnest_top() -> str:
    """A streaming top-N's list (qtc_top, in order) as rows, each with its place in the list: the
    smallest cap whose top-N keeps it."""
    top = f"list_slice(qtc_top, 1, {CAP_SQL})"
    return f"unnest({top}, recursive := true), generate_subscripts({top}, 1) AS {MIN_CAP_COLUMN}"


def sample_sql(components: list[str], params: list[str], mode: str) -> str:
    """The sampled bindings of compat's order: `every` binding, the streaming top-N (`top_n`), or the
    `window` sort."""
    if mode == "every":
        return bindings_sql(components, params)
    if not params:
        return f"SELECT episode_id, 1 AS {MIN_CAP_COLUMN} FROM {SCOPE} WHERE {CAP_SQL} >= 1"
    hashed = f"hash({', '.join(['episode_id', *map(pcol, params), SEED_SQL])})"
    if mode == "window":
        order = ", ".join([hashed, *map(pcol, params)])
        rank = f"row_number() OVER (PARTITION BY episode_id ORDER BY {order}) AS {MIN_CAP_COLUMN}"
        return f"{bindings_sql(components, params, rank)} QUALIFY {MIN_CAP_COLUMN} <= {CAP_SQL}"
    binding = "{" + ", ".join(f"{sql_string('p_' + p)}: {pcol(p)}" for p in params) + "}"
    order = "{" + ", ".join([f"'qtc_h': {hashed}", *(f"{sql_string('p_' + p)}: {pcol(p)}" for p in params)]) + "}"
    return (f"SELECT episode_id, {_unnest_top()} FROM ("
            f"SELECT episode_id, min_by({binding}, {order}, greatest({CAP_SQL}, 1)) AS qtc_top "
            f"FROM {_crossed(components)} GROUP BY episode_id)")
