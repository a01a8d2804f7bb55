"""Sampling (dsl/ir/sample.py). The domain order draws exactly the bindings its definition gives,
worked out here in Python from MD5 (a Feistel permutation of the product's indexes), on hand-written
episodes. Compat's streaming top-N aggregate keeps exactly the bindings that sorting every binding by
the seeded hash order would keep (the window form, which caps beyond DuckDB's top-N limit use), row
for row on rich episodes of both games (cap 3, seed 42 in CI; caps 1, 3 and 16 and two seeds when
deep) and on the real recorded episodes (cap 16, under a horizon; and without one when deep). A larger
cap keeps every binding a smaller one kept, where a statement says the cap cut no sample of a side a
larger cap gives that side the very same rows, and a run at a larger cap gives the rows of a smaller
one (in the domain order, on the library's sample of SAMPLE_LIBRARY; in compat's too, on every template,
when deep)."""

from __future__ import annotations

import pytest
import hashlib
import itertools

from support.ground_truth import library, store_of, templates_for
from support.handmade import compile_source, make_db, template
from support.hypothesis_profiles import cases
from support.recordings import SAMPLE_LIBRARY
from support.strategies import seeded_episode

from qtc.dsl.compile import statement
from qtc.dsl.library import load_library

from qtc.dsl.ir.emit import emit
from qtc.dsl.ir.lower import CUT_COLUMN, lower
from qtc.dsl.ir.sample import MIN_CAP_COLUMN
from qtc.dsl.ir.sql import CAPS_VARIABLE

CAPS = cases(ci=(3,), deep=(1, 3, 16))
SEEDS = cases(ci=(42,), deep=(42, 7))
RICH_SEEDS = {"jericho": (3,), "crafter": (5, 6)}


def rows(con, compiled, sampling: str, cap: int, seed: int, cut: bool = False) -> list[tuple]:
    con.execute(f"SET VARIABLE qtc_seed = {seed}")
    con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
    result = con.execute(emit(lower(compiled.checked, sampling, premise=True, cut=cut), compiled.checked))
    return [tuple(d[0] for d in result.description), *result.fetchall()]


def assert_same_rows(con, compiled, cap: int, seed: int) -> None:
    top_n, window = (rows(con, compiled, mode, cap, seed) for mode in ("top_n", "window"))
    assert top_n == window, f"{compiled.id}, cap {cap}, seed {seed}: {len(top_n) - 1} vs {len(window) - 1} rows"


def keys(table: list[tuple], adversarial: bool | None = None) -> set[str]:
    """The (episode, adversarial, bindings...) of each candidate row (of one side, if `adversarial` is
    given)."""
    columns = table[0]
    wanted = [i for i, c in enumerate(columns) if c in ("episode_id", "adversarial") or c.startswith("p_")]
    cut, side = (columns.index(c) if c in columns else None for c in (CUT_COLUMN, "adversarial"))
    return {repr(tuple(row[i] for i in wanted)) for row in table[1:]
            if (cut is None or row[cut] is None) and adversarial in (None, row[side])}


def cut_sides(table: list[tuple], cap: int | None = None) -> set[bool]:
    """The sides (adversarial or not) whose statement says the cap (`cap`, of those it was told of) cut a
    sample."""
    columns = table[0]
    if CUT_COLUMN not in columns:
        return set()
    return {row[columns.index("adversarial")] for row in table[1:]
            if row[columns.index(CUT_COLUMN)] is not None and cap in (None, row[columns.index(CUT_COLUMN)])}


@pytest.mark.parametrize("env", sorted(RICH_SEEDS))
@pytest.mark.parametrize("cap", CAPS)
def test_the_top_n_aggregate_keeps_the_bindings_of_the_hash_order_on_rich_episodes(env, cap):
    store = store_of([seeded_episode(env, seed) for seed in RICH_SEEDS[env]])
    store.con.execute("RESET VARIABLE qtc_horizon")
    for compiled in templates_for(env):
        for seed in SEEDS:
            assert_same_rows(store.con, compiled, cap, seed)


def test_the_top_n_aggregate_keeps_the_bindings_of_the_hash_order_on_recorded_episodes(trace_db):
    for horizon in cases(ci=(12,), deep=(None, 12)):
        trace_db.execute("RESET VARIABLE qtc_horizon" if horizon is None else f"SET VARIABLE qtc_horizon = {horizon}")
        for compiled in library():
            assert_same_rows(trace_db, compiled, 16, 42)
    trace_db.execute("RESET VARIABLE qtc_horizon")


