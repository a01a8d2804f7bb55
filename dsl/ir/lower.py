"""A checked template to its IR: parameter components, sampling, keyed lets, and the assembled rows.

    ep                      the env's episodes (the context of everything keyed by the episode alone)
    dom*                    each parameter's domain, keyed by the earlier parameters it reads
    comp*                   each connected component of parameters (linked by domains and conditions);
                            `$R - $L in a..b` over one domain is a RANGE window frame, not a join
                            (its pairs numbered for the draws, cut by the requires that bound R: intervals.py)
    s_<side>                the sampled bindings of the answerable side and of each adversarial one;
                            components are crossed only here, inside a streaming top-N aggregate
    dem*, rel*, agg*, ...   lets, requires, answer and evidence, each computed once for the bindings
                            of its free parameters that were sampled
    answerable, adversarial_<p>, candidates, then the final SELECT with display names (and, asked for,
                            the false-premise check against the same domain nodes)

False premises, checked: a template's `adversarial p: DOMAIN` clause says which values of p make a
false premise, and generation does not take the clause's word for it. The values a question presumes
to have occurred are the parameter's own (answerable) domain; the column `qtc_premise_false` (null for
answerable rows) says whether a value bound from an adversarial domain lies outside that domain, on the
same episode within the same horizon, by an anti join with the very domain node the answerable side
drew from; or, for a clause that states its premise (`premise COND`), whether COND fails to hold for
the binding, COND and the lets it reads computed for that side's own bindings. Generation keeps an
adversarial candidate only where it is true.

The output columns are described in dsl/compile.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qtc.dsl import ast as A
from qtc.dsl import schema
from qtc.dsl import types as T
from qtc.dsl.check import CheckedTemplate
from qtc.dsl.events import degenerate_kinds
from qtc.dsl.primitives import PRIMITIVES
from qtc.dsl.sql import ident, sql_string

from .exprs import ExprLowerer
from .intervals import Bound, bounds_of, limits_sql
from .nodes import CARD_N, CARD_ONE, CARD_PRODUCT, Node, Side, TemplateIR, read_by
from .sample import (MIN_CAP_COLUMN, SEED_SQL, Numbered, chain_counts_sql, chain_starts_sql, cut_sql, domain_sample_sql,
                     frame_sql, interval_pair_starts_sql, kcol, keyed_top_n_sql, members_sql, numbered_sql,
                     pair_starts_sql, positions_sql, sample_sql, sizes_sql, value_key, value_keys_sql)
from .sql import SCOPE, From, S, key_match, pcol

PREMISE_COLUMN = "qtc_premise_false"
CUT_COLUMN = "qtc_sample_cut"


def lower(checked: CheckedTemplate, sampling: str = "top_n", premise: bool = False, cut: bool = False) -> TemplateIR:
    """The IR of a template. `sampling` (sample.py) keeps at most `qtc_max_candidates` bindings per
    episode and side (`domain`, `top_n`, `window`) or every binding (`every`); `premise` adds the
    false-premise column; `cut` adds to each candidate the smallest cap that samples its binding
    (MIN_CAP_COLUMN), and a row (CUT_COLUMN the cap, every other column null but adversarial) for the
    answerable side, and one for the false-premise sides, for each cap of CAPS_VARIABLE that cut the
    sample of some episode. Raises Unsupported for what it cannot lower yet."""
    return _Lowering(checked, sampling, premise, cut).run()


class _Lowering:
    def __init__(self, checked: CheckedTemplate, sampling: str, premise: bool, cut: bool):
        self.checked, self.sampling, self.premise, self.cut = checked, sampling, premise, cut
        self.template = checked.template
        self.lo = ExprLowerer(checked)
        self.params = {p.name: p for p in self.template.params}
        self.carried_keys: dict[str, set[str]] = {}  # component node -> parameters whose value keys its rows carry
        self.sizes: dict[str, str] = {}  # sample node -> the sizes of its numbered components (domain draws)
        self.degenerate = degenerate_kinds(self.template)
        self.pairs: dict[str, tuple[str, tuple[int, int]]] = {}  # frame component -> its domain and bounds
        self.chains: dict[str, _Chain] = {}  # chain component (sample.py) -> how it is numbered
        # frame component of a range alone -> the requires that bound its second step (intervals.py)
        self.limited: dict[str, list[Bound]] = {}
        # component node -> its first parameter's bindings, where that parameter's condition reads no
        # parameter (a guard on the episode, `where exists(steps | where reason is not null)`): empty
        # where no episode passes the guard, as it is on traces without the data
        self.guarded: dict[str, str] = {}
        self.components = self._components()
        self.early = self._early_requires()

    def run(self) -> TemplateIR:
        lo, t = self.lo, self.template
        env = "" if self.checked.env == "any" else f" WHERE env = {sql_string(self.checked.env)}"
        lo.register(Node(SCOPE, "scope", (), f"SELECT episode_id, game FROM h_episodes{env}", (), CARD_ONE,
                             f"the {self.checked.env} episodes", fence=True))
        components = self.components
        main_domains: dict[str, str] = {}
        main = [self._component(c, None, main_domains) for c in components]
        sides = [Side("main", main, self._sample("main", main, components, main_domains))]
        for adversarial in t.adversarials:
            domains = dict(main_domains)
            # A false premise is not held to the requires: a component they filtered is made again without.
            parts = [self._component(c, adversarial, domains) if adversarial.param in c or c[0] in self.early else node
                     for c, node in zip(components, main)]
            sides.append(Side(adversarial.param, parts,
                              self._sample(f"adv_{adversarial.param}", parts, components, domains)))
        lo.source = sides[0].sample
        parts = [self._answerable(sides[0].sample)]
        parts += [self._adversarial(side) for side in sides[1:]]
        final = self._final(parts, main_domains, sides)
        lo.finish()
        _prune(lo.nodes, final)
        return TemplateIR(t.id, list(self.params), components, lo.nodes, sides, lo.tables, final, self.sampling,
                          self._primitive_calls(), self._empty_when(sides))

    def _primitive_calls(self) -> list[str]:
        """Where the template calls a spatial primitive: 'qtc_<name>(...) in <clause> (line N)'."""
        calls = []
        for clause, root in self.template.expressions():
            for node in A.walk(root):
                if isinstance(node, A.Call) and node.function in PRIMITIVES:
                    primitive = PRIMITIVES[node.function]
                    arguments = ", ".join(["episode_id", *(n for n, _ in primitive.args), *primitive.kwargs])
                    calls.append(f"{primitive.sql_name}({arguments}) in {clause} (line {node.span.line}); "
                                 f"registered by qtc (runtime/spatial/udf.py)")
        return calls

    # ---- parameters ----
    def _early_requires(self) -> dict[str, list[A.Expr]]:
        """The conjuncts of the requires that read no parameter but the first of a component (or none:
        then the first component's), by that parameter: they filter its values before the draws, as its
        condition does, so that a cap counts bindings that may pass them (a binding fails them exactly
        when its first value does). Each is computed once per value of the domain, not per binding. Not
        the first of a range's pairs: they are a window frame over the whole domain (_frame)."""
        if not self.template.params:
            return {}
        firsts = {names[0] for names in self.components
                  if len(names) == 1 or _framed_by(self.params[names[1]]) != names[0]}
        early: dict[str, list[A.Expr]] = {}
        for require in self.template.requires:
            for conjunct in A.conjuncts(require):
                reads = self.lo.fp(conjunct)
                first = next(iter(reads), self.template.params[0].name)
                if len(reads) <= 1 and first in firsts:
                    early.setdefault(first, []).append(conjunct)
        return early

    def _components(self) -> list[list[str]]:
        """Parameters linked by a domain or a condition that reads another, in declaration order."""
        owner = {name: name for name in self.params}

        def find(name):
            while owner[name] != name:
                name = owner[name]
            return name
        for param in self.template.params:
            for other in self.lo.fp(param.domain) | self.lo.fp(param.condition):
                owner[find(other)] = find(param.name)
        groups: dict[str, list[str]] = {}
        for name in self.params:
            groups.setdefault(find(name), []).append(name)
        return list(groups.values())

    def _component(self, names: list[str], adversarial: A.Adversarial | None, domains: dict[str, str]) -> str:
        """The bindings of one component: each parameter joined with its domain, then its condition."""
        lo = self.lo
        partial, bound, carried, guard = None, [], set(), None
        tail = self._chain_tail(names, adversarial)
        chained = tail > 0
        head = pair = bare = None  # the first parameter's bindings; the first two's frame (domain, bounds)
        for name in names:
            param = self.params[name]
            override = adversarial is not None and adversarial.param == name
            # A chain's tail domains are computed for the values of its first parameter, not of the pairs
            # of a frame or the bindings of the tail's first value (which are then never made).
            lo.source = head if chained and name in names[-tail:] else partial
            domain = self._not_degenerate(name, lo.domain(_domain_of(param, adversarial)))
            domains[name] = domain
            conditions = [c for c in (param.condition,) if c is not None]
            if adversarial is None and name == names[0]:
                conditions += self.early.get(name, [])
            bounds = self._frame(param, bound, domains, domain) if partial is not None and partial == bare and not override else None
            if bounds is not None and guard is not None:
                # The first parameter's guard keeps whole episodes: the pairs are the frame's over the
                # domain of the episodes it keeps.
                domain = lo.add("dom", "domain", (), f"SELECT d.* FROM {domain} d SEMI JOIN {guard} g USING (episode_id)",
                                CARD_N, f"domain of {name} on the episodes {bound[0]}'s guard keeps", fence=True)
            # In the domain order, a component of several parameters may be a product that sampling
            # must enumerate: its rows carry each value's key, computed once per domain row. The pairs
            # of a frame that ends the component are numbered from the bare domain (no keys needed), and
            # so is a chain.
            keyed = (self.sampling == "domain" and len(names) > 1 and not chained
                     and (bounds is None or name != names[-1]))
            source = self._keyed(name, domain) if keyed else domain
            key_column = f", d.k AS {kcol(name)}" if keyed else ""
            if keyed:
                carried.add(name)
            frame = None if bounds is None else frame_sql(source, bound[0], name, bounds, keyed)
            if frame is not None:
                sql, conditions, carried = frame, [], {bound[0], name} if keyed else set()
                pair = (domain, bounds)
            elif partial is None:
                sql = f"SELECT episode_id, v AS {pcol(name)}{key_column.replace('d.k', 'k')} FROM {source}"
            else:
                sql = (f"SELECT b.*, d.v AS {pcol(name)}{key_column} FROM {partial} b JOIN {source} d "
                       f"ON {key_match('d', lo.node_key(domain), 'b')}")
            bound.append(name)
            key = tuple(bound)
            if conditions:
                joined = lo.add("pre", "component", key, sql, CARD_PRODUCT, f"{', '.join(bound)} before the condition",
                                fence=True)
                lo.source = joined
                frm = From(joined, key)
                for condition in conditions:
                    test = lo.scalar(condition, None)
                    lo.with_scalar(frm, test)
                    frm.wheres.append(test.sql)
                sql = f"SELECT c.* {frm.render()}"
            card = CARD_N if len(bound) == 1 or frame is not None else CARD_PRODUCT
            partial = lo.add("comp", "component", key, sql, card, f"component {', '.join(bound)}", fence=True)
            if len(bound) == 1:
                head = partial
                if conditions and not any(lo.fp(condition) for condition in conditions):
                    guard = partial
                # The first parameter's values: the whole domain (on each episode its guard keeps).
                bare = None if conditions and guard is None else partial
        self.carried_keys[partial] = carried
        if guard is not None:
            self.guarded[partial] = guard
        if frame is not None:  # the component is the pairs of the frame alone
            self.pairs[partial] = (domain, bounds)
            limiting = bounds_of(lo, self.template.requires, *names) if adversarial is None and len(names) == 2 else []
            if limiting:
                self.limited[partial] = limiting
        elif (chained and (len(names) - tail == 1 or pair is not None)
              and len({domains[name] for name in names[-tail:]}) == 1):
            self.chains[partial] = _Chain(head, pair, domain, lo.node_key(domain), tail)
        return partial

    def _chain_tail(self, names: list[str], adversarial: A.Adversarial | None) -> int:
        """How many parameters end a component that may be a chain (sample.py), numbered in the domain
        order without being made; 0 where it may not be one. A chain's head is its first parameter, drawn
        from a domain keyed by nothing, and the second where that has a condition (which must turn out a
        frame over the first); its tail is the rest, drawn from domains that read the first parameter at
        most: one without a condition, or two from one domain (checked as they are made), the second's
        condition that it is not the first. A head of one parameter with a tail of one is not taken as
        a chain: its product is no larger than its tail's domain."""
        if self.sampling != "domain" or len(names) < 2:
            return 0

        def reads(name: str) -> frozenset[str]:
            return self.lo.fp(_domain_of(self.params[name], adversarial))
        tail = names[2:] if self.params[names[1]].condition is not None else names[1:]
        # A step and one value keyed by it: the product is no larger than that value's domain, which
        # the keyed top-N streams for less than the draws and prefix sums cost.
        if (reads(names[0]) or not 1 <= len(tail) <= 2 or len(names) == 2
                or self.params[tail[0]].condition is not None or not all(reads(name) <= {names[0]} for name in tail)):
            return 0
        if len(tail) == 2 and not _distinct(self.params[tail[1]].condition, *tail):
            return 0
        return len(tail)

    def _keyed(self, name: str, domain: str) -> str:
        """A domain's rows with their values' keys (column k). A domain keyed by earlier parameters holds
        each value once per binding of them (a material once per step it was seen before): the MD5 is
        taken once per value (value_keys_sql) and joined."""
        lo = self.lo
        if not lo.node_key(domain):
            sql = f"SELECT *, {value_key('v')} AS k FROM {domain}"
        else:
            keys = self._value_keys(name, domain)
            sql = f"SELECT d.*, k.k FROM {domain} d JOIN {keys} k ON k.episode_id = d.episode_id AND k.v = d.v"
        return lo.add("keyed", "domain", lo.node_key(domain), sql, CARD_N, "parameter domain with value keys",
                      fence=True)

    def _value_keys(self, name: str, domain: str) -> str:
        return self.lo.add("key", "sample", (), value_keys_sql(domain), CARD_N, f"value keys of {name}", fence=True)

    def _empty_when(self, sides: list[Side]) -> list[list[str]]:
        """For each side, its guarded components' first bindings (`guarded`), of which one empty on every
        episode leaves the side without rows; [] unless every side has one (nothing then says cheaply
        that the template has no rows: probing every component's first bindings cost 0.6 s of CPU on
        five Jericho walkthroughs, to spare statements of 0.8 s)."""
        kept = {node.name for node in self.lo.nodes}
        nodes = [[self.guarded[c] for c in side.components if self.guarded.get(c) in kept] for side in sides]
        return nodes if all(nodes) else []

    def _not_degenerate(self, name: str, domain: str) -> str:
        """A parameter's domain without the kinds that make the events the answer counts 0 or 1 by
        construction (dsl/events.py, degenerate_kinds), for answerable and false premises alike."""
        kinds = self.degenerate.get(name)
        if not kinds:
            return domain
        return self.lo.add("dom", "domain", self.lo.node_key(domain), (
            f"SELECT * FROM {domain} WHERE v NOT IN ({', '.join(map(sql_string, sorted(kinds)))})"),
            self.lo.node_card(domain), f"domain of {name}, less the kinds counted once by construction", fence=True)

    def _frame(self, param: A.Param, bound: list[str], domains: dict[str, str], domain: str) -> tuple[int, int] | None:
        """The bounds (a, b) of `$R - $L in a..b` with L the component's only parameter so far, its values
        the whole domain (no condition, or a guard that keeps whole episodes: the caller then draws both from
        the episodes it keeps), and both drawn from the same domain: each L's partners R are then
        one RANGE window frame (frame_sql), linear in the domain (a band join would compare every pair of
        the episode)."""
        if bound != [_framed_by(param)]:
            return None
        if domains.get(bound[0]) != domain or self.lo.node_key(domain):
            return None
        low, high = param.condition.container.low.value, param.condition.container.high.value
        return None if low > high else (low, high)

    def _sample(self, side: str, components: list[str], groups: list[list[str]], domains: dict[str, str]) -> str:
        order = list(self.params)
        stream = f"{self.template.id}|{side}"
        linear = all(self.lo.node_card(node) != CARD_PRODUCT or node in self.chains for node in components)
        # Components sized by the trace, crossed: the keyed top-N would enumerate their product, while
        # numbering each costs its own size (a sort of each, at worst).
        crossed = sum(not self._listed(group) for group in groups) > 1
        numbered = None
        if self.sampling == "domain" and order and (linear or crossed):
            numbered = [self._numbered(node, group, side == "main") for node, group in zip(components, groups)]
            sizes = self.lo.add("size", "sample", (), sizes_sql([n.node for n in numbered]), CARD_ONE,
                                f"sizes of the components ({side})", fence=True)
            sql = domain_sample_sql(numbered, sizes, order, stream)
        elif self.sampling == "domain" and order:
            carried = set().union(*(self.carried_keys.get(node, set()) for node in components))
            keys = {p: self._value_keys(p, domains[p]) for p in order if p not in carried}
            sql = keyed_top_n_sql(components, order, carried, keys, stream)
        else:
            sql = sample_sql(components, order, self.sampling)
        capped = self.sampling != "every"
        sample = self.lo.add(f"s_{side}_", "sample", tuple(order), sql, "O(cap)" if capped else CARD_PRODUCT,
                             f"sampled bindings ({side})", fence=True)
        if numbered is not None:
            self.sizes[sample] = sizes
        return sample

    def _numbered(self, node: str, group: list[str], answerable: bool) -> Numbered:
        """A component numbered for domain draws: its bindings numbered, or for the pairs of a frame or a
        chain, its head's (prefix sums then find a binding, which is never made); on the answerable side,
        a frame's pairs that may pass the requires bounding its second step (`limited`), as a false
        premise is not held to them."""
        lo, names = self.lo, ", ".join(group)
        chain = self.chains.get(node)
        if chain is not None:
            counts = chain_counts_sql(chain.domain, chain.key, chain.tail)
            tail = ", ".join(group[-chain.tail:])
            members = lo.add("mem", "sample", chain.key, members_sql(chain.domain, chain.key),
                             lo.node_card(chain.domain), f"values of {tail} numbered", fence=True)
            if chain.pair is None:
                starts = chain_starts_sql(chain.head, group[0], counts, chain.key)
                note = f"component {names} numbered by prefix sums of each {group[0]}'s values of {tail}"
                return Numbered(lo.add("num", "sample", tuple(group[:1]), starts, CARD_N, note, fence=True), group,
                                members=members, key=chain.key, tail=chain.tail)
            domain, bounds = chain.pair
            starts = pair_starts_sql(domain, group[0], bounds, counts, chain.key)
            note = f"component {names} numbered by prefix sums of each {group[0]}'s partners and values of {tail}"
            return Numbered(lo.add("num", "sample", tuple(group[:1]), starts, CARD_N, note, fence=True), group,
                            self._positions(domain, group[1]), members, chain.key, chain.tail)
        if node not in self.pairs:
            return Numbered(lo.add("num", "sample", tuple(group), numbered_sql(node, group), lo.node_card(node),
                                   f"component {names} numbered", fence=True), group)
        domain, bounds = self.pairs[node]
        limited = self.limited.get(node) if answerable else None
        if not limited:
            return Numbered(lo.add("num", "sample", tuple(group[:1]), pair_starts_sql(domain, group[0], bounds), CARD_N,
                                   f"component {names} numbered by prefix sums of each {group[0]}'s partners",
                                   fence=True), group, self._positions(domain, group[1]))
        positions = self._positions(domain, group[1])
        limits = lo.add("lim", "sample", (), limits_sql(lo, domain, limited, bounds), CARD_N,
                        f"each {group[0]}'s partners that the requires on {group[1]} leave", fence=True)
        return Numbered(lo.add("num", "sample", tuple(group[:1]), interval_pair_starts_sql(limits, positions, group[0]),
                               CARD_N, f"component {names} numbered by prefix sums of each {group[0]}'s partners "
                               f"that the requires on {group[1]} leave", fence=True), group, positions)

    def _positions(self, domain: str, name: str) -> str:
        return self.lo.add("pos", "sample", (), positions_sql(domain), CARD_N, f"values of {name} numbered", fence=True)

    def _listed(self, group: list[str]) -> bool:
        """Whether a component is one parameter drawn from a list the template writes (`[1, 2, 3]`): a
        handful of values, whatever the trace."""
        return len(group) == 1 and isinstance(self.params[group[0]].domain, A.ListLiteral)

    # ---- the rows ----
    def _answerable(self, sample: str) -> str:
        lo, t = self.lo, self.template
        key = tuple(self.params)
        frm = From(sample, key)
        lets = []
        # What the question names (its parameters, scalar lets and answer) names things introduced by the horizon.
        named = [(f"c.{pcol(p)}", self.checked.param_types.get(p)) for p in self.params]
        for name, ty in self.checked.let_types.items():
            if isinstance(ty, (T.Scalar, T.ListOf)):
                value = self._let_value(name)
                lo.with_scalar(frm, value)
                lets.append(f"{value.sql} AS {ident('l_' + name)}")
                named.append((value.sql, ty))
        requires = []
        for condition in self._late_requires():
            s = lo.scalar(condition, None)
            lo.with_scalar(frm, s)
            requires.append(f"({s.sql})")
        answer = lo.scalar(t.answer, None)
        lo.with_scalar(frm, answer)
        named.append((answer.sql, t.answer.ty))
        introduced = [test for value, ty in named if (test := self._introduced(value, ty)) is not None]
        unintroduced = self._unintroduced() if introduced else None
        if unintroduced is not None:
            frm.add(f"LEFT JOIN {unintroduced} qu ON qu.episode_id = c.episode_id")
            requires += introduced
        accept = ""
        if t.accept is not None:
            accepted = lo.scalar(t.accept, None)
            lo.with_scalar(frm, accepted)
            accept = f"{accepted.sql} AS qtc_accept, "
        evidence = self._evidence(frm)
        frm.wheres.append(" AND ".join(requires) or "TRUE")
        columns = ", ".join(["c.episode_id", *(f"c.{pcol(p)}" for p in self.params), *self._min_cap(), *lets])
        exclude = " EXCLUDE (qtc_accept)" if accept else ""
        # A text that is blank (a screen of spaces: detective's help menu) is no answer (CONVENTIONS.md, Answers).
        blank = " AND regexp_matches(c.answer, '\\S')" if t.answer.ty == T.STRING else ""
        sql = (f"SELECT *{exclude}, {self._accepted()} AS accepted FROM (SELECT {columns}, "
               f"FALSE AS adversarial, {accept}{answer.sql} AS answer, {evidence} AS evidence {frm.render()}) c "
               f"WHERE c.answer IS NOT NULL{blank}")
        return lo.add("answerable", "assemble", key, sql, "O(cap)", "answerable candidates")

    def _late_requires(self) -> list[A.Expr]:
        """The requires left to test on the sampled bindings: those of which no conjunct was early."""
        early = {id(c) for conjuncts in self.early.values() for c in conjuncts}
        late = []
        for require in self.template.requires:
            conjuncts = A.conjuncts(require)
            late += [require] if not early.intersection(map(id, conjuncts)) else [
                c for c in conjuncts if id(c) not in early]
        return late

    def _unintroduced(self) -> str | None:
        """Per episode, the list (`names`) of its things' names not introduced by the horizon (CONVENTIONS.md,
        Items: printed or typed, `introduced_items`) and the list (`rooms`) of its visited rooms whose titles
        were not (a dark room's; of an episode with an object tree, whose loading made `introduced_items`); None for a
        template of an environment whose names need no introducing (schema.Environment.names_introduced:
        Crafter's things are its game's own words, TextWorld's named by the facts of what was in view)."""
        env = schema.ENVIRONMENTS.get(self.checked.env)
        if env is not None and not env.names_introduced:
            return None
        objects = self.lo.table(schema.JERICHO_OBJECTS)
        introduced = self.lo.table(schema.JERICHO_INTRODUCED_ITEMS)
        rooms = self.lo.table(schema.JERICHO_ROOMS)
        return self.lo.add("unintroduced", "index", (), (
            f"SELECT episode_id, n.names, r.rooms FROM (SELECT o.episode_id, list(DISTINCT o.name) AS names "
            f"FROM {objects} o LEFT JOIN {introduced} i ON i.episode_id = o.episode_id AND i.item = o.name "
            f"WHERE o.name IS NOT NULL AND i.item IS NULL GROUP BY o.episode_id) n FULL JOIN ("
            f"SELECT r.episode_id, list(r.room) AS rooms FROM {rooms} r JOIN (SELECT DISTINCT episode_id FROM "
            f"{objects}) t ON t.episode_id = r.episode_id LEFT JOIN {introduced} i ON i.episode_id = r.episode_id "
            f"AND i.item = r.title WHERE r.visited AND i.item IS NULL GROUP BY r.episode_id) r USING (episode_id)"),
            CARD_N,
            "things whose names, and visited rooms whose titles, were not printed or typed by the horizon",
            fence=True)

    def _introduced(self, value: str, ty) -> str | None:
        """The condition that a value (a name, or a list of names) names no thing whose name was not
        introduced by the horizon, with _unintroduced joined as `qu`; None where it cannot name a thing."""
        if ty in T.NAMING or ty == T.ROOM:
            return f"NOT coalesce(list_contains(qu.{_unintroduced_list(ty)}, {value}), FALSE)"
        if isinstance(ty, (T.ListOf, T.Bag)) and (ty.element in T.NAMING or ty.element == T.ROOM):
            return f"NOT coalesce(list_has_any(qu.{_unintroduced_list(ty.element)}, {value}), FALSE)"
        return None

    def _accepted(self) -> str:
        """Every correct answer: the answer first, then the other accepted values, sorted."""
        if self.template.accept is None:
            return "[c.answer]"
        return ("list_concat([c.answer], list_sort(list_distinct(list_filter(c.qtc_accept, "
                "lambda a: a IS DISTINCT FROM c.answer))))")

    def _let_value(self, name: str) -> S:
        node = self.lo.scalar_let(name)
        return S(f"{node}.v", (node,))

    def _evidence(self, frm: From) -> str:
        lo, lists = self.lo, []
        for e in self.template.evidence:
            if isinstance(e, A.Range):
                low, high = lo.scalar(e.low, None), lo.scalar(e.high, None)
                lo.with_scalar(frm, low)
                lo.with_scalar(frm, high)
                lists.append(f"range(CAST({low.sql} AS BIGINT), CAST({high.sql} AS BIGINT) + 1)")
            elif isinstance(e.ty, T.Bag):
                bag = lo.bag(e)
                steps = lo.aggregate(bag.frm, f"list(CAST({bag.v} AS BIGINT))")
                lo.with_scalar(frm, steps)
                lists.append(steps.sql)
            else:
                s = lo.scalar(e, None)
                lo.with_scalar(frm, s)
                lists.append(f"[CAST({s.sql} AS BIGINT)]")
        return f"list_sort(list_distinct(flatten([{', '.join(lists)}])))"

    def _adversarial(self, side: Side) -> str:
        nulls = "".join(f", NULL AS {ident('l_' + n)}" for n, ty in self.checked.let_types.items()
                        if isinstance(ty, (T.Scalar, T.ListOf)))
        columns = ", ".join(["c.episode_id", *(f"c.{pcol(p)}" for p in self.params), *self._min_cap()])
        frm, premise = From(side.sample, tuple(self.params)), ""
        adversarial = next(a for a in self.template.adversarials if a.param == side.name)
        if self.premise and adversarial.premise is not None:
            holds = self._for_bindings_of(side.sample, lambda: self.lo.scalar(adversarial.premise, None))
            self.lo.with_scalar(frm, holds)
            premise = f", NOT coalesce({holds.sql}, FALSE) AS {_premise_column(side.name)}"
        sql = (f"SELECT {columns}{nulls}, TRUE AS adversarial, NULL AS answer, CAST([] AS BIGINT[]) AS evidence"
               f"{premise} {frm.render()}")
        return self.lo.add(f"adversarial_{side.name}_", "assemble", tuple(self.params), sql, "O(cap)",
                           f"false-premise candidates ({side.name})")

    def _for_bindings_of(self, sample: str, lower):
        """`lower()` with the lets it reads computed for the bindings of `sample` (an adversarial side's):
        the lets already lowered are keyed by the answerable side's bindings, so they are not reused."""
        lo = self.lo
        kept, lo._cache = lo._cache, {k: v for k, v in lo._cache.items() if k[0] != "let"}
        source, lo.source = lo.source, sample
        try:
            return lower()
        finally:
            lo._cache, lo.source = kept, source

    def _final(self, parts: list[str], domains: dict[str, str], sides: list[Side]) -> str:
        lo, checked, t = self.lo, self.checked, self.template
        union = " UNION ALL BY NAME ".join(f"SELECT * FROM {p}" for p in parts)
        candidates = lo.add("candidates", "assemble", tuple(self.params), union, "O(cap)", "all candidates")
        room_outputs = [p.name for p in t.params if checked.param_types.get(p.name) == T.ROOM]
        room_outputs += [n for n, ty in checked.let_types.items() if ty == T.ROOM]
        shown = [(ident(('p_' if n in checked.param_types else 'l_') + n), ident('display_' + n)) for n in room_outputs]
        if checked.answer_type == "location":
            shown.append(("answer", "display_answer"))
        joins, columns = [], []
        names = None
        if shown:
            rooms = lo.table(schema.ROOM_TABLES.get(checked.env, schema.JERICHO_ROOMS))
            names = lo.add("rooms", "index", (), f"SELECT episode_id, room, any_value(display_name) AS display_name "
                                                 f"FROM {rooms} GROUP BY ALL", CARD_N, "room display names")
            for number, (value, column) in enumerate(shown, start=1):
                joins.append(f"LEFT JOIN {names} qd{number} ON qd{number}.episode_id = c.episode_id "
                             f"AND qd{number}.room = c.{value}")
                columns.append(f"qd{number}.display_name AS {column}")
        where = ""
        if t.choices is not None:
            distractors = self._distractors(candidates, t.choices, names if checked.answer_type == "location" else None)
            joins.append(f"LEFT JOIN {distractors} qc ON {_binding_match('qc', list(self.params))}")
            columns.append("qc.distractors")
            where = (f" WHERE len(qc.distractors) >= CASE WHEN c.adversarial THEN {t.choices.needed(True)} "
                     f"ELSE {t.choices.needed(False)} END")
        helpers = []
        if self.premise and t.adversarials:
            # The premise is false where its condition does not hold (computed with the side's rows), or,
            # without one, where a value lies outside the parameter's own domain: the same node the
            # answerable side drew from.
            outside = []
            for number, adversarial in enumerate(t.adversarials, start=1):
                if adversarial.premise is not None:
                    helpers.append(_premise_column(adversarial.param))
                    outside.append(f"coalesce(c.{helpers[-1]}, FALSE)")
                    continue
                domain = domains[adversarial.param]
                alias = f"qp{number}"
                joins.append(f"LEFT JOIN {domain} {alias} ON {key_match(alias, lo.node_key(domain))} "
                             f"AND {alias}.v = c.{pcol(adversarial.param)}")
                outside.append(f"{alias}.v IS NULL")
            columns.append(f"CASE WHEN c.adversarial THEN ({' OR '.join(outside)}) END AS {PREMISE_COLUMN}")
        order = ", ".join(["episode_id", "adversarial"] + [pcol(p) for p in self.params])
        extra = "".join(f", {c}" for c in columns)
        exclude = f" EXCLUDE ({', '.join(helpers)})" if helpers else ""
        return (f"SELECT c.*{exclude}{extra} FROM {candidates} c{''.join(' ' + j for j in joins)}{where}"
                f"{self._cut_rows(sides)} ORDER BY {order}")

    def _min_cap(self) -> list[str]:
        """The candidate's column of the smallest cap that samples its binding, where lower's `cut` asks."""
        return [f"c.{MIN_CAP_COLUMN}"] if self.cut and self.sampling != "every" else []

    def _cut_rows(self, sides: list[Side]) -> str:
        """The rows saying where the cap cut a sample (lower's `cut`), after the candidates."""
        if not self.cut or self.sampling == "every":
            return ""
        groups = [(str(adversarial).upper(), [(s.sample, self.sizes.get(s.sample)) for s in group])
                  for adversarial, group in ((False, sides[:1]), (True, sides[1:])) if group]
        node = self.lo.add("cut", "assemble", (), cut_sql(groups), CARD_ONE, "the caps that cut a sample, by side")
        return f" UNION ALL BY NAME SELECT adversarial, qtc_cap AS {CUT_COLUMN} FROM {node}"


    def _distractors(self, candidates: str, choices: A.Choices, names: str | None) -> str:
        """Each candidate's distractors: as many values of the choices domain as there are options besides
        'none of these' (Choices.slots), none of them among its correct answers (none is, for a false
        premise), in the order of their MD5 keys (the seed, the template, the binding and the value), as
        text (a room as its display name). A candidate with fewer than it needs is not asked. The domain
        is joined with the sampled candidates only, never crossed with itself."""
        lo = self.lo
        domain = lo.domain(choices.domain)
        params = list(self.params)
        binding = ", ".join(["c.episode_id", "c.adversarial", *(f"c.{pcol(p)}" for p in params)])
        key = (f"md5_number_lower(concat_ws('|', {SEED_SQL}, {sql_string(self.template.id)}, {binding}, "
               f"CAST(d.v AS VARCHAR)))")
        text, join = "CAST(d.v AS VARCHAR)", ""
        named = self._introduced("d.v", _element(choices.domain.ty))
        unintroduced = self._unintroduced() if named else None
        introduced = f" AND {named}" if unintroduced else ""
        if unintroduced:
            join += f" LEFT JOIN {unintroduced} qu ON qu.episode_id = d.episode_id"
        if names is not None:
            text = "coalesce(n.display_name, CAST(d.v AS VARCHAR))"
            join += f" LEFT JOIN {names} n ON n.episode_id = d.episode_id AND n.room = d.v"
        sql = (f"SELECT {binding}, list({text} ORDER BY {key})[1:{choices.slots}] AS distractors "
               f"FROM {candidates} c JOIN {domain} d ON d.episode_id = c.episode_id{join} "
               f"WHERE NOT coalesce(list_contains(c.accepted, d.v), FALSE){introduced} GROUP BY ALL")
        return lo.add("distractors", "assemble", tuple(params), sql, "O(cap x domain)",
                      f"distractors ({choices.slots} a candidate)")


@dataclass(frozen=True)
class _Chain:
    """A chain component (sample.py): its first parameter's bindings, its frame (domain, bounds) where its
    head is a frame's pairs, its tail's domain with that domain's key, and how many values the tail draws."""
    head: str
    pair: tuple[str, tuple[int, int]] | None
    domain: str
    key: tuple[str, ...]
    tail: int


def _domain_of(param: A.Param, adversarial: A.Adversarial | None) -> A.Expr:
    """The domain a parameter draws from on a side: the adversarial clause's where it names the parameter."""
    return adversarial.domain if adversarial is not None and adversarial.param == param.name else param.domain


def _distinct(condition: A.Expr | None, first: str, second: str) -> bool:
    """Whether a condition is exactly that two parameters differ (`$second != $first`, either way round)."""
    return (isinstance(condition, A.Binary) and condition.op == "!=" and all(isinstance(side, A.ParamRef)
            for side in (condition.left, condition.right))
            and {condition.left.name, condition.right.name} == {first, second})


def _element(ty):
    """The type of a domain's values."""
    return ty.element if isinstance(ty, (T.Bag, T.ListOf)) else ty


def _binding_match(alias: str, params: list[str]) -> str:
    """The row of `alias` that has the candidate's episode, side and binding (null values match)."""
    return " AND ".join([f"{alias}.episode_id = c.episode_id", f"{alias}.adversarial = c.adversarial",
                         *(f"{alias}.{pcol(p)} IS NOT DISTINCT FROM c.{pcol(p)}" for p in params)])


def _framed_by(param: A.Param) -> str | None:
    """The parameter L of a condition `$R - $L in a..b` on R (`param`), with integer bounds; else None."""
    c = param.condition
    if (isinstance(c, A.In) and not c.negated and isinstance(c.item, A.Binary) and c.item.op == "-"
            and isinstance(c.item.left, A.ParamRef) and c.item.left.name == param.name
            and isinstance(c.item.right, A.ParamRef) and isinstance(c.container, A.Range)
            and all(isinstance(b, A.Literal) and type(b.value) is int for b in (c.container.low, c.container.high))):
        return c.item.right.name
    return None


def _premise_column(param: str) -> str:
    return ident(f"qtc_premise_false_{param}")


def _prune(nodes: list[Node], final: str) -> None:
    """Drop the nodes nothing reads (a component's first parameter, when a window frame pairs it)."""
    needed = read_by(nodes, [n.name for n in nodes if re.search(rf"\b{re.escape(n.name)}\b", final)])
    nodes[:] = [n for n in nodes if n.name in needed]


def _unintroduced_list(ty) -> str:
    """The column of _unintroduced that a value of type `ty` is looked up in: rooms by number, else names."""
    return "rooms" if ty == T.ROOM else "names"
