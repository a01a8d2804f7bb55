"""The checker: resolves every name of a template against the schema, types every expression, and
reports every error it finds, not just the first, each with its span and, where it can, a suggestion.

`check_template(template, jinja_env) -> (checked or None, diagnostics)`. On success every expression
node carries its type (`node.ty`) and every `Name` what it refers to (`node.ref`); the compiler relies
on both. A call is typed by its function's record (dsl/functions/).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import jinja2
import jinja2.meta

from . import ast as A
from . import schema
from . import types as T
from .conventions import CHOICE_ANSWER_TYPES, MAX_CHOICES, ORDINALS
from .diagnostics import Diagnostic, choices, did_you_mean
from .functions import FUNCTIONS, OPTION_REASONS
from .metadata import CATEGORIES, DIFFICULTIES, TEMPLATE_ENVS
from .render import refused_constructs
from .visit import Visitor
from .vocabulary import game_values


# A question may say what it looks back over: `{% if horizon %}Up to step {{ horizon }}, {% endif %}...`
# (the horizon of the QA set, or none for whole episodes). Not a parameter or let of the template.
HORIZON_VARIABLE = "horizon"


@dataclass
class Scope:
    row: T.Relation | None = None  # the relation whose columns are visible as bare names


@dataclass
class CheckedTemplate:
    """A template that passed the checker, with what the compiler needs beyond the AST."""
    template: A.Template
    env: str
    category: str
    answer_type: str
    difficulty: str | None
    param_types: dict[str, T.Type]
    let_types: dict[str, T.Type]
    jinja_variables: set[str] = field(default_factory=set)


def check_template(template: A.Template, jinja_env: jinja2.Environment) -> tuple[CheckedTemplate | None, list[Diagnostic]]:
    """The checked template (None if anything is wrong), and every error found in it."""
    checker = Checker(template, jinja_env)
    return checker.check(), checker.diagnostics


class Checker(Visitor):
    """Checks one template; `visit_<Node>(e, scope)` types an expression node (through `expr`)."""

    def __init__(self, template: A.Template, jinja_env: jinja2.Environment):
        self.template = template
        self.jinja_env = jinja_env
        self.diagnostics: list[Diagnostic] = []
        self.env = "any"
        self.tables: dict[str, schema.Table] = {}
        self.params: dict[str, A.Param] = {}
        self.param_types: dict[str, T.Type] = {}
        self.lets: dict[str, A.Let] = {}
        self.let_types: dict[str, T.Type] = {}
        self.used_params: set[str] = set()
        self.adversarial_params: set[str] = set()

    # ---- reporting ----
    def error(self, span: A.Span, message: str, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(self.template.path, span, message, hint))

    # ---- the template ----
    def check(self) -> CheckedTemplate | None:
        t = self.template
        for kind, span in t.duplicates:
            self.error(span, f"'{kind}' is given more than once")
        self._check_header()
        self.tables = schema.tables_for(self.env)
        for param in t.params:
            self._check_param(param)
        for let in t.lets:
            self._check_let(let)
        for condition in t.requires:
            self._expect(condition, T.BOOLEAN, "a require condition")
        self._check_answer()
        self._check_accept()
        if t.choices is not None:
            self._check_choices(t.choices)
        for evidence in t.evidence:
            self._check_evidence(evidence)
        for adversarial in t.adversarials:
            self._check_adversarial(adversarial)
        variables = self._check_questions()
        for name, param in self.params.items():
            if name not in self.used_params:
                self.error(param.span, f"parameter '{name}' is never used",
                           "use it in a let, require, answer or evidence, or remove it")
        if self.diagnostics:
            return None
        return CheckedTemplate(t, self.env, t.category.value, t.answer_type.value,
                               t.difficulty.value if t.difficulty else None,
                               self.param_types, self.let_types, variables)

    def _check_header(self) -> None:
        t = self.template
        if t.env is None:
            self.error(t.span, f"template '{t.id}' has no 'env' clause", f"add 'env {TEMPLATE_ENVS[0]}' (or crafter, any)")
        elif t.env.value not in TEMPLATE_ENVS:
            self.error(t.env.span, f"unknown env '{t.env.value}'",
                       did_you_mean(t.env.value, TEMPLATE_ENVS) or f"use one of {choices(TEMPLATE_ENVS)}")
        else:
            self.env = t.env.value
            prefix = t.id.split(".")[0]
            if prefix in schema.ENVS and prefix != self.env:
                self.error(t.env.span, f"template '{t.id}' is named for {prefix} but declares env {self.env}",
                           f"write 'env {prefix}' or rename the template")
            folder = _env_folder(t.path)
            # A template of several envs lives in the folder of one of them; each of its instances finds
            # the same error, said once (qtc compile prints a diagnostic once).
            envs = [setting.value for setting in t.envs]
            if folder and folder not in envs and self.env != "any":
                folders = " or ".join(f"templates/{env}/" for env in envs)
                self.error(t.envs[0].span, f"a {' and '.join(envs)} template in the {folder} folder",
                           f"move it to {folders}" + (f" or write 'env {folder}'" if len(envs) == 1 else ""))
        if t.category is None:
            self.error(t.span, f"template '{t.id}' has no 'category' clause", f"add one of {choices(CATEGORIES)}")
        elif t.category.value not in CATEGORIES:
            self.error(t.category.span, f"unknown category '{t.category.value}'",
                       did_you_mean(t.category.value, CATEGORIES) or f"use one of {choices(CATEGORIES)}")
        if t.difficulty is not None and t.difficulty.value not in DIFFICULTIES:
            self.error(t.difficulty.span, f"unknown difficulty '{t.difficulty.value}'",
                       did_you_mean(t.difficulty.value, DIFFICULTIES) or f"use one of {choices(DIFFICULTIES)}")
        if t.answer_type is None:
            self.error(t.span, f"template '{t.id}' has no 'answer_type' clause",
                       f"add one of {choices(T.ANSWER_TYPES)}")
        elif t.answer_type.value not in T.ANSWER_TYPES:
            self.error(t.answer_type.span, f"unknown answer type '{t.answer_type.value}'",
                       did_you_mean(t.answer_type.value, T.ANSWER_TYPES) or f"use one of {choices(T.ANSWER_TYPES)}")
        if t.answer is None:
            self.error(t.span, f"template '{t.id}' has no 'answer' clause")
        if not t.questions:
            self.error(t.span, f"template '{t.id}' has no 'question' clause")
        if not t.evidence:
            self.error(t.span, f"template '{t.id}' has no 'evidence' clause",
                       "name the steps the answer rests on, e.g. 'evidence $t'")

    def _check_param(self, param: A.Param) -> None:
        if param.name in self.params:
            self.error(param.span, f"parameter '{param.name}' is declared twice")
            return
        domain_type = self._domain(param.domain)
        self.params[param.name] = param
        if domain_type is not None:
            param.ty = domain_type
            self.param_types[param.name] = domain_type
        if param.condition is not None:
            self._expect(param.condition, T.BOOLEAN, "a parameter condition")

    def _domain(self, domain: A.Expr) -> T.Type | None:
        """The type of a parameter whose values are drawn from `domain`."""
        if isinstance(domain, A.ListLiteral) and domain.items and all(
                isinstance(i, A.Name) and i.name in ORDINALS for i in domain.items):
            for item in domain.items:
                item.ref, item.ty = ("symbol", item.name), T.ORDINAL
            domain.ty = T.ListOf(T.ORDINAL)
            return T.ORDINAL
        ty = self.expr(domain, Scope())
        if ty is None:
            return None
        if isinstance(ty, (T.Bag, T.ListOf)):
            return ty.element
        if isinstance(domain, A.Range):
            return T.INTEGER
        self.error(domain.span, f"a parameter domain must be a set of values, not {ty}",
                   "draw values from a column (steps.action), a range (1..5), a list or vocab.KIND")
        return None

    def _check_let(self, let: A.Let) -> None:
        if let.name in self.lets or let.name in self.params:
            self.error(let.span, f"'{let.name}' is already defined")
            return
        shadowed = [t.name for t in self.tables.values() if t.column(let.name)]
        if let.name in self.tables or let.name == "vocab":
            self.error(let.span, f"let '{let.name}' would hide the table of that name", "choose another name")
        elif shadowed:
            self.error(let.span, f"let '{let.name}' has the name of a column of {choices(shadowed)}",
                       "choose another name, so that a bare name in a 'where' means one thing")
        # Checked and defined even when misnamed, so that its uses do not report errors of their own.
        ty = self.expr(let.expr, Scope())
        self.lets[let.name] = let
        if ty is not None:
            self.let_types[let.name] = ty

    def _check_answer(self) -> None:
        t = self.template
        if t.answer is None or t.answer_type is None or t.answer_type.value not in T.ANSWER_TYPES:
            if t.answer is not None:
                self.expr(t.answer, Scope())
            return
        expected = T.ANSWER_TYPES[t.answer_type.value]
        ty = self.expr(t.answer, Scope())
        if ty is None:
            return
        if isinstance(expected, T.ListOf) and isinstance(ty, T.ListOf) and ty.element in T.TEXTUAL:
            return
        if not T.compatible(expected, ty):
            self.error(t.answer.span, f"the answer is {ty}, but answer_type {t.answer_type.value} needs {expected}",
                       _answer_type_hint(ty))

    def _check_accept(self) -> None:
        t = self.template
        if t.accept is None:
            return
        ty = self.expr(t.accept, Scope())
        answer = t.answer.ty if t.answer is not None else None
        if ty is None or answer is None:
            return
        if not isinstance(ty, T.ListOf) or not T.comparable(ty.element, answer) and not T.compatible(ty.element, answer):
            self.error(t.accept.span, f"'accept' must be a list of answers ({T.ListOf(answer)}), not {ty}",
                       "give every correct answer, e.g. 'accept routes' where 'answer routes[1]'")

    def _check_choices(self, clause: A.Choices) -> None:
        t = self.template
        least = 3 if clause.none else 2
        if not least <= clause.count <= MAX_CHOICES:
            self.error(clause.count_span, f"'choices' takes {least} to {MAX_CHOICES} options, not {clause.count}",
                       "an option is named by a letter, A to Z" if clause.count > MAX_CHOICES else
                       "the answer and at least one distractor" + (", besides 'none of these'" if clause.none else ""))
        answer_type = t.answer_type.value if t.answer_type else None
        if answer_type is not None and answer_type not in CHOICE_ANSWER_TYPES:
            self.error(t.answer_type.span, f"answer_type {answer_type} cannot be multiple choice",
                       f"options are single values: {choices(CHOICE_ANSWER_TYPES)}")
            return
        ty = self.expr(clause.domain, Scope())
        if ty is None:
            return
        for node in A.walk(clause.domain):
            if isinstance(node, A.ParamRef) or isinstance(node, A.Name) and node.ref and node.ref[0] == "let":
                self.error(node.span, "the distractors of 'choices' are drawn per episode: their domain cannot "
                                      "read a parameter or a let", "draw them from a column or vocab.KIND")
                return
        answer = t.answer.ty if t.answer is not None else None
        if not isinstance(ty, (T.Bag, T.ListOf)):
            self.error(clause.domain.span, f"'choices' draws distractors from a set of values, not {ty}",
                       "draw them from a column (steps.action), a list or vocab.KIND")
        elif answer is not None and not T.comparable(ty.element, answer):
            self.error(clause.domain.span, f"distractors of type {ty.element} for an answer of type {answer}",
                       "draw them from values of the answer's kind, so that each could be the answer")

    def _check_evidence(self, evidence: A.Expr) -> None:
        ty = self.expr(evidence, Scope())
        if ty is None:
            return
        steps = (T.STEP, T.INTEGER)
        if ty in steps or isinstance(ty, T.Bag) and ty.element in steps or isinstance(evidence, A.Range):
            return
        self.error(evidence.span, f"evidence must be steps, not {ty}",
                   "give a step ($t), steps of a relation (hits.step) or a range ($L..$R)")

    def _check_adversarial(self, adversarial: A.Adversarial) -> None:
        param = self.params.get(adversarial.param)
        if param is None:
            self.error(adversarial.span, f"unknown parameter '{adversarial.param}'",
                       did_you_mean(adversarial.param, self.params))
            return
        if adversarial.param in self.adversarial_params:
            self.error(adversarial.span, f"parameter '{adversarial.param}' has two adversarial domains")
            return
        self.adversarial_params.add(adversarial.param)
        ty = self.expr(adversarial.domain, Scope())
        if adversarial.premise is not None:
            self._expect(adversarial.premise, T.BOOLEAN, "a premise")
        if ty is None:
            return
        if isinstance(ty, T.ListOf) and adversarial.premise is not None:
            ty = T.Bag(ty.element)  # a list of values to try, each checked by the premise
        if not isinstance(ty, T.Bag):
            self.error(adversarial.domain.span, f"an adversarial domain must be a set of values, not {ty}",
                       f"write e.g. 'vocab.KIND - table.column': values of the game that never occur, or give "
                       f"a list with the premise the question presumes: 'premise COND'")
        elif param.ty is not None and not T.comparable(param.ty, ty.element):
            self.error(adversarial.domain.span,
                       f"the adversarial domain holds {ty.element}, but parameter '{param.name}' is {param.ty}")
        elif adversarial.premise is None and isinstance(param.domain, (A.ListLiteral, A.Range)):
            # The check would be that the value is not in the list: true of any other value, whatever the trace.
            self.error(adversarial.span, f"the premise of '{param.name}' cannot be checked: its domain is a fixed "
                       f"list, so a value outside it says nothing about the trace",
                       "state what the question presumes: 'adversarial NAME: DOMAIN premise COND'")
        later = [p for p in self.template.params if p is not param and self.template.params.index(p) >
                 self.template.params.index(param) and _mentions_param(p, param.name)]
        for other in later:
            self.error(other.span, f"parameter '{other.name}' depends on '{param.name}', which has an adversarial domain",
                       "a false-premise value gives no values to draw from; make the domain independent")

    def _check_questions(self) -> set[str]:
        bound = set(self.params) | {n for n, ty in self.let_types.items() if isinstance(ty, T.Scalar | T.ListOf)}
        bound.add(HORIZON_VARIABLE)
        all_variables: set[str] = set()
        for question in self.template.questions:
            if not question.text.strip():
                self.error(question.span, "the question text is blank")
                continue
            try:
                parsed = self.jinja_env.parse(question.text)
            except jinja2.TemplateSyntaxError as error:
                self.error(question.span, f"bad Jinja2 in the question: {error.message}")
                continue
            unknown_filters = sorted(_filters_used(parsed) - set(self.jinja_env.filters))
            for filter_name in unknown_filters:
                self.error(_span_in_string(question, filter_name), f"unknown filter '{filter_name}'",
                           did_you_mean(filter_name, self.jinja_env.filters))
            refused = refused_constructs(parsed)
            for word, message in sorted(refused, key=lambda item: question.text.find(item[0])):
                self.error(_span_in_string(question, word), message,
                           "show parameters and lets as they are, with filters: {{ name | ordinal }}")
            if unknown_filters or refused:
                continue  # Jinja cannot analyse a template whose filters it does not know
            variables = jinja2.meta.find_undeclared_variables(parsed)
            all_variables |= variables
            for name in sorted(variables - bound):
                self.error(_span_in_string(question, name), f"question variable '{name}' is not a parameter or let",
                           did_you_mean(name, bound) or f"bound names: {choices(bound) or 'none'}")
            if self.template.adversarials:
                for name in sorted(variables & set(self.let_types)):
                    self.error(_span_in_string(question, name),
                               f"question variable '{name}' is a let, but a false-premise question has no lets",
                               "show parameters only in the question of a template with an adversarial clause")
            for name in sorted(set(self.params) - variables - self._shown_as_option()):
                self.error(question.span, f"the question does not mention parameter '{name}'",
                           f"show it, e.g. {{{{ {name} }}}}, or the question cannot be understood")
        return all_variables - {HORIZON_VARIABLE}

    def _shown_as_option(self) -> set[str]:
        """The parameter a multiple-choice answer is (`answer $p`): its value is shown as an option."""
        t = self.template
        if t.choices is not None and isinstance(t.answer, A.ParamRef):
            return {t.answer.name}
        return set()

    # ---- expressions ----
    def _expect(self, expr: A.Expr, expected: T.Type, what: str) -> None:
        ty = self.expr(expr, Scope())
        if ty is not None and not T.compatible(expected, ty):
            self.error(expr.span, f"{what} must be {expected}, not {ty}")

    def expr(self, e: A.Expr, scope: Scope) -> T.Type | None:
        """Type `e`, record the type on the node, and report what is wrong; None after an error."""
        ty = self.visit(e, scope)
        e.ty = ty
        return ty

    def check_literal_value(self, e: A.Expr, ty: T.Type) -> None:
        """A string written where a value of the game is meant (`material == "tree"`) must be one: a typo
        would silently match nothing. Only games whose vocabulary is fixed can be checked here."""
        known = game_values(self.env, ty)
        if known is not None and isinstance(e, A.Literal) and isinstance(e.value, str) and e.value not in known:
            self.error(e.span, f"'{e.value}' is not among {self.env}'s {ty}s",
                       did_you_mean(e.value, known) or f"{ty}s: {choices(known)}")

    def visit_Literal(self, e: A.Literal, scope: Scope) -> T.Type:
        value = e.value
        if isinstance(value, bool):
            return T.BOOLEAN
        if isinstance(value, int):
            if not -2**63 <= value < 2**63:
                self.error(e.span, "this integer does not fit 64 bits", f"integers run from {-2**63} to {2**63 - 1}")
            return T.INTEGER
        if isinstance(value, float):
            if not math.isfinite(value):
                self.error(e.span, "this number is too large to be a float", "write a number below 1e308")
            return T.FLOAT
        if isinstance(value, str):
            return T.STRING
        return T.NULL

    def visit_ListLiteral(self, e: A.ListLiteral, scope: Scope) -> T.Type | None:
        types = [self.expr(item, scope) for item in e.items]
        if any(t is None for t in types):
            return None
        for item, ty in zip(e.items, types):
            if not isinstance(ty, T.Scalar):
                self.error(item.span, f"a list holds single values, not {ty}",
                           "write a column of a relation as rel.column, or a row's field as row.field")
                return None
        element = next((t for t in types if t != T.NULL), T.NULL)
        for item, ty in zip(e.items, types):
            if not T.comparable(element, ty):
                self.error(item.span, f"a list mixes {element} and {ty}")
                return None
        return T.ListOf(element)

    def visit_ParamRef(self, e: A.ParamRef, scope: Scope) -> T.Type | None:
        if e.name not in self.params:
            declared_later = any(p.name == e.name for p in self.template.params)
            self.error(e.span, f"unknown parameter '${e.name}'",
                       "parameters can only use parameters declared before them" if declared_later
                       else did_you_mean(e.name, self.params) or _param_hint(e.name, self.lets))
            return None
        self.used_params.add(e.name)
        return self.param_types.get(e.name)

    def visit_Name(self, e: A.Name, scope: Scope) -> T.Type | None:
        if scope.row is not None and scope.row.column(e.name) is not None:
            e.ref = ("column", e.name)
            return scope.row.column(e.name)
        if e.name in self.lets:
            e.ref = ("let", e.name)
            return self.let_types.get(e.name)
        if e.name in self.tables and self.tables[e.name].per_game:
            # Its rows are the game's, not an episode's: read by kind, they are the episode's game's values.
            self.error(e.span, f"'{e.name}' is read by kind, not as a relation",
                       f"write {e.name}.KIND (kinds: {choices(schema.VOCAB_KINDS.get(self.env, {}))})")
            return None
        if e.name in self.tables:
            e.ref = ("table", self.tables[e.name])
            return self.tables[e.name].relation_type
        if e.name in self.params:
            self.error(e.span, f"'{e.name}' is a parameter", f"write '${e.name}'")
            return None
        other_env = [t for t in schema.TABLES if t.name == e.name and t.env not in ("any", self.env)]
        if other_env:
            self.error(e.span, f"table '{e.name}' is not available in {self.env} templates "
                               f"(it is a {other_env[0].env} table)")
            return None
        candidates = list(self.lets) + list(self.tables)
        if scope.row is not None:
            candidates += [name for name, _ in scope.row.columns]
            message = f"unknown name '{e.name}': not a column of {scope.row.name}, a let or a table"
        else:
            message = f"unknown name '{e.name}': not a let or a table"
        self.error(e.span, message, did_you_mean(e.name, candidates))
        return None

    def visit_Range(self, e: A.Range, scope: Scope) -> T.Type | None:
        low, high = self.expr(e.low, scope), self.expr(e.high, scope)
        for side, ty in ((e.low, low), (e.high, high)):
            if ty is not None and ty not in T.NUMERIC:
                self.error(side.span, f"a range bound must be a number, not {ty}")
                return None
        if low is None or high is None:
            return None
        return T.ListOf(T.STEP if T.STEP in (low, high) else T.INTEGER)

    def visit_Field(self, e: A.Field, scope: Scope) -> T.Type | None:
        if isinstance(e.base, A.Name) and e.base.name == "vocab" and not (
                scope.row and scope.row.column("vocab")) and "vocab" not in self.lets:
            e.base.ref = ("vocab", None)
            kinds = schema.VOCAB_KINDS.get(self.env, {})
            if e.name not in kinds:
                self.error(e.name_span, f"no vocabulary '{e.name}' for {self.env}",
                           did_you_mean(e.name, kinds) or f"kinds: {choices(kinds)}")
                return None
            return T.Bag(kinds[e.name])
        base = self.expr(e.base, scope)
        if base is None:
            return None
        if isinstance(base, (T.Relation, T.Row)):
            relation = base if isinstance(base, T.Relation) else base.relation
            column = relation.column(e.name)
            if column is None:
                self.error(e.name_span, f"unknown column '{e.name}' in {relation.name}",
                           did_you_mean(e.name, [n for n, _ in relation.columns])
                           or f"columns: {choices(n for n, _ in relation.columns)}")
                return None
            return T.Bag(column) if isinstance(base, T.Relation) else column
        self.error(e.name_span, f"'.{e.name}' needs a row or a relation, not {base}")
        return None

    def visit_Index(self, e: A.Index, scope: Scope) -> T.Type | None:
        base = self.expr(e.base, scope)
        index = self.expr(e.index, scope)
        if base is None or index is None:
            return None
        if isinstance(base, T.ListOf):
            if index not in (T.INTEGER, T.ORDINAL):
                self.error(e.index.span, f"a list index must be an integer (1 is the first, -1 the last), not {index}")
                return None
            return base.element
        if not isinstance(base, T.Relation) or not base.has_step:
            self.error(e.span, f"[step] indexing needs a relation with a step column or a list, not {base}")
            return None
        if index not in T.NUMERIC:
            self.error(e.index.span, f"a step index must be a number, not {index}")
            return None
        return T.Row(base)

    def visit_Where(self, e: A.Where, scope: Scope) -> T.Type | None:
        base = self.expr(e.base, scope)
        if base is None:
            return None
        if not isinstance(base, T.Relation):
            self.error(e.base.span, f"'where' filters a relation, not {base}")
            return None
        condition = self.expr(e.condition, Scope(row=base))
        if condition is not None and condition != T.BOOLEAN:
            self.error(e.condition.span, f"a 'where' condition must be boolean, not {condition}")
        return base

    def visit_Sort(self, e: A.Sort, scope: Scope) -> T.Type | None:
        base = self.expr(e.base, scope)
        if base is None:
            return None
        if not isinstance(base, T.Relation):
            self.error(e.base.span, f"'sort' orders a relation, not {base}")
            return None
        for key in e.keys:
            ty = self.expr(key.expr, Scope(row=base))
            if ty is not None and not isinstance(ty, T.Scalar):
                self.error(key.expr.span, f"a sort key must be a value, not {ty}")
        return base

    def visit_Unary(self, e: A.Unary, scope: Scope) -> T.Type | None:
        ty = self.expr(e.operand, scope)
        if ty is None:
            return None
        if e.op == "not":
            if ty != T.BOOLEAN:
                self.error(e.operand.span, f"'not' needs a boolean, not {ty}")
                return None
            return T.BOOLEAN
        if ty not in T.NUMERIC:
            self.error(e.operand.span, f"'-' needs a number, not {ty}")
            return None
        return T.INTEGER if ty in (T.STEP, T.ORDINAL) else ty

    def visit_Binary(self, e: A.Binary, scope: Scope) -> T.Type | None:
        left, right = self.expr(e.left, scope), self.expr(e.right, scope)
        if left is None or right is None:
            return None
        if e.op in ("and", "or"):
            for side, ty in ((e.left, left), (e.right, right)):
                if ty != T.BOOLEAN:
                    self.error(side.span, f"'{e.op}' needs booleans, not {ty}")
                    return None
            return T.BOOLEAN
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            if T.NULL in (left, right):
                # A comparison with null is null, so it never holds: `x != null` would silently match nothing.
                test = "is not null" if e.op == "!=" else "is null"
                self.error(e.span, f"'{e.op} null' is never true: a comparison with null is null",
                           f"write `{test}`" if e.op in ("==", "!=") else "test for null with `is null`")
                return None
            if not T.comparable(left, right) or not isinstance(left, T.Scalar):
                self.error(e.span, f"cannot compare {left} with {right}")
                return None
            if e.op not in ("==", "!=") and left not in T.NUMERIC and left != T.NULL:
                self.error(e.span, f"'{e.op}' orders numbers, not {left}")
                return None
            self.check_literal_value(e.right, left)
            self.check_literal_value(e.left, right)
            return T.BOOLEAN
        if e.op == "-" and isinstance(left, T.Bag):
            if not isinstance(right, T.Bag) or not T.comparable(left.element, right.element):
                self.error(e.span, f"cannot take {right} away from {left}", "subtract a set of the same kind of value")
                return None
            return left
        for side, ty in ((e.left, left), (e.right, right)):
            if ty not in T.NUMERIC:
                self.error(side.span, f"'{e.op}' needs numbers, not {ty}")
                return None
        if e.op == "/" or T.FLOAT in (left, right):
            return T.FLOAT
        if e.op in ("+", "-") and T.STEP in (left, right) and not (e.op == "-" and left == right == T.STEP):
            return T.STEP
        return T.INTEGER

    def visit_IsNull(self, e: A.IsNull, scope: Scope) -> T.Type | None:
        item = self.expr(e.item, scope)
        if item is None:
            return None
        if not isinstance(item, (T.Scalar, T.ListOf)):
            self.error(e.item.span, f"'is null' tests a value, not {item}")
            return None
        return T.BOOLEAN

    def visit_In(self, e: A.In, scope: Scope) -> T.Type | None:
        item, container = self.expr(e.item, scope), self.expr(e.container, scope)
        if item is None or container is None:
            return None
        if not isinstance(container, (T.ListOf, T.Bag)):
            self.error(e.container.span, f"'in' needs a list, a range or a set of values, not {container}")
            return None
        if not T.comparable(item, container.element):
            self.error(e.span, f"cannot look for {item} among {container.element} values")
            return None
        if isinstance(e.container, A.ListLiteral):
            for literal in e.container.items:
                self.check_literal_value(literal, item)
        return T.BOOLEAN

    def visit_Call(self, e: A.Call, scope: Scope) -> T.Type | None:
        function = FUNCTIONS.get(e.function)
        if function is None:
            self.error(e.function_span, f"unknown function '{e.function}'",
                       did_you_mean(e.function, FUNCTIONS) or f"functions: {choices(FUNCTIONS)}")
            return None
        arity, options = function.arity, function.options
        if len(e.args) not in arity:
            wanted = " or ".join(str(n) for n in arity)
            self.error(e.span, f"'{e.function}' takes {wanted} argument{'s' if max(arity) != 1 else ''}, "
                               f"got {len(e.args)}", f"usage: {function.usage}")
            return None
        if not self._check_options(e, options):
            return None
        first = self.expr(e.args[0], scope) if e.args else None
        if e.args and first is None:
            return None
        rest = []
        for position, arg in enumerate(e.args[1:], start=1):
            if function.per_row_from is not None and position >= function.per_row_from:
                if not isinstance(first, T.Relation):
                    break
                rest.append(self.expr(arg, Scope(row=first)))
            else:
                rest.append(self.expr(arg, scope))
        if any(ty is None for ty in rest):
            return None
        return function.type(self, e, [first, *rest])

    def _check_options(self, e: A.Call, options: dict[str, tuple[str, ...]]) -> bool:
        """Every option of the call is one of the function's, and each of those is given a value it allows."""
        for name in e.kwargs:
            if name not in options:
                self.error(e.kwargs[name].span, f"'{e.function}' has no option '{name}'",
                           did_you_mean(name, options) or (f"options: {choices(options)}" if options else None))
                return False
        for name, allowed in options.items():
            if name not in e.kwargs:
                self.error(e.function_span, f"'{e.function}' needs '{name}=' (one of {choices(allowed)})",
                           OPTION_REASONS[name])
                return False
            value = e.kwargs[name]
            if not isinstance(value, A.Name) or value.name not in allowed:
                shown = value.name if isinstance(value, A.Name) else "this"
                self.error(value.span, f"'{shown}' is not a value of '{name}'",
                           (did_you_mean(shown, allowed) if isinstance(value, A.Name) else None)
                           or f"use one of {choices(allowed)}")
                return False
            value.ref, value.ty = ("symbol", value.name), None
        return True