@pytest.mark.parametrize("sampling", cases(ci=("domain",), deep=("domain", "top_n")))
def test_a_larger_cap_keeps_every_binding_a_smaller_one_kept(trace_db, sampling):
    """What generate relies on when it doubles a template's cap: raising it only adds bindings; and a
    run at the larger cap told of the smaller one gives, row for row, what a run at the smaller one gives
    (its candidates whose binding the smaller cap samples, and whether that cap cut a sample)."""
    trace_db.execute("RESET VARIABLE qtc_horizon")
    answerable_cut = []
    # In CI the library's sample of the run tests (both games, `env any`, five categories, both kinds of
    # spatial primitive, multiple choice): each template's two statements take about 0.2 s.
    checked = cases(ci=tuple(c.id for c in load_library(SAMPLE_LIBRARY).compiled), deep=tuple(c.id for c in library()))
    for compiled in (c for c in library() if c.id in checked):
        small = rows(trace_db, compiled, sampling, 3, 42, cut=True)
        trace_db.execute(f"SET VARIABLE {CAPS_VARIABLE} = [3, 6]")
        large = rows(trace_db, compiled, sampling, 6, 42, cut=True)
        trace_db.execute(f"RESET VARIABLE {CAPS_VARIABLE}")
        assert keys(small) <= keys(large), compiled.id
        for side in {False, True} - cut_sides(small):  # uncut: every binding was drawn already
            assert keys(small, side) == keys(large, side), (compiled.id, side)
        assert cut_sides(large, 6) <= cut_sides(small), compiled.id
        assert at_cap(large, 3) == at_cap(small, 3) and cut_sides(large, 3) == cut_sides(small), compiled.id
        answerable_cut.append(False in cut_sides(small))
    assert any(answerable_cut) and not all(answerable_cut)  # the test sees both cases


def at_cap(table: list[tuple], cap: int) -> list[str]:
    """The candidate rows whose binding `cap` samples (as text, sorted)."""
    columns = table[0]
    least, cut = columns.index(MIN_CAP_COLUMN), columns.index(CUT_COLUMN)
    return sorted(repr(row) for row in table[1:] if row[cut] is None and row[least] <= cap)


