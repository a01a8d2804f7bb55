"""Parse .qtpl text into AST templates, with every syntax error reported (not just the first).

Lark's LALR parser stops at the first error, so the parser recovers by itself: each template is
parsed on its own (its text alone, its positions moved to its place in the file afterwards, so that a
file of N templates takes N times one template's time), and after an error the clause that holds it is
blanked and the template parsed again, until it parses.

Lines end at "\n" (the file is read with universal newlines, so "\r\n" and "\r" are "\n" by then), and
blank is what the grammar's WS is: never Python's wider `splitlines` and `strip`, which also break and
strip at form feeds, U+001C-U+001E, U+0085, U+2028 and the like, characters the grammar refuses.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from importlib.resources import files

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import ast as A
from .diagnostics import Diagnostic, did_you_mean
from .instances import instances

CLAUSE_KEYWORDS = ("env", "category", "difficulty", "answer_type", "param", "let", "require",
                   "question", "answer", "accept", "evidence", "adversarial", "choices")
_CLAUSE_START = re.compile(r"^[ \t]*(%s)\b" % "|".join(CLAUSE_KEYWORDS))
_TEMPLATE_START = re.compile(r"^template\b", re.MULTILINE)
_MAX_RECOVERIES = 50
BLANK = " \t\f\r\n"  # the grammar's WS
_SINGLE_CLAUSES = ("category", "difficulty", "answer_type", "answer", "accept", "choices")
_LIST_CLAUSES = {"param": "params", "let": "lets", "require": "requires", "question": "questions",
                 "adversarial": "adversarials"}

# How expected terminals are named in messages.
_TERMINAL_WORDS = {"NAME": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string",
                   "COMPARE": "a comparison", "PLUS": "'+'", "MINUS": "'-'", "MUL_OP": "an operator",
                   "DESC": "'desc'", "$END": "end of file"}


@cache
def _parser() -> Lark:
    grammar = files("qtc.grammar").joinpath("qtpl.lark").read_text()
    # cache=True: the built parser is kept in the temporary folder, keyed by the grammar's hash, so a
    # process after the first loads it (15 ms) instead of building it again (about 240 ms).
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=True)


def _span_of_token(token: Token) -> A.Span:
    return A.Span(token.line, token.column, token.end_line, token.end_column)


def _span_of_meta(meta) -> A.Span:
    return A.Span(meta.line, meta.column, meta.end_line, meta.end_column)


def _unquote(token: Token) -> str:
    body = token.value[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree to AST nodes. Clauses become (kind, payload) pairs that `template` assembles."""

    def __init__(self, path: str, source: str, first_line: int):
        super().__init__()
        self.path = path
        self.source = source  # the text of the file from line first_line on
        self.first_line = first_line
        self.diagnostics: list[Diagnostic] = []  # a header of several envs that cannot be read as one per env

    # ---- templates and clauses ----
    def start(self, meta, templates):
        return [instance for template in templates for instance in template]

    def template_id(self, meta, names):
        return ".".join(str(n) for n in names), _span_of_meta(meta)

    def template(self, meta, children):
        (template_id, id_span), *clauses = children
        span = _span_of_meta(meta)
        lines = self.source.split("\n")[span.line - self.first_line:span.end_line - self.first_line + 1]
        template = A.Template(id=template_id, path=self.path, span=id_span, source="\n".join(lines))
        env_clause = None
        for kind, payload in clauses:
            if kind == "env" and env_clause is None:
                template.envs, env_clause = payload
                template.env = template.envs[0]
            elif kind == "env":
                template.duplicates.append((kind, payload[0][0].span))
            elif kind in _SINGLE_CLAUSES:
                if getattr(template, kind) is not None:
                    template.duplicates.append((kind, payload.span))
                else:
                    setattr(template, kind, payload)
            elif kind == "evidence":
                template.evidence.extend(payload)
            else:
                getattr(template, _LIST_CLAUSES[kind]).append(payload)
        found, problems = instances(template, env_clause, span.line)
        self.diagnostics += problems
        return found

    def _setting(self, kind, children):
        return kind, A.Setting(str(children[0]), _span_of_token(children[0]))

    def env_clause(self, meta, children):
        return "env", (tuple(A.Setting(str(name), _span_of_token(name)) for name in children), _span_of_meta(meta))

    def category_clause(self, meta, children):
        return self._setting("category", children)

    def difficulty_clause(self, meta, children):
        return self._setting("difficulty", children)

    def answer_type_clause(self, meta, children):
        return self._setting("answer_type", children)

    def param_clause(self, meta, children):
        name, domain, condition = children
        return "param", A.Param(str(name), domain, condition, _span_of_token(name))

    def let_clause(self, meta, children):
        name, expr = children
        return "let", A.Let(str(name), expr, _span_of_token(name))

    def require_clause(self, meta, children):
        return "require", children[0]

    def question_clause(self, meta, children):
        return "question", A.Question(_unquote(children[0]), _span_of_token(children[0]))

    def answer_clause(self, meta, children):
        return "answer", children[0]

    def accept_clause(self, meta, children):
        return "accept", children[0]

    def choices_clause(self, meta, children):
        count, domain, none_option = children
        return "choices", A.Choices(int(count), domain, none_option is not None, _span_of_meta(meta),
                                    _span_of_token(count))

    def none_option(self, meta, children):
        return True

    def evidence_clause(self, meta, children):
        return "evidence", list(children)

    def adversarial_clause(self, meta, children):
        name, domain, premise = children
        return "adversarial", A.Adversarial(str(name), domain, _span_of_token(name), premise)

    # ---- expressions ----
    def pipe(self, meta, children):
        base, stage = children
        kind, payload, stage_meta = stage
        span = A.Span(base.span.line, base.span.column, stage_meta.end_line, stage_meta.end_column)
        if kind == "where":
            return A.Where(span, base, payload)
        if kind == "sort":
            return A.Sort(span, base, payload)
        name, args, kwargs = payload
        return A.Call(span, str(name), _span_of_token(name), [base, *args], kwargs)

    def where_stage(self, meta, children):
        return "where", children[0], meta

    def sort_stage(self, meta, children):
        return "sort", list(children), meta

    def sort_key(self, meta, children):
        expr, desc = children
        return A.SortKey(expr, desc is not None)

    def call_stage(self, meta, children):
        name = children[0]
        args, kwargs = children[1] if len(children) > 1 and children[1] is not None else ([], {})
        return "call", (name, args, kwargs), meta

    def args(self, meta, children):
        positional, named = [], {}
        for child in children:
            if isinstance(child, tuple):
                named[child[0]] = child[1]
            else:
                positional.append(child)
        return positional, named

    def named_arg(self, meta, children):
        return str(children[0]), children[1]

    def call(self, meta, children):
        name = children[0]
        args, kwargs = children[1] if children[1] is not None else ([], {})
        return A.Call(_span_of_meta(meta), str(name), _span_of_token(name), args, kwargs)

    def _binary(self, meta, children):
        left, op, right = children
        return A.Binary(_span_of_meta(meta), str(op), left, right)

    arith = _binary
    compare = _binary

    def or_op(self, meta, children):
        return A.Binary(_span_of_meta(meta), "or", *children)

    def and_op(self, meta, children):
        return A.Binary(_span_of_meta(meta), "and", *children)

    def not_op(self, meta, children):
        return A.Unary(_span_of_meta(meta), "not", children[0])

    def negate(self, meta, children):
        operand = children[1]
        if isinstance(operand, A.Literal) and isinstance(operand.value, (int, float)) and not isinstance(operand.value, bool):
            return A.Literal(_span_of_meta(meta), -operand.value)  # a negative number is a literal
        return A.Unary(_span_of_meta(meta), "-", operand)

    def in_op(self, meta, children):
        return A.In(_span_of_meta(meta), children[0], children[1], negated=False)

    def not_in_op(self, meta, children):
        return A.In(_span_of_meta(meta), children[0], children[1], negated=True)

    def is_null(self, meta, children):
        return A.IsNull(_span_of_meta(meta), children[0], negated=False)

    def is_not_null(self, meta, children):
        return A.IsNull(_span_of_meta(meta), children[0], negated=True)

    def range(self, meta, children):
        return A.Range(_span_of_meta(meta), *children)

    def field(self, meta, children):
        base, name = children
        return A.Field(_span_of_meta(meta), base, str(name), _span_of_token(name))

    def index(self, meta, children):
        return A.Index(_span_of_meta(meta), *children)

    def name(self, meta, children):
        return A.Name(_span_of_meta(meta), str(children[0]))

    def param_ref(self, meta, children):
        return A.ParamRef(_span_of_meta(meta), str(children[0]))

    def int_literal(self, meta, children):
        # Past 20 digits no literal fits 64 bits: such a literal stands as 2**63, which the checker refuses
        # (Python would refuse to convert one of over 4,300 digits at all).
        digits = str(children[0])
        return A.Literal(_span_of_meta(meta), int(digits) if len(digits) <= 20 else 2 ** 63)

    def float_literal(self, meta, children):
        return A.Literal(_span_of_meta(meta), float(children[0]))

    def string_literal(self, meta, children):
        return A.Literal(_span_of_meta(meta), _unquote(children[0]))

    def true_literal(self, meta, children):
        return A.Literal(_span_of_meta(meta), True)

    def false_literal(self, meta, children):
        return A.Literal(_span_of_meta(meta), False)

    def null_literal(self, meta, children):
        return A.Literal(_span_of_meta(meta), None)

    def list_literal(self, meta, children):
        return A.ListLiteral(_span_of_meta(meta), [c for c in children if c is not None])