def _env_folder(path: str) -> str | None:
    parts = path.replace("\\", "/").split("/")
    return parts[-2] if len(parts) >= 2 and parts[-2] in schema.ENVS else None


def _mentions_param(param: A.Param, name: str) -> bool:
    return any(isinstance(node, A.ParamRef) and node.name == name
               for root in param.expressions() for node in A.walk(root))


def _filters_used(parsed) -> set[str]:
    from jinja2 import nodes
    return {node.name for node in parsed.find_all(nodes.Filter)}


def _span_in_string(question: A.Question, word: str) -> A.Span:
    """The span of `word` inside a question string (which is written on one line)."""
    offset = question.text.find(word)
    if offset < 0 or question.span.line != question.span.end_line:
        return question.span
    column = question.span.column + 1 + offset
    return A.Span(question.span.line, column, question.span.line, column + len(word))


def _param_hint(name: str, lets) -> str | None:
    return f"'{name}' is a let: write it without '$'" if name in lets else None


def _answer_type_hint(ty: T.Type) -> str | None:
    if isinstance(ty, T.Row):
        return "pick a column of the row, e.g. '.step'"
    if isinstance(ty, T.Relation):
        return "reduce the relation to one value, e.g. count(...) or first(...).step"
    matching = [name for name, t in T.ANSWER_TYPES.items() if t == ty]
    return f"did you mean 'answer_type {matching[0]}'?" if matching else None
