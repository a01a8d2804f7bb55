"""Per-question scores: the benchmark's rules (shared design scoring.md) with a typed scorer per answer type.

Both sides are normalized first (`normalize`). A reference of `not answerable` is matched only by a
prediction that says so in one of `NOT_ANSWERABLE_FORMS`; a prediction that says so never scores on an
answerable question. Otherwise the question's answer type picks the scorer; every scorer but the
string one is all or nothing. A question with several accepted answers scores its best match.
docs/evaluation.md lists every rule with examples.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Callable

from qtc.dsl.conventions import command
from qtc.runtime.qa.questions import Question
from qtc.runtime.qa.format import NOT_ANSWERABLE

from .registry import EVALUATE_ENVIRONMENTS

# After normalization, with trailing full stops and exclamation marks dropped.
NOT_ANSWERABLE_FORMS = frozenset({
    NOT_ANSWERABLE, "unanswerable", "cannot be answered", "can not be answered", "can't be answered",
    "cannot answer", "can't answer", "not possible to answer", "impossible to answer"})
ANLS_THRESHOLD = 0.5
FLOAT_TOLERANCE = 0.01  # relative
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
EMPTY_LIST_FORMS = frozenset({"", "nothing", "none", "no items", "empty", "nothing at all"})
NO_MOVEMENT_FORMS = frozenset({"no movement", "no displacement", "none", "0", "did not move", "stayed in place"})
ARTICLES = ("the ", "a ", "an ")

_PARENTHESIZED = re.compile(r"\([^()]*\)")
_QUOTE_PAIRS = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019"}


def normalize(text: str) -> str:
    """Lowercase, parenthesized spans dropped, whitespace trimmed and collapsed, surrounding quotes
    stripped (repeatedly).

    >>> normalize('  "The  Lamp (brass)" '), normalize("'`wood`'")
    ('the lamp', 'wood')
    """
    text = text.lower()
    while _PARENTHESIZED.search(text):
        text = _PARENTHESIZED.sub(" ", text)
    return _unquote(" ".join(text.split()))


def _unquote(text: str) -> str:
    while len(text) >= 2 and _QUOTE_PAIRS.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def _bare(text: str) -> str:
    """Normalized, without trailing sentence punctuation."""
    return normalize(text).rstrip(".!").strip()


def says_not_answerable(text: str) -> bool:
    return _bare(text).replace("\u2019", "'") in NOT_ANSWERABLE_FORMS


# --- strings ------------------------------------------------------------------------------------------

# References that look like identifiers need an exact match (after normalization).
_IDENTIFIERS = [re.compile(p) for p in (
    r"(https?://|www\.)\S+",  # URL
    r"[\w.+-]+@[\w-]+(\.[\w-]+)+",  # e-mail
    r"[\w-]+(\.[\w-]+)*\.[a-z][a-z0-9]{0,4}",  # file name
    r"\d{4}-\d{2}(-\d{2})?",  # date
    r"\d{1,2}(:\d{2})?\s*[ap]\.?\s?m\.?",  # time with a.m./p.m.
    r"\+?\d[\d\s./-]{5,}\d",  # phone number
    r"(p|pp|page)\.?\s*\d+(-\d+)?|[a-z]+[-_/]?\d+([-_/]\w+)*",  # page-like id: p. 12, ab-1234
)]


def anls(reference: str, prediction: str) -> float:
    """1 - normalized edit distance (Levenshtein, rapidfuzz's C implementation), or 0 when that is not
    above the threshold.

    >>> round(anls("brass lantern", "brass lanterns"), 4), anls("lamp", "sword")
    (0.9286, 0.0)
    """
    from rapidfuzz.distance import Levenshtein

    longest = max(len(reference), len(prediction))
    if not longest:
        return 1.0
    similarity = 1 - Levenshtein.distance(reference, prediction) / longest
    return similarity if similarity > ANLS_THRESHOLD else 0.0


def score_string(reference: str, prediction: str, env: str) -> float:
    g, p = normalize(reference), normalize(prediction)
    if any(pattern.fullmatch(g) for pattern in _IDENTIFIERS):
        return float(g == p)
    return anls(g, p)


# --- numbers ------------------------------------------------------------------------------------------

def parse_number(text: str) -> float | None:
    """'1', '1.0', ' 1 ', '50%', '1,000', 'three' -> the number (a trailing % is dropped, not divided).

    >>> [parse_number(text) for text in ("1", " 1.0 ", "50%", "1,000", "three", "lamp")]
    [1.0, 1.0, 50.0, 1000.0, 3.0, None]
    """
    t = _bare(text).removesuffix("%").strip()
    if t in NUMBER_WORDS:
        return float(NUMBER_WORDS[t])
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", t):
        t = t.replace(",", "")
    try:
        value = float(t)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_integer(text: str) -> int | None:
    value = parse_number(text)
    return int(value) if value is not None and value == int(value) else None


def score_integer(reference: str, prediction: str, env: str) -> float:
    g = parse_integer(reference)
    if g is None:
        return score_string(reference, prediction, env)
    return float(parse_integer(prediction) == g)


def score_step(reference: str, prediction: str, env: str) -> float:
    """An integer, which may be written 'step 12'."""
    return score_integer(reference, re.sub(r"^\s*(at |after |before )?step\s*#?\s*", "", prediction,
                                           flags=re.IGNORECASE), env)


def _decimals(text: str) -> int:
    _, _, fraction = _bare(text).removesuffix("%").partition(".")
    return len(fraction.strip())


def score_float(reference: str, prediction: str, env: str) -> float:
    """Equal after rounding to the reference's precision (two decimals at least), or within 1%; the
    reference divided or multiplied by 100 counts too (a fraction given as a percentage, or back)."""
    g, p = parse_number(reference), parse_number(prediction)
    if g is None:
        return score_string(reference, prediction, env)
    if p is None:
        return 0.0
    places = max(2, _decimals(reference))
    for candidate in (g, g / 100, g * 100):
        if round(p, places) == round(candidate, places) or abs(p - candidate) <= FLOAT_TOLERANCE * abs(candidate):
            return 1.0
    return 0.0


# --- names --------------------------------------------------------------------------------------------

def term(text: str) -> str:
    """A game name as words: normalized, underscores and hyphens as spaces, no leading article.

    >>> term("The Brass_Lantern."), term("a wood-pickaxe")
    ('brass lantern', 'wood pickaxe')
    """
    t = " ".join(_bare(text).replace("_", " ").replace("-", " ").split())
    for article in ARTICLES:
        t = t.removeprefix(article)
    return t


def score_term(reference: str, prediction: str, env: str) -> float:
    return float(term(reference) == term(prediction))


# Crafter's directions are the screen's; compass words name the same ones (up is north).
CRAFTER_DIRECTIONS = {"west": "left", "east": "right", "north": "up", "south": "down"}


def jericho_command(text: str) -> str:
    """A predicted or reference command, normalized (`_bare`), as the game's parser reads it: the one rule
    of dsl/conventions.py that the trace store's `command` column also follows.

    >>> jericho_command("x the lamp."), jericho_command("'Go n'")
    ('examine lamp', 'north')
    """
    return command(_bare(text))




def score_action(reference: str, prediction: str, env: str) -> float:
    if EVALUATE_ENVIRONMENTS[env].commands:  # read as the parser reads them (CONVENTIONS.md, Commands)
        return float(jericho_command(reference) == jericho_command(prediction))
    return score_term(reference, prediction, env)


def direction(text: str, env: str) -> str:
    t = term(text)
    if EVALUATE_ENVIRONMENTS[env].commands:
        return jericho_command(t)
    t = t.removeprefix("move ")
    return CRAFTER_DIRECTIONS.get(t, t)


def score_direction(reference: str, prediction: str, env: str) -> float:
    return float(direction(reference, env) == direction(prediction, env))


_ROOM_NUMBER = re.compile(r"\s*\((\d+)\)$")


def room(text: str) -> tuple[str, int | None]:
    """A room's name and the number that tells rooms of one name apart ('Forest (2)'), if it has one.
    The number is kept although normalization drops parenthesized spans: without it 'Forest (1)'
    would match 'Forest (2)'.

    >>> room("Forest (2)"), room("the West of House.")
    (('forest', 2), ('west of house', None))
    """
    t = _unquote(" ".join(text.split())).rstrip(".!").strip()
    match = _ROOM_NUMBER.search(t)
    return term(t[:match.start()] if match else t), int(match.group(1)) if match else None


def score_location(reference: str, prediction: str, env: str) -> float:
    (g, g_number), (p, p_number) = room(reference), room(prediction)
    return float(g == p and (g_number is None or g_number == p_number))


def yes_or_no(text: str) -> str | None:
    words = _bare(text).replace(",", " ").split()
    first = words[0] if words else ""
    return "yes" if first in ("yes", "y", "true") else "no" if first in ("no", "n", "false") else None


def score_yesno(reference: str, prediction: str, env: str) -> float:
    g = yes_or_no(reference)
    if g is None:
        return score_string(reference, prediction, env)
    return float(yes_or_no(prediction) == g)


# --- structures ---------------------------------------------------------------------------------------

_MOVE = re.compile(r"\b(\d+|" + "|".join(NUMBER_WORDS) + r")\s*(?:steps?|tiles?|cells?|squares?)?\s*"
                   r"(?:to the\s+)?(left|right|up|down|west|east|north|south)\b")
_OFFSETS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}


def displacement(text: str) -> tuple[int, int] | None:
    """(dx, dy) of a displacement in words, its parts in any order ('3 up, 2 left'); x grows to the
    right and y downwards, as in dsl/render.displacement_text.

    >>> displacement("3 up, 2 left"), displacement("two steps east and 1 north"), displacement("stayed in place")
    ((-2, -3), (2, -1), (0, 0))
    """
    t = _bare(text)
    if t in NO_MOVEMENT_FORMS:
        return 0, 0
    moves = _MOVE.findall(t)
    if not moves:
        return None
    dx = dy = 0
    for count, way in moves:
        n = int(count) if count.isdigit() else NUMBER_WORDS[count]
        ox, oy = _OFFSETS[CRAFTER_DIRECTIONS.get(way, way)]
        dx, dy = dx + n * ox, dy + n * oy
    return dx, dy


def score_displacement(reference: str, prediction: str, env: str) -> float:
    g = displacement(reference)
    if g is None:
        return score_string(reference, prediction, env)
    return float(displacement(prediction) == g)


def _list_element(text: str) -> str:
    return re.sub(r"^steps?\s+", "", term(text.strip(" -*\u2022")))


def _elements(text: str, split_and: bool) -> Counter:
    if _bare(text) in EMPTY_LIST_FORMS:
        return Counter()
    # A line break separates elements as a comma does: mark it so before normalizing collapses it.
    parts = re.split(r",| and " if split_and else ",", normalize(re.sub(r"[;\r\n]+", ",", text)))
    return Counter(e for e in map(_list_element, parts) if e)


def score_list(reference: str, prediction: str, env: str) -> float:
    """The same elements in any order (a multiset); 'a, b and c' is read both as three elements and,
    for names that hold an 'and', as two.

    >>> score_list("sapling, wood", "Wood and a sapling", "crafter"), score_list("wood", "wood, wood", "crafter")
    (1.0, 0.0)
    >>> score_list("sapling, wood", "- wood\\n- sapling", "crafter")
    1.0
    """
    g = _elements(reference, split_and=False)
    return float(any(_elements(prediction, split) == g for split in (False, True)))


def _sequence(text: str) -> list[str]:
    """The elements of a list answer in the order written."""
    parts = [] if _bare(text) in EMPTY_LIST_FORMS else re.split(r",", normalize(re.sub(r"[;\r\n]+", ",", text)))
    return [e for e in map(_list_element, parts) if e]


def score_sequence(reference: str, prediction: str, env: str) -> float:
    """The same elements in the same order (an ordered answer: CONVENTIONS.md, Sequences).

    >>> score_sequence("noop, do, do", "noop, do, do", "crafter"), score_sequence("noop, do", "do, noop", "crafter")
    (1.0, 0.0)
    """
    return float(_sequence(prediction) == _sequence(reference))


def order_credit(reference: str, prediction: str) -> float:
    """Partial credit for an ordered answer: the share of the reference's pairs of positions (i < j)
    whose elements the prediction also has, the one of i before the one of j (each reference element
    matched to its own occurrence in the prediction, in order); 1.0 for a reference of one element
    that the prediction holds. As MemGround's ordering metric.

    >>> order_credit("a, b, c", "a, c, b"), order_credit("a, b, c", "c, b, a"), order_credit("a, b", "a, b")
    (0.6666666666666666, 0.0, 1.0)
    """
    wanted, given = _sequence(reference), _sequence(prediction)
    positions, used = [], Counter()
    for element in wanted:  # the k-th occurrence of an element matches its k-th occurrence in the prediction
        found = [i for i, e in enumerate(given) if e == element]
        positions.append(found[used[element]] if used[element] < len(found) else None)
        used[element] += 1
    if len(wanted) == 1:
        return float(positions[0] is not None)
    pairs = [(a, b) for i, a in enumerate(positions) for b in positions[i + 1:]]
    return sum(a is not None and b is not None and a < b for a, b in pairs) / len(pairs) if pairs else 0.0


SCORERS: dict[str, Callable[[str, str, str], float]] = {
    "step": score_step, "integer": score_integer, "float": score_float, "string": score_string,
    "action": score_action, "location": score_location, "item": score_term, "terrain": score_term,
    "achievement": score_term, "direction": score_direction, "displacement": score_displacement,
    "yesno": score_yesno, "list": score_list, "steps": score_list, "sequence": score_sequence,
}


# A chosen option's letter: "B", "(B)", "B)", "B.", "B: wood", "Option B"; "A lamp" is text, not a letter.
_OPTION_LETTER = re.compile(r"\s*(?i:option\s+)?\(?([A-Z])(?:[).:,]|\s*$)")


def option_letter(index: int) -> str:
    return chr(ord("A") + index)


def chosen_option(options: list[str], prediction: str) -> str | None:
    """The option a prediction chooses: by its letter, else by its text (as term() reads names); None if
    it names no option.

    >>> chosen_option(["wood", "stone"], "(B)"), chosen_option(["wood", "stone"], "Wood."), chosen_option(["wood"], "C")
    ('stone', 'wood', None)
    """
    letter = _OPTION_LETTER.match(prediction)
    if letter:
        index = ord(letter.group(1)) - ord("A")
        return options[index] if index < len(options) else None
    named = [option for option in options if term(option) == term(prediction)]
    return named[0] if named else None


def score_answer(question: Question, prediction: str) -> float:
    """The question's score for `prediction`, in [0, 1]: the best over its accepted answers. A multiple-
    choice question scores 1 only if the prediction chooses the right option (by letter or text)."""
    refuses = says_not_answerable(prediction)
    if question.options and not question.adversarial:
        return float(not refuses and chosen_option(question.options, prediction) == question.answer)
    best = 0.0
    for reference in question.references:
        if reference == NOT_ANSWERABLE:
            best = max(best, float(refuses))
        elif not refuses:
            best = max(best, SCORERS[question.answer_type](reference, prediction, question.env))
    return best