def _describe_expected(expected: set[str]) -> str:
    parser = _parser()
    words = set()
    for name in expected:
        if name in _TERMINAL_WORDS:
            words.add(_TERMINAL_WORDS[name])
            continue
        try:
            pattern = parser.get_terminal(name).pattern
        except KeyError:
            words.add(name.lower())
            continue
        words.add(f"'{pattern.value}'" if pattern.type == "str" else name.lower())
    ordered = sorted(words)
    if len(ordered) > 8:
        return ", ".join(ordered[:8]) + ", ..."
    return ", ".join(ordered)


def _at_end_of_file(error: UnexpectedInput) -> bool:
    return isinstance(error, UnexpectedEOF) or isinstance(error, UnexpectedToken) and error.token.type == "$END"


def _syntax_diagnostic(path: str, error: UnexpectedInput, masked: str) -> Diagnostic:
    if isinstance(error, UnexpectedCharacters):
        char = masked[error.pos_in_stream]
        hint = "strings are written in double quotes" if char == "'" else None
        if char == "&" or char == "|" and masked[error.pos_in_stream:error.pos_in_stream + 2] == "||":
            hint = "write 'and' / 'or'"
        return Diagnostic(path, A.Span(error.line, error.column, error.line, error.column + 1),
                          f"unexpected character {char!r}", hint)
    if _at_end_of_file(error):
        code = masked.rstrip(BLANK)
        last_line = code.count("\n") + 1
        last_col = len(code) - code.rfind("\n")
        return Diagnostic(path, A.Span(last_line, last_col, last_line, last_col + 1),
                          f"unexpected end of file; expected {_describe_expected(error.expected)}",
                          "is a closing '}' missing?" if "RBRACE" in error.expected else None)
    token = error.token
    expected = set(error.expected)
    hint = None
    if token.type == "NAME" and {t.lower() for t in expected} & set(CLAUSE_KEYWORDS):
        hint = did_you_mean(str(token), CLAUSE_KEYWORDS) or f"a clause starts with one of: {', '.join(CLAUSE_KEYWORDS)}"
    elif token.value == "=":
        hint = "use '==' to compare"
    return Diagnostic(path, _span_of_token(token),
                      f"unexpected {token.value!r}; expected {_describe_expected(expected)}", hint)


