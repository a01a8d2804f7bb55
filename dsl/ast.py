"""The typed AST of .qtpl templates.

Nodes are plain dataclasses with the source span they came from. The checker fills in `ty` (the value
type) on every expression node it accepts; the compiler and the reference evaluator read those types
and never re-derive them. Traversal belongs to the tree: `walk(e)` yields every node under an
expression, and `Template.expressions()` every expression a template holds, with its clause.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .types import Type


@dataclass(frozen=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int  # exclusive, as Lark reports it


@dataclass(eq=False)
class Expr:
    span: Span
    ty: Type | None = field(default=None, init=False, repr=False)


@dataclass(eq=False)
class Name(Expr):
    """A bare identifier: a column in a stage's scope, a let, a table, or a symbol (ordinal, tie rule)."""
    name: str
    # What the checker resolved it to: ("column", name), ("let", name), ("table", Table),
    # ("vocab", None) or ("symbol", word).
    ref: tuple | None = field(default=None, init=False, repr=False)


@dataclass(eq=False)
class ParamRef(Expr):
    name: str


@dataclass(eq=False)
class Literal(Expr):
    value: Any  # int, float, str, bool or None


@dataclass(eq=False)
class ListLiteral(Expr):
    items: list[Expr]


@dataclass(eq=False)
class Range(Expr):
    low: Expr
    high: Expr


@dataclass(eq=False)
class Field(Expr):
    base: Expr
    name: str
    name_span: Span


@dataclass(eq=False)
class Index(Expr):
    base: Expr
    index: Expr


@dataclass(eq=False)
class Call(Expr):
    """A function call; `rel | f(a)` parses to the call f(rel, a)."""
    function: str
    function_span: Span
    args: list[Expr]
    kwargs: dict[str, Expr]


@dataclass(eq=False)
class Where(Expr):
    base: Expr
    condition: Expr


@dataclass(eq=False)
class SortKey:
    expr: Expr
    descending: bool


@dataclass(eq=False)
class Sort(Expr):
    base: Expr
    keys: list[SortKey]


@dataclass(eq=False)
class Binary(Expr):
    """Arithmetic (+ - * / %), comparison (== != < <= > >=) or logic (and, or)."""
    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class Unary(Expr):
    op: str  # "not" or "-"
    operand: Expr


@dataclass(eq=False)
class In(Expr):
    item: Expr
    container: Expr
    negated: bool


@dataclass(eq=False)
class IsNull(Expr):
    """`x is null` (or `x is not null` when negated): never null itself, unlike `x == null`."""
    item: Expr
    negated: bool


@dataclass(eq=False)
class Param:
    name: str
    domain: Expr
    condition: Expr | None
    span: Span
    ty: Type | None = field(default=None, init=False)

    def expressions(self) -> Iterator[Expr]:
        """Its domain, then its condition if it has one."""
        yield self.domain
        if self.condition is not None:
            yield self.condition


@dataclass(eq=False)
class Let:
    name: str
    expr: Expr
    span: Span


@dataclass(eq=False)
class Question:
    text: str
    span: Span


@dataclass(eq=False)
class Adversarial:
    param: str
    domain: Expr
    span: Span
    # What the question presumes, as a condition: a false-premise candidate is kept only where it does
    # not hold (null counts as not holding). Without it, the premise is that the value occurs: it must
    # lie outside the parameter's own domain.
    premise: Expr | None = None


@dataclass(eq=False)
class Choices:
    """Multiple choice: `count` options, the answer's and distractors drawn from `domain`, each verified
    not to be a correct answer (CONVENTIONS.md, Multiple choice); with `none`, the last option is "none of
    these"."""
    count: int
    domain: Expr
    none: bool
    span: Span
    count_span: Span

    @property
    def slots(self) -> int:
        """The options that hold values: all but 'none of these'. A question draws that many distractors;
        the answer takes one slot, unless 'none of these' is the right option."""
        return self.count - self.none

    def needed(self, adversarial: bool) -> int:
        """How many distractors a question must have to be asked: every slot, but for the answer's where
        it always has one (an answerable question without 'none of these', which may be the right option)."""
        return self.slots if adversarial or self.none else self.slots - 1


@dataclass(eq=False)
class Setting:
    """A header clause (env, category, difficulty, answer_type) with the span of its value."""
    value: str
    span: Span


@dataclass(eq=False)
class Template:
    id: str
    path: str
    span: Span
    env: Setting | None = None  # the env it runs on
    # Every env its header names: more than one for a template of several envs, read as one template per
    # env (dsl/instances.py), each with its own `env`.
    envs: tuple[Setting, ...] = ()
    category: Setting | None = None
    difficulty: Setting | None = None
    answer_type: Setting | None = None
    params: list[Param] = field(default_factory=list)
    lets: list[Let] = field(default_factory=list)
    requires: list[Expr] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    answer: Expr | None = None
    accept: Expr | None = None  # a list of answers that are all correct (the answer is always one of them)
    choices: Choices | None = None  # multiple choice; None for an open question
    evidence: list[Expr] = field(default_factory=list)
    adversarials: list[Adversarial] = field(default_factory=list)
    duplicates: list[tuple[str, Span]] = field(default_factory=list)  # repeated single-valued clauses
    source: str = ""  # the template's own text, for hashing and --explain

    def expressions(self) -> Iterator[tuple[str, Expr]]:
        """Every expression root of the template, in clause order, with its clause: 'param k', 'let hits',
        'require', 'answer', 'accept', 'evidence', 'choices' or 'adversarial k'."""
        for param in self.params:
            for root in param.expressions():
                yield f"param {param.name}", root
        for let in self.lets:
            yield f"let {let.name}", let.expr
        for condition in self.requires:
            yield "require", condition
        if self.answer is not None:
            yield "answer", self.answer
        if self.accept is not None:
            yield "accept", self.accept
        for evidence in self.evidence:
            yield "evidence", evidence
        if self.choices is not None:
            yield "choices", self.choices.domain
        for adversarial in self.adversarials:
            yield f"adversarial {adversarial.param}", adversarial.domain
            if adversarial.premise is not None:
                yield f"premise {adversarial.param}", adversarial.premise


def conjuncts(e: Expr) -> list[Expr]:
    """The operands of a chain of `and`, in order (`e` alone if it is not one)."""
    if isinstance(e, Binary) and e.op == "and":
        return conjuncts(e.left) + conjuncts(e.right)
    return [e]


def walk(e: Expr) -> Iterator[Expr]:
    """Every expression node under `e`, `e` first (sort keys give their expressions)."""
    yield e
    for value in vars(e).values():
        children = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else [value]
        for child in children:
            if isinstance(child, SortKey):
                child = child.expr
            if isinstance(child, Expr):
                yield from walk(child)
