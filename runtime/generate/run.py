"""Question generation: compiled templates run over loaded episodes, sampled, rendered and checked.

For each template, one statement computes the candidates of every episode of its env at once, with
a seeded cap on bindings per episode (raised while the template falls short of what is asked) and the
false premises of its adversarial candidates checked in the same statement (dsl/ir/lower.py, False
premises). The statements run over one store in this process, or over shards of the episodes in
worker processes or Ray tasks (runners.py, shards.py), which give the same rows; in the first round,
the templates a probe finds without rows there (compile.CompiledTemplate.probe: all probed in one
statement) are not run, and get the report of a statement without rows. Candidates
are then ordered by seeded hashes and spread over episodes, mixed with adversarial ones at the asked
ratio, cut to the per-template and per-category caps (sampling.py) and rendered only as far as they
are needed (records.py). Nothing depends on the order of files, rows or sets.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections import Counter, defaultdict
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

import qtc.templates
from qtc.dsl.compile import CompiledTemplate, statement
from qtc.dsl.ir.lower import CUT_COLUMN, PREMISE_COLUMN
from qtc.dsl.ir.sample import MIN_CAP_COLUMN, ORDERS
from qtc.dsl.library import cached_library
from qtc.dsl.render import RenderError, make_environment
from qtc.errors import InvalidOption, UserError
from qtc.runtime.arrow import rows_where

from .records import EpisodeInfo, InvalidRecord, RecordMaker
from .runners import OnDone, Rows, Runner, open_runner
from .sampling import Mix, nearest, seeded_key, share, spread_over_episodes
from .shards import Request

STANDARD_LIBRARY = Path(qtc.templates.__file__).parent
DEFAULT_PER_TEMPLATE = 100  # questions a template gives at most without --max-per-template or --total
MIN_CANDIDATES_PER_EPISODE = 16
OVERSAMPLING = 4  # bindings drawn per question wanted: requires and render failures reject some
MAX_CAP_RAISES = 3  # how often a template short of candidates has its per-episode cap doubled
NO_ROWS = pa.table({"episode_id": pa.array([], pa.string()), "adversarial": pa.array([], pa.bool_())})
MEMORY_SIZE = re.compile(r"[0-9]+(\.[0-9]+)? ?([KMGT]i?B|bytes)", re.IGNORECASE)  # DuckDB's sizes


@dataclass(frozen=True)
class Options:
    traces: tuple[Path, ...]
    templates: tuple[Path, ...] = (STANDARD_LIBRARY,)
    seed: int = 42
    max_per_template: int | None = None  # None: 100, or with `total` no cap but the total (per_template)
    per_category: int | None = None
    horizon: int | None = None
    adversarial_ratio: float = 0.2
    sampling: str = "domain"  # the order bindings are drawn in (dsl/ir/sample.py): domain or compat
    # Worker processes at most, each over a shard of the episodes (1: this process, one store; None: this
    # machine's cores), used once the traces fill more than one shard, else one process: shards.workers.
    jobs: int | None = 1
    ray: str | None = None  # a Ray cluster's address (or "auto") to run the shards on, instead of --jobs
    total: int | None = None  # the set's size: categories, envs and the adversarial share kept at set level
    memory_limit: str | None = None  # DuckDB's memory_limit for each process that queries episodes ("2GB")

    @property
    def per_template(self) -> int:
        """The cap on a template's questions: --max-per-template, else 100, or with --total the total (a
        template then gets its share of the total, however large)."""
        if self.max_per_template is not None:
            return self.max_per_template
        return DEFAULT_PER_TEMPLATE if self.total is None else self.total

    def settings(self) -> dict:
        """The options that shape the set, as its summary records them (and `qtc generate` compares an
        existing output's with before replacing it)."""
        return {"seed": self.seed, "max_per_template": self.per_template, "per_category": self.per_category,
                "horizon": self.horizon, "adversarial_ratio": self.adversarial_ratio, "sampling": self.sampling,
                "total": self.total}

    def check(self) -> None:
        """Raise an InvalidOption naming the first bad field, or a UserError for a missing path."""
        for name, value in (("max_per_template", self.max_per_template), ("per_category", self.per_category),
                            ("horizon", self.horizon), ("jobs", self.jobs), ("total", self.total)):
            if value is not None and value < 1:
                raise InvalidOption(name, f"must be at least 1, got {value}")
        if self.sampling not in ORDERS:
            raise InvalidOption("sampling", f"must be one of {', '.join(ORDERS)}, got {self.sampling!r}")
        if not 0 <= self.adversarial_ratio <= 1:
            raise InvalidOption("adversarial_ratio", f"must be between 0 and 1, got {self.adversarial_ratio}")
        if not self.traces:
            raise InvalidOption("traces", "is empty: give trace files or folders")
        if self.memory_limit is not None and not MEMORY_SIZE.fullmatch(self.memory_limit):
            raise InvalidOption("memory_limit", f"must be a size such as 500MB or 4GB, got {self.memory_limit!r}")
        missing = [str(p) for p in (*self.traces, *self.templates) if not Path(p).exists()]
        if missing:
            raise UserError(f"no such file or folder: {', '.join(missing)}")


@dataclass
class TemplateReport:
    """What one template was asked for and what it could give, for the summary."""
    template_id: str
    env: str
    category: str
    episodes: int
    asked: int
    candidates: int = 0  # answerable candidates
    adversarial_candidates: int = 0  # adversarial candidates whose premise is false
    adversarial_dropped: int = 0  # adversarial candidates whose premise turned out true
    render_errors: int = 0
    render_error: str = ""  # the first one's message, for the warning
    invalid: list[str] = field(default_factory=list)  # records that broke the format (bugs), never written
    candidates_per_episode: int = 0  # the cap on bindings per episode that the candidates were drawn with
    questions: int = 0
    adversarial_questions: int = 0
    limited_by: str = ""  # template cap, category cap, candidates or no episodes
    episodes_without_candidates: list[str] = field(default_factory=list)


@dataclass
class Generation:
    options: Options
    records: list[dict]
    templates: list[TemplateReport]
    episodes: dict[str, int]  # env -> number of episodes
    timings: dict[str, float]  # seconds per phase: load, compile, query, render (and write, by the caller)

    def summary(self) -> dict:
        """The summary as JSON data; like the records, a function of the inputs and the seed only."""
        categories = defaultdict(list)
        for report in self.templates:
            categories[report.category].append(report)
        o = self.options
        return {
            "questions": len(self.records),
            "adversarial": sum(r["adversarial"] for r in self.records),
            "options": o.settings(),
            "episodes": dict(sorted(self.episodes.items())),
            "categories": [{"category": name, "templates": len(reports), "asked": o.per_category,
                            "candidates": sum(r.candidates + r.adversarial_candidates for r in reports),
                            "questions": sum(r.questions for r in reports),
                            "adversarial": sum(r.adversarial_questions for r in reports)}
                           for name, reports in sorted(categories.items())],
            "templates": [asdict(report) for report in self.templates],
        }


def at_checkpoints(options: Options, horizons: list[int],
                   on_progress: Callable[[int, int], None] | None = None) -> tuple[list[dict], dict]:
    """One QA set asked at several horizons (checkpoints, e.g. every 100 steps): each horizon's set as
    `generate` makes it, the records together (a question's id holds its horizon), and the summary of
    each under `checkpoints`."""
    generations = []
    for number, horizon in enumerate(horizons):
        def progress(done: int, total: int, before: int = number) -> None:
            if on_progress:
                on_progress(before * total + done, len(horizons) * total)
        generations.append(generate(replace(options, horizon=horizon), progress))
    records = sorted((r for g in generations for r in g.records),
                     key=lambda r: (r["template_id"], r["episode_id"], r["horizon"], r["id"]))
    summary = {"questions": len(records), "adversarial": sum(r["adversarial"] for r in records),
               "horizons": list(horizons), "checkpoints": [g.summary() for g in generations]}
    return records, summary


class Timer:
    def __init__(self):
        self.seconds: Counter[str] = Counter()

    @contextmanager
    def phase(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start


def generate(options: Options, on_progress: Callable[[int, int], None] | None = None,
             on_runner: Callable[[str], None] | None = None) -> Generation:
    """The QA set of `options`. `on_progress(done, total)` counts template x episode runs: it is called
    once before the first template runs and again as each template (in this process) or each shard
    (--jobs, Ray) finishes its episodes; raising a template's cap afterwards is not counted.
    `on_runner(how)` is told where the statements run ("in one process", runners.Runner.how)."""
    options.check()
    timer = Timer()
    with timer.phase("compile"):
        templates = _compile(options.templates, options.sampling)
    with timer.phase("load"):
        runner = open_runner(options)
    with closing(runner):
        if on_runner:
            on_runner(runner.how)
        episodes = runner.episodes
        if not episodes:
            raise UserError(f"no episodes in {', '.join(map(str, options.traces))}")
        generator = _Generator(options, episodes, timer)
        total = sum(len(generator.episodes_of(compiled)) for compiled in templates)
        done = 0

        def progress(runs: int) -> None:
            nonlocal done
            done += runs
            if on_progress:
                on_progress(done, total)
        progress(0)
        with timer.phase("query"):
            rows = generator.candidate_rows(runner, templates, progress)
    limits = {compiled.id: generator.limit(compiled) for compiled in templates}
    chosen = {compiled.id: generator.template(compiled, rows.get(compiled.id), limits[compiled.id])
              for compiled in templates}
    if options.total is not None:
        while again := _choose_again(chosen, generator.reports, options):
            for template_id in again:
                limits[template_id] = min(options.per_template, 2 * limits[template_id] or 1)
                chosen[template_id] = generator.choose(template_id, limits[template_id])
    if options.per_category is not None:
        _cap_categories(chosen, generator.reports, options.per_category)
    if options.total is not None:
        _cap_total(chosen, generator.reports, options.total, options.adversarial_ratio)
    records = sorted((r for rs in chosen.values() for r in rs),
                     key=lambda r: (r["template_id"], r["episode_id"], r["id"]))
    return Generation(options, records, list(generator.reports.values()),
                      dict(Counter(e.env for e in episodes.values())), dict(timer.seconds))


def _compile(paths: Iterable[Path], order: str) -> list[CompiledTemplate]:
    """The compiled templates, from qtc's cache where it has them, with the statements generation runs."""
    library = cached_library(list(paths), lambda compiled: _statement(compiled, MIN_CANDIDATES_PER_EPISODE, order))
    if not library.results and not library.file_diagnostics:
        raise UserError(f"no .qtpl templates found in {', '.join(map(str, paths))}")
    if not library.ok:
        first = library.diagnostics[0]
        raise UserError(f"{len(library.diagnostics)} template error(s), the first at {first.path}:{first.span.line}:"
                        f"{first.span.column}: {first.message} (qtc compile shows them all)")
    return sorted(library.compiled, key=lambda c: c.id)


class _Generator:
    """Finds each template's candidates and chooses its questions; keeps a report per template."""

    def __init__(self, options: Options, episodes: dict[str, EpisodeInfo], timer: Timer):
        self.options = options
        self.episodes = episodes
        self.timer = timer
        self.jinja_env = make_environment()
        # Jinja compiles a template on every from_string call; a question text is compiled once.
        self.jinja_env.from_string = functools.lru_cache(maxsize=None)(self.jinja_env.from_string)
        self.reports: dict[str, TemplateReport] = {}
        self.mixes: dict[str, Mix] = {}  # each template's list of questions, drawn as far as it is read
        self.first_caps: dict[str, int] = {}  # each template's cap on bindings per episode before any raise
        # What each template's candidates aim at, answerable and adversarial: its cap on questions, or with
        # --total its share of the total (_aim).
        self.aims: dict[str, tuple[int, int]] = {}
        # Whether a run's cap cut a sample (of some episode), on the answerable and the false-premise side.
        self.cut: dict[tuple[str, int], tuple[bool, bool]] = {}

    def episodes_of(self, compiled: CompiledTemplate) -> list[str]:
        return sorted(eid for eid, e in self.episodes.items() if compiled.env in ("any", e.env))

    def candidate_rows(self, runner: Runner, templates: list[CompiledTemplate], on_done: OnDone) -> dict[str, pa.Table]:
        """The candidate rows of every template with episodes of its env, premises checked.

        A template's cap on bindings per episode starts where the questions it aims at would need it,
        and doubles while the template falls short and a larger cap finds more of what it is short of; a
        larger cap keeps every binding a smaller one kept (the seeded hash order), so raising it only
        adds some, and adds none to a side whose samples the cap cut nowhere (those bindings are all
        there is), so such a side is never run again. Every template runs in the first round, and those
        not settled in each next one; with --total, the aims follow the first round's rows (the share
        of a template short of candidates goes to the others) and hold from then on, so that every
        runner makes the same raises: a runner whose rounds are costly (shards loaded again) gets every
        raise a template may need in one round, and the same raises are made from those rows."""
        o = self.options
        asked = []
        for compiled in templates:
            report = self.reports[compiled.id] = TemplateReport(compiled.id, compiled.env, compiled.category,
                                                                len(self.episodes_of(compiled)), o.per_template)
            if report.episodes:
                asked.append(compiled)
        self._aim(asked, {})
        for compiled in asked:
            report = self.reports[compiled.id]
            report.candidates_per_episode = self.first_caps[compiled.id] = max(
                MIN_CANDIDATES_PER_EPISODE, math.ceil(OVERSAMPLING * sum(self.aims[compiled.id]) / report.episodes))
        rows = self._run(runner, [(c, self.first_caps[c.id], ()) for c in asked], on_done, probe=True)
        self._aim(asked, rows)
        unsettled = [c for c in asked if not self._settle(c, rows)]
        while unsettled:
            wanted = []
            for compiled in unsettled:
                cap = self.reports[compiled.id].candidates_per_episode
                top = self.first_caps[compiled.id] << MAX_CAP_RAISES
                if not runner.fetch_ahead:
                    top = min(top, self._raise_to(compiled, rows))
                wanted.append((compiled, top, tuple(cap << k for k in range(1, MAX_CAP_RAISES + 1) if cap << k < top)))
            rows.update(self._run(runner, wanted))
            unsettled = [c for c in unsettled if not self._settle(c, rows)]
        return {c.id: rows[c.id, self.reports[c.id].candidates_per_episode] for c in asked}

    def _aim(self, asked: list[CompiledTemplate], rows: Rows) -> None:
        """Set what each template's candidates aim at (`aims`). Without --total, its cap on questions,
        split as `Mix` splits it. With --total, its share of the total, shared as `_cap_total` shares
        the questions, among templates that may give that cap (not run yet, or a side its cap cut
        somewhere) and templates that give what their rows hold (a side the cap cut nowhere): a
        template draws for its share, not for a cap the total never lets it fill, and the share of a
        template short of candidates goes to the others."""
        caps = {compiled.id: self._cap_by_side(compiled) for compiled in asked}
        if self.options.total is None:
            self.aims = caps
            return
        capacities = {}
        for compiled in asked:
            cap = self.reports[compiled.id].candidates_per_episode
            if (compiled.id, cap) not in rows:
                capacities[compiled.id] = caps[compiled.id]
                continue
            capacities[compiled.id] = tuple(most if cut else min(most, have) for most, have, cut
                                            in zip(caps[compiled.id], _usable(rows[compiled.id, cap]),
                                                   self.cut[compiled.id, cap]))
        self.aims = _set_shares(capacities, self.options.total, self.options.adversarial_ratio, self.reports)

    def _settle(self, compiled: CompiledTemplate, rows: Rows) -> bool:
        """Raise the template's cap as far as the rows at hand decide; False if deciding on needs the rows
        of twice its cap, not run yet."""
        report = self.reports[compiled.id]
        wanted = self.aims[compiled.id]
        while report.candidates_per_episode < self.first_caps[compiled.id] << MAX_CAP_RAISES:
            have = _usable(rows[compiled.id, report.candidates_per_episode])
            short = [count < want for count, want in zip(have, wanted)]
            if not any(is_short and cut for is_short, cut in zip(short, self.cut[compiled.id,
                                                                                  report.candidates_per_episode])):
                return True
            more = rows.get((compiled.id, report.candidates_per_episode * 2))
            if more is None:
                return False
            if not any(is_short and more_count > count
                       for is_short, more_count, count in zip(short, _usable(more), have)):
                return True
            report.candidates_per_episode *= 2
        return True

    def _raise_to(self, compiled: CompiledTemplate, rows: Rows) -> int:
        """The cap a template short of candidates is run at next: the smallest of the doublings of its cap
        that would find what it is short of if candidates grew with the cap (one run at it gives the
        rows of every smaller doubling too, so a guess too high costs a larger statement, one too low
        another round; neither changes the rows)."""
        cap = self.reports[compiled.id].candidates_per_episode
        have = _usable(rows[compiled.id, cap])
        growth = max((want / count if count else math.inf for count, want, cut
                      in zip(have, self.aims[compiled.id], self.cut[compiled.id, cap]) if cut and count < want),
                     default=2)
        raised = cap << 1
        while raised < cap * growth and raised < self.first_caps[compiled.id] << MAX_CAP_RAISES:
            raised <<= 1
        return raised

    def _run(self, runner: Runner, caps: list[tuple[CompiledTemplate, int, tuple[int, ...]]],
             on_done: OnDone | None = None, probe: bool = False) -> Rows:
        """Each template's rows with at most its cap of bindings per episode (and side), and with each of
        the smaller caps given with it, read from the same run; with `probe` (the first round), the
        statement of a template whose probe finds it without rows is not run (a raised one has rows)."""
        o = self.options
        requests = [Request(compiled.id, compiled.env, cap, _statement(compiled, cap, o.sampling, o.horizon), smaller,
                            compiled.probe if probe else None)
                    for compiled, cap, smaller in caps]
        tables = runner.rows(requests, on_done)
        rows = {}
        for request in requests:
            for cap, (table, cut) in _by_cap(tables[request.key], (*request.smaller, request.cap)).items():
                rows[request.template_id, cap], self.cut[request.template_id, cap] = table, cut
        return rows

    def limit(self, compiled: CompiledTemplate) -> int:
        """How many questions the template chooses (and renders) at first: its cap, or with --total (and no
        --per-category) twice the shortest list `Mix` makes that holds what it aims at on each side (the
        final cut takes its share of each side from it): an aim is set from the first round's rows, and
        where a template gives less than it aimed at, the others' margin makes up for it. A template
        whose list proves too short chooses again (`_choose_again`), so the limit changes no question."""
        o = self.options
        if o.total is None or o.per_category is not None or compiled.id not in self.aims:
            return o.per_template
        return min(o.per_template, 2 * _mix_length(*self.aims[compiled.id], o.adversarial_ratio, o.per_template))

    def template(self, compiled: CompiledTemplate, table: pa.Table | None, limit: int) -> list[dict]:
        """At most `limit` questions of the template from its candidate rows (None: it has no episodes)."""
        o = self.options
        report = self.reports[compiled.id]
        if table is None:
            report.limited_by = "no episodes"
            return []
        rows = table.to_pylist()
        adversarial = [row for row in rows if row["adversarial"]]
        report.adversarial_dropped = sum(not row[PREMISE_COLUMN] for row in adversarial)
        answerable = [row for row in rows if not row["adversarial"]]
        adversarial = [row for row in adversarial if row[PREMISE_COLUMN]]
        report.candidates = len(answerable)
        report.adversarial_candidates = len(adversarial)
        report.episodes_without_candidates = sorted(set(self.episodes_of(compiled))
                                                    - {row["episode_id"] for row in answerable})
        maker = RecordMaker(compiled, self.episodes, o.horizon, o.seed, self.jinja_env)
        self.mixes[compiled.id] = Mix(self._records(maker, answerable, report),
                                      self._records(maker, adversarial, report), o.adversarial_ratio)
        return self.choose(compiled.id, limit)

    def choose(self, template_id: str, limit: int) -> list[dict]:
        """The first `limit` questions of the template's list (and one more is drawn below its cap, to
        tell a list the limit cut from one that ends there)."""
        report = self.reports[template_id]
        with self.timer.phase("render"):
            drawn = self.mixes[template_id].first(limit if limit == self.options.per_template else limit + 1)
        chosen = drawn[:limit]
        _count(report, chosen)
        report.limited_by = ("template cap" if len(chosen) == self.options.per_template else
                             "set size" if len(drawn) > limit else "candidates")
        return chosen

    def _cap_by_side(self, compiled: CompiledTemplate) -> tuple[int, int]:
        """The template's cap on questions as answerable and adversarial ones, split as `Mix` splits it."""
        o = self.options
        if not compiled.checked.template.adversarials:
            return o.per_template, 0
        adversarial = nearest(o.adversarial_ratio * o.per_template)
        return o.per_template - adversarial, adversarial

    def _records(self, maker: RecordMaker, rows: list[dict], report: TemplateReport) -> Iterator[dict]:
        """The records of `rows` in seeded order, spread over episodes; rows that fail are counted and skipped."""
        seed = self.options.seed
        ids: dict[int, str] = {}  # id(row) -> its question id, made as the order reaches its episode

        def key(row: dict) -> str:
            ids[id(row)] = maker.row_id(row)
            return seeded_key(seed, ids[id(row)])
        for row in spread_over_episodes(rows, lambda row: row["episode_id"], key, seed, maker.compiled.id):
            try:
                yield maker.make(row, ids[id(row)])
            except RenderError as error:
                report.render_errors += 1
                report.render_error = report.render_error or str(error)
            except InvalidRecord as error:
                report.invalid.append(str(error))


def _statement(compiled: CompiledTemplate, cap: int, order: str, horizon: int | None = None) -> str:
    """The statement generation runs: at most `cap` bindings per episode and side, drawn in `order`,
    premises checked, saying where the cap cut a sample; at the horizon (None: whole episodes)."""
    return statement(compiled, cap, premise=True, order=order, cut=True, horizon=horizon is not None)


def _by_cap(rows: pa.Table | None, caps: tuple[int, ...]) -> dict[int, tuple[pa.Table, tuple[bool, bool]]]:
    """A statement's candidate rows at each of `caps` (the rows its bindings are sampled at), without
    the columns saying where a cap cut a sample and from which cap a binding is sampled, and whether
    that cap cut a sample on the answerable side and on a false-premise side. None (its probe found no
    rows) is what a statement without rows gives: no candidates, and no cap cut a sample."""
    if rows is None:
        return {cap: (NO_ROWS, (False, False)) for cap in caps}
    marks = rows.column(CUT_COLUMN).to_pylist()
    cut = {(adversarial, mark) for adversarial, mark in zip(rows.column("adversarial").to_pylist(), marks)
           if mark is not None}
    min_caps = rows.column(MIN_CAP_COLUMN).to_pylist()
    candidates = rows.drop_columns([CUT_COLUMN, MIN_CAP_COLUMN])
    return {cap: (rows_where(candidates, np.array([mark is None and least <= cap for mark, least in zip(marks, min_caps)],
                                                  dtype=bool)), ((False, cap) in cut, (True, cap) in cut))
            for cap in caps}


def _mix_length(answerable: int, adversarial: int, ratio: float, most: int) -> int:
    """The length of the shortest list `Mix` makes at `ratio`, both sides plentiful, that holds
    `answerable` and `adversarial` items; at most `most`.

    >>> _mix_length(8, 2, 0.2, 100), _mix_length(8, 4, 0.2, 100), _mix_length(3, 0, 0.2, 100), _mix_length(1, 1, 1.0, 9)
    (10, 18, 4, 9)
    """
    length = answerable + adversarial
    while length < most and (nearest(ratio * length) < adversarial or length - nearest(ratio * length) < answerable):
        length += 1
    return min(length, most)


def _choose_again(chosen: dict[str, list[dict]], reports: dict[str, TemplateReport], options: Options) -> list[str]:
    """The templates whose list their limit cut (`limit`: below the cap) and of which the set takes the
    whole of a side that has more candidates: more questions on that side could change the set.

    More questions on a side the set takes only part of cannot: a share smaller than its size does not
    grow with it, and as one template gives more, the shares of the others only shrink. So choosing
    again, at twice the limit, until no template is left makes the set that choosing up to the caps
    makes: the limit saves rendering, and never changes a question."""
    sizes = _sizes(chosen)
    kept = _set_shares(sizes, options.total, options.adversarial_ratio, reports)
    return [template_id for template_id, report in reports.items()
            if report.limited_by == "set size"
            and any(taken == size < candidates for taken, size, candidates
                    in zip(kept[template_id], sizes[template_id], (report.candidates, report.adversarial_candidates)))]


def _usable(rows: pa.Table) -> tuple[int, int]:
    """How many rows are answerable candidates, and how many adversarial ones with a false premise."""
    adversarial = sum(rows.column("adversarial").to_pylist())
    if PREMISE_COLUMN not in rows.column_names:
        return rows.num_rows - adversarial, 0
    return rows.num_rows - adversarial, sum(bool(false) for false in rows.column(PREMISE_COLUMN).to_pylist())


def _count(report: TemplateReport, chosen: list[dict]) -> None:
    report.questions = len(chosen)
    report.adversarial_questions = sum(r["adversarial"] for r in chosen)


def _cap_total(chosen: dict[str, list[dict]], reports: dict[str, TemplateReport], total: int, ratio: float) -> None:
    """Cut the set to `total` questions with the mix kept at set level: `ratio` of them adversarial (as
    near as the candidates allow), each side shared evenly among the categories, then among the envs of a
    category, then among its templates; each template keeps a prefix of each side of its list. Rounding
    per template would lose the false premises of a small set (one question a template: none)."""
    kept = _set_shares(_sizes(chosen), total, ratio, reports)
    for template_id, records in chosen.items():
        left = dict(zip((False, True), kept[template_id]))
        cut = []
        for record in records:
            if left[record["adversarial"]]:
                left[record["adversarial"]] -= 1
                cut.append(record)
        if len(cut) < len(records):
            chosen[template_id] = cut
            _count(reports[template_id], cut)
            reports[template_id].limited_by = "set size"


def _sizes(chosen: dict[str, list[dict]]) -> dict[str, tuple[int, int]]:
    """Each template's questions: how many answerable, how many adversarial."""
    return {t: (sum(not r["adversarial"] for r in records), sum(r["adversarial"] for r in records))
            for t, records in chosen.items()}


def _set_shares(sizes: dict[str, tuple[int, int]], total: int, ratio: float,
                reports: dict[str, TemplateReport]) -> dict[str, tuple[int, int]]:
    """How many of each template's answerable and adversarial `sizes` a set of `total` questions takes:
    `ratio` of them adversarial (as near as the sizes allow), each side shared by `_spread`."""
    adversarial = _spread({t: size[1] for t, size in sizes.items()},
                          min(nearest(ratio * total), sum(size[1] for size in sizes.values())), reports)
    answerable = _spread({t: size[0] for t, size in sizes.items()}, total - sum(adversarial.values()), reports)
    return {t: (answerable[t], adversarial[t]) for t in sizes}


def _spread(sizes: dict[str, int], count: int, reports: dict[str, TemplateReport]) -> dict[str, int]:
    """How many of each template's `sizes` `count` takes: shared evenly among categories, then envs, then
    templates (water-filling: a group with too few leaves the rest to the others)."""
    def grouped(keys, level) -> dict[str, list[str]]:
        groups = defaultdict(list)
        for key in keys:
            groups[level(reports[key])].append(key)
        return groups
    taken: dict[str, int] = {}
    categories = grouped(sizes, lambda r: r.category)
    for category, of_category in share({c: sum(sizes[t] for t in ts) for c, ts in categories.items()}, count).items():
        envs = grouped(categories[category], lambda r: r.env)
        for env, of_env in share({e: sum(sizes[t] for t in ts) for e, ts in envs.items()}, of_category).items():
            taken |= share({t: sizes[t] for t in envs[env]}, of_env)
    return taken


def _cap_categories(chosen: dict[str, list[dict]], reports: dict[str, TemplateReport], per_category: int) -> None:
    """Cut each category to `per_category` questions, shared evenly among its templates.

    Each template keeps a prefix of its list, which holds the adversarial ratio (sampling.Mix)."""
    by_category: dict[str, dict[str, int]] = defaultdict(dict)
    for template_id, records in chosen.items():
        by_category[reports[template_id].category][template_id] = len(records)
    for sizes in by_category.values():
        for template_id, kept in share(sizes, per_category).items():
            if kept < len(chosen[template_id]):
                chosen[template_id] = chosen[template_id][:kept]
                _count(reports[template_id], chosen[template_id])
                reports[template_id].limited_by = "category cap"