def _blank(text: str, start: int, end: int) -> str:
    """`text` with [start, end) replaced by spaces, newlines kept, so positions do not move."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for match in re.finditer("\n", text):
        offsets.append(match.end())
    return offsets


def _clause_to_blank(masked: str, error_line: int, error_column: int) -> tuple[int, int] | None:
    """The character range of the clause a syntax error belongs to, or None if it is in no clause."""
    lines = masked.split("\n")
    offsets = _line_offsets(masked)
    starts = [i + 1 for i, line in enumerate(lines) if _CLAUSE_START.match(line)]
    before = [s for s in starts if s <= error_line]
    if not before:
        return None
    start_line = before[-1]
    first_col = len(lines[error_line - 1]) - len(lines[error_line - 1].lstrip(BLANK)) + 1
    if start_line == error_line and error_column == first_col and len(before) > 1:
        # The parser noticed at the next clause's keyword: the previous clause is the broken one.
        start_line = before[-2]
    after = [s for s in starts if s > start_line]
    end_line = after[0] if after else error_line + 1
    if end_line <= start_line:
        return None
    end = offsets[end_line - 1] if end_line - 1 < len(offsets) else len(masked)
    # Never blank a template's closing brace.
    segment = masked[offsets[start_line - 1]:end]
    brace = segment.rfind("}") if not after else -1
    if brace >= 0 and segment[brace:].strip(BLANK) == "}":
        end = offsets[start_line - 1] + brace
    return offsets[start_line - 1], end


def _template_chunks(text: str) -> list[tuple[int, int]]:
    starts = [m.start() for m in _TEMPLATE_START.finditer(text)]
    if not starts or _has_code(text[:starts[0]]):
        starts = [0, *starts]
    bounds = starts + [len(text)]
    return [(bounds[i], bounds[i + 1]) for i in range(len(starts))]


_CLOSERS = {"(": ")", "[": "]"}


def _unclosed_brackets(path: str, masked: str) -> tuple[str, list[Diagnostic]]:
    """Report each clause whose '(' or '[' is never closed, and blank it so the parse can go on.

    Without this pass the parser would notice the missing bracket only at the next clause, and blame it.
    """
    diagnostics = []
    lines = masked.split("\n")
    offsets = _line_offsets(masked)
    starts = [i for i, line in enumerate(lines) if _CLAUSE_START.match(line)] + [len(lines)]
    for first, stop in zip(starts, starts[1:]):
        stack: list[tuple[str, int, int]] = []
        for number in range(first, stop):
            code = re.sub(r'"([^"\\\n]|\\.)*"', lambda m: " " * len(m.group(0)), lines[number]).split("#")[0]
            for column, char in enumerate(code, start=1):
                if char in _CLOSERS:
                    stack.append((char, number + 1, column))
                elif char in ")]" and stack and _CLOSERS[stack[-1][0]] == char:
                    stack.pop()
        if stack:
            char, line, column = stack[-1]
            diagnostics.append(Diagnostic(path, A.Span(line, column, line, column + 1),
                                          f"'{char}' is never closed", f"add '{_CLOSERS[char]}'"))
            end = offsets[stop] if stop < len(offsets) else len(masked)
            segment = masked[offsets[first]:end]
            brace = segment.rfind("}")
            if brace >= 0 and not segment[brace + 1:].strip(BLANK):
                end = offsets[first] + brace
            masked = _blank(masked, offsets[first], end)
    return masked, diagnostics


def _has_code(text: str) -> bool:
    return any(line.strip(BLANK) and not line.strip(BLANK).startswith("#") for line in text.split("\n"))


def parse_source(path: str, text: str) -> tuple[list[A.Template], list[Diagnostic]]:
    """Every template in `text` that parses, and a diagnostic for every syntax error."""
    templates: list[A.Template] = []
    diagnostics: list[Diagnostic] = []
    lines_before, counted_to = 0, 0
    for start, end in _template_chunks(text):
        lines_before += text.count("\n", counted_to, start)
        counted_to = start
        chunk = text[start:end]  # starts a line: its columns are the file's, its lines lines_before fewer
        masked, chunk_errors = _unclosed_brackets(path, chunk)
        tree = None
        for _ in range(_MAX_RECOVERIES):
            try:
                tree = _parser().parse(masked)
                break
            except UnexpectedInput as error:
                diagnostic = _syntax_diagnostic(path, error, masked)
                chunk_errors.append(diagnostic)
                if _at_end_of_file(error):
                    break
                region = _clause_to_blank(masked, diagnostic.span.line, diagnostic.span.column)
                if region is None:
                    break
                masked = _blank(masked, *region)
        diagnostics += [replace(d, span=_moved(d.span, lines_before)) for d in chunk_errors]
        # A template with syntax errors is not checked further: its clauses are partial.
        if tree is not None and not chunk_errors:
            _move_positions(tree, lines_before)
            to_ast = _ToAst(path, chunk, lines_before + 1)
            try:
                templates.extend(to_ast.transform(tree))
            except VisitError as error:  # a bug in this module, not in the template: let it surface
                raise error.orig_exc from error
            diagnostics += to_ast.diagnostics
    return templates, diagnostics


def _moved(span: A.Span, lines: int) -> A.Span:
    return A.Span(span.line + lines, span.column, span.end_line + lines, span.end_column)


def _move_positions(tree: Tree, lines: int) -> None:
    """Move the positions of a chunk's parse tree `lines` down, to their lines in the file."""
    for subtree in tree.iter_subtrees():
        if not subtree.meta.empty:
            subtree.meta.line += lines
            subtree.meta.end_line += lines
        for child in subtree.children:
            if isinstance(child, Token):
                child.line += lines
                child.end_line += lines