def reference_draws(seed: int, stream: str, episode: str, sizes: list[int], cap: int) -> list[tuple[int, ...]]:
    """The domain order's first `cap` bindings, as component indexes, from its definition: a four-round
    Feistel permutation of [0, 2^2h) (round function: the low half of MD5 of seed|stream|episode|round|half,
    read little-endian), its values below N = the product of the sizes in draw order, read mixed-radix
    (the last component varies fastest); as many draws as land 2 cap + 16 below N on average, (2 cap +
    16) 2^2h / N rounded up."""
    n = 1
    for size in sizes:
        n *= size
    h = max(1, ((n - 1).bit_length() + 1) // 2)
    mask = (1 << h) - 1

    def round_function(r: int, half: int) -> int:
        digest = hashlib.md5(f"{seed}|{stream}|{episode}|{r}|{half}".encode()).digest()
        return int.from_bytes(digest[8:], "little") & mask
    drawn = []
    for j in range(min(1 << 2 * h, -(-((2 * cap + 16) << 2 * h) // n))):
        left, right = j >> h, j & mask
        for r in range(1, 5):
            left, right = right, left ^ round_function(r, right)
        k = (left << h) | right
        if k < n and len(drawn) < cap:
            indexes = []
            for size in reversed(sizes):
                k, index = divmod(k, size)
                indexes.append(index)
            drawn.append(tuple(reversed(indexes)))
    return drawn


@pytest.mark.parametrize("cap", (1, 3, 5, 40))
def test_the_domain_order_draws_the_bindings_its_definition_gives(cap):
    """Two independent parameters (two components): the steps 1..8 of the episode and the five actions of
    the game's vocabulary, 40 bindings; the SQL's sample is the reference's, whatever the cap."""
    con = make_db()
    (compiled,) = compile_source(template("crafter", """
  param t: steps.step
  param a: vocab.action
  question "{{ t }} {{ a }}"
  answer $a
  evidence $t""", "action"))
    con.execute("SET VARIABLE qtc_seed = 7")
    con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
    got = sorted((t, a) for _, t, a in con.execute(
        f"SELECT episode_id, p_t, p_a FROM ({statement(compiled, cap, order='domain').rstrip().rstrip(';')})").fetchall())
    steps = sorted(t for (t,) in con.execute("SELECT step FROM crafter_steps WHERE episode_id = 'c1'").fetchall())
    actions = sorted(a for (a,) in con.execute("SELECT value FROM vocab WHERE kind = 'action'").fetchall())
    expected = sorted((steps[i], actions[j]) for i, j in
                      reference_draws(7, "crafter.t|main", "c1", [len(steps), len(actions)], cap))
    assert got == expected and len(got) == min(cap, len(steps) * len(actions))
    assert set(itertools.product(steps, actions)) >= set(got)


@pytest.mark.parametrize("cap", (1, 3, 40))
def test_components_of_dependent_parameters_crossed_are_numbered_not_enumerated(cap):
    """Two components each of dependent parameters (a pair of steps; an action and a step it was taken
    at): the domain order numbers each (its bindings sorted) and draws from their product as it does
    from independent parameters, so that no statement crosses the components before the sample (the
    keyed top-N would: the product of an anchor event and a counted event)."""
    con = make_db()
    (compiled,) = compile_source(template("crafter", """
  param t: steps.step
  param u: steps.step where $u > $t
  param a: vocab.action
  param s: (steps | where action == $a).step
  question "{{ t }} {{ u }} {{ a }} {{ s }}"
  answer $a
  evidence $t, $u, $s""", "action"))
    sql = statement(compiled, cap, order="domain")
    assert "min_by(" not in sql
    con.execute("SET VARIABLE qtc_seed = 7")
    con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
    got = sorted(con.execute(f"SELECT p_t, p_u, p_a, p_s FROM ({sql.rstrip().rstrip(';')})").fetchall())
    steps = con.execute("SELECT step, action FROM crafter_steps WHERE episode_id = 'c1' AND step >= 1").fetchall()
    pairs = sorted((t, u) for (t, _), (u, _) in itertools.product(steps, steps) if u > t)
    taken = sorted((a, s) for s, a in steps)
    expected = sorted(pairs[i] + taken[j] for i, j in
                      reference_draws(7, "crafter.t|main", "c1", [len(pairs), len(taken)], cap))
    assert got == expected and len(got) == min(cap, len(pairs) * len(taken))


CHAINS = {
    "a step and two actions taken before it": ("""
  param t: steps.step
  param a: (steps | where step < $t).action
  param b: (steps | where step < $t).action where $b != $a
  question "{{ t }} {{ a }} {{ b }}"
  evidence $t""", lambda steps: sorted((t, a, b) for t, _ in steps for a in {a for s, a in steps if s < t}
                                     for b in {a for s, a in steps if s < t} if b != a)),
    "a range and an action taken before it begins": ("""
  param L: steps.step
  param R: steps.step where $R - $L in 1..3
  param a: (steps | where step < $L).action
  question "{{ L }} {{ R }} {{ a }}"
  evidence $L""", lambda steps: sorted(
        (left, right, a) for left, _ in steps for right, _ in steps if 1 <= right - left <= 3
        for a in {a for s, a in steps if s < left})),
}


@pytest.mark.parametrize("cap", (1, 3, 40))
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_a_chain_is_numbered_by_prefix_sums_not_enumerated(chain, cap):
    """A component whose last parameters' domain is keyed by its first (a chain, sample.py), alone on its
    side: the domain order numbers its bindings (sorted) by prefix sums of the tail's completions over
    the head, without making the product (no top-N aggregate, no numbering of the product's rows), and
    draws the bindings the definition gives."""
    con = make_db()
    body, bindings = CHAINS[chain]
    (compiled,) = compile_source(template("crafter", body + "\n  answer $a", "action"))
    sql = statement(compiled, cap, order="domain")
    assert "min_by(" not in sql and "qtc_i" not in sql
    con.execute("SET VARIABLE qtc_seed = 7")
    con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
    columns = ", ".join("p_" + p.name for p in compiled.checked.template.params)
    got = sorted(con.execute(f"SELECT {columns} FROM ({sql.rstrip().rstrip(';')})").fetchall())
    every = bindings(con.execute("SELECT step, action FROM crafter_steps WHERE episode_id = 'c1'").fetchall())
    expected = sorted(every[i] for (i,) in reference_draws(7, "crafter.t|main", "c1", [len(every)], cap))
    assert got == expected and len(got) == min(cap, len(every))


@pytest.mark.parametrize("cap", (1, 3, 40))
def test_a_require_that_reads_only_a_first_parameter_filters_it_before_the_draws(cap):
    """A require's conjuncts that read no parameter but the first of a component (a step, through a let;
    an action) are tested on their domains' values, before the draws: the sample is the definition's
    draws over the values that pass them, as many as the cap where there are, so that a cap counts
    bindings that may be asked (drawn first, they would pass one binding in four)."""
    con = make_db()
    (compiled,) = compile_source(template("crafter", """
  param t: steps.step
  param a: vocab.action
  let taken = steps[$t].action
  require taken != "noop" and $a != "noop"
  question "{{ t }} {{ a }}"
  answer $a
  evidence $t""", "action"))
    sql = statement(compiled, cap, order="domain")
    con.execute("SET VARIABLE qtc_seed = 7")
    con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
    got = sorted(con.execute(f"SELECT p_t, p_a FROM ({sql.rstrip().rstrip(';')})").fetchall())
    steps = con.execute("SELECT step, action FROM crafter_steps WHERE episode_id = 'c1'").fetchall()
    kept = sorted(t for t, action in steps if action != "noop")
    actions = sorted(a for (a,) in con.execute("SELECT value FROM vocab WHERE kind = 'action' AND value != 'noop'").fetchall())
    assert 0 < len(kept) < len(steps)
    expected = sorted((kept[i], actions[j]) for i, j in
                      reference_draws(7, "crafter.t|main", "c1", [len(kept), len(actions)], cap))
    assert got == expected and len(got) == min(cap, len(kept) * len(actions))


def test_a_range_whose_first_step_has_a_condition_keeps_it():
    """`$R - $L in a..b` is a window frame over the whole domain only where L has no condition of its
    own: with one, the pairs are L's values that pass it and their partners, every binding (sampling
    `every`) as the reference enumerates them."""
    con = make_db()
    (compiled,) = compile_source(template("crafter", """
  param L: steps.step where $L % 2 == 0
  param R: steps.step where $R - $L in 1..3
  question "{{ L }} {{ R }}"
  answer $R - $L
  evidence $L""", "integer"))
    got = sorted((left, right) for _, left, right in con.execute(
        f"SELECT episode_id, p_L, p_R FROM ({statement(compiled).rstrip().rstrip(';')}) "
        "WHERE episode_id = 'c1'").fetchall())
    steps = [s for (s,) in con.execute("SELECT step FROM crafter_steps WHERE episode_id = 'c1'").fetchall()]
    assert got == sorted((left, right) for left in steps for right in steps if left % 2 == 0 and 1 <= right - left <= 3)


# Requires over the moves between L and R of episode c1 (move_left at steps 1, 2, 4, 5, 6; do at 3 and 7;
# noop at 8), each with what it says of (L, R, the moves between them, whether a noop lies between them):
# those that bound R for each L (intervals.py), and one that does not, tested on the drawn pairs alone.
MOVES_BETWEEN = "\n  let moves = steps | where step in $L..$R and action == \"move_left\""
RANGE_REQUIRES = {
    "exists(moves) and count(moves) <= 2": (lambda l, r, moves, noop: 1 <= moves <= 2, None),
    "count(moves) == 2": (lambda l, r, moves, noop: moves == 2, None),
    "2 < count(moves)": (lambda l, r, moves, noop: moves > 2, None),
    'not exists(steps | where action == "noop" and step in $L..$R)': (lambda l, r, moves, noop: not noop, None),
    "exists(moves) and $R != $L + 3": (lambda l, r, moves, noop: moves >= 1, lambda l, r, moves, noop: r != l + 3),
}


@pytest.mark.parametrize("require", RANGE_REQUIRES)
def test_requires_that_bound_a_ranges_second_step_number_only_the_pairs_that_pass(require):
    """A require that counts the rows between L and R (exists, not exists, count compared with a number)
    holds for an interval of each L's partners: the domain draws number only the pairs whose R lies in it
    (intervals.py), so a cap counts pairs that pass. Every binding is the definition's; at any cap the
    sample is the definition's Feistel draws over the pairs that pass those requires, in (L, R) order,
    then held to the other requires (as every require is)."""
    con = make_db()
    con.execute("SET VARIABLE qtc_seed = 7")
    (compiled,) = compile_source(template("crafter", f"""
  param L: steps.step
  param R: steps.step where $R - $L in 0..5{MOVES_BETWEEN}
  require {require}
  question "{{{{ L }}}} {{{{ R }}}}"
  answer $R - $L
  evidence $L""", "integer"))
    actions = dict(enumerate(["move_left", "move_left", "do", "move_left", "move_left", "move_left", "do", "noop"], 1))

    def facts(left: int, right: int) -> tuple:
        between = [actions[s] for s in range(left, right + 1)]
        return left, right, between.count("move_left"), "noop" in between
    bounded, other = RANGE_REQUIRES[require]
    pairs = [(left, right) for left in actions for right in actions if 0 <= right - left <= 5]
    numbered = [pair for pair in pairs if bounded(*facts(*pair))]
    passing = [pair for pair in numbered if other is None or other(*facts(*pair))]

    def rows(*cap) -> list[tuple]:
        return sorted(con.execute(f"SELECT p_L, p_R FROM ({statement(compiled, *cap).rstrip().rstrip(';')}) "
                                  "WHERE NOT adversarial").fetchall())
    assert "qtc_from" in statement(compiled, 3, order="domain")
    assert rows() == passing and numbered
    for cap in (1, 3, 40):
        con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
        drawn = [numbered[i] for (i,) in reference_draws(7, f"{compiled.id}|main", "c1", [len(numbered)], cap)]
        assert rows(cap) == sorted(pair for pair in drawn if pair in passing)


@pytest.mark.parametrize("holds", [True, False])
def test_a_range_whose_first_step_has_a_guard_is_a_frame_on_the_episodes_it_keeps(holds):
    """A condition of L that reads no parameter (a guard on the episode, `where exists(steps | where
    rejected)`) keeps whole episodes: the pairs stay a window frame (numbered by prefix sums), over the
    domain of the episodes the guard keeps, so a probe finds the template without rows where it keeps
    none. Every binding is the unguarded template's where it holds, none where it does not; and the
    domain draws are the unguarded template's draws, at any cap."""
    con = make_db()
    body = """
  param R: steps.step where $R - $L in 1..3
  question "{{ L }} {{ R }}"
  answer $R - $L
  evidence $L"""

    def compiled(guard: str):
        (compiled,) = compile_source(template("crafter", f"\n  param L: steps.step{guard}" + body, "integer"))
        return compiled

    def rows(compiled, *cap) -> list[tuple]:
        return sorted(con.execute(f"SELECT episode_id, p_L, p_R FROM ({statement(compiled, *cap).rstrip().rstrip(';')})"
                                  ).fetchall())
    unguarded = compiled("")
    guarded = compiled(f" where exists(steps | where step {'>' if holds else '<'} 0)")
    assert "qtc_p0" in statement(guarded, 3, order="domain") and guarded.probe is not None
    assert rows(unguarded) and rows(guarded) == (rows(unguarded) if holds else [])
    for cap in (1, 3):
        con.execute(f"SET VARIABLE qtc_max_candidates = {cap}")
        assert rows(guarded, cap) == (rows(unguarded, cap) if holds else [])


@pytest.mark.parametrize("holds", [True, False])
def test_a_require_that_reads_no_parameter_is_held_by_a_range(holds):
    """A require that reads no parameter, where the first component's first parameter is the first step
    of a range's pairs, is tested on the sampled bindings: made early, it would filter L's values while
    the window frame (numbered by prefix sums, pair_starts_sql) reads the whole domain, and be lost. The
    pairs stay a frame, and every binding (sampling `every`) is the template's without the require where
    it holds, none where it does not."""
    con = make_db()
    body = """
  param L: steps.step
  param R: steps.step where $R - $L in 1..3
  question "{{ L }} {{ R }}"
  answer $R - $L
  evidence $L"""
    required = body + f"\n  require exists(steps | where step {'>' if holds else '<'} 0)"

    def every(source: str) -> list[tuple]:
        (compiled,) = compile_source(template("crafter", source, "integer"))
        assert "qtc_p0" in statement(compiled, 3, order="domain")
        return sorted(con.execute(f"SELECT episode_id, p_L, p_R FROM "
                                  f"({statement(compiled).rstrip().rstrip(';')})").fetchall())
    unrequired = every(body)
    assert unrequired and every(required) == (unrequired if holds else [])
