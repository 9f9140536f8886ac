"""Whether a user's regular expression can make Python's backtracking matcher run for hours.

Redaction runs every account pattern over every field an agent writes (up to 20,000
characters each), and `re` has no time limit: `(a+)+b` on forty a's, or `a*a*b` on a few
thousand, holds a worker for minutes. So a pattern is read as the parser sees it and refused
when it has one of the shapes behind nearly all such blow-ups:

- a quantifier over something that is itself variable-length and quantified: `(a+)+`,
  `(\\w+\\s?)*`;
- a quantified alternation whose branches can begin with the same character, or that has
  an empty branch: `(a|aa)*`, which Python reads as `(a(|a))*`;
- two unbounded repeats in a row that can match the same characters, with nothing
  between them that tells them apart: `a*a*`, `\\d+\\w+`, `.*=.*`;
- an unbounded repeat at the very start (`\\w+@corp`, `.*secret`): quadratic rather
  than exponential, but seconds on one long field; `\\b\\w+@corp` is the fix.

Possessive quantifiers (`a++`) and atomic groups (`(?>...)`) never backtrack, so they are
the fix the refusal suggests. The check is conservative: a few harmless patterns (such as
`(ab+)+`) are refused too, and each refusal says how to write the pattern instead.
"""

from __future__ import annotations

import re
from functools import cache

try:  # the parser moved in Python 3.11; sre_parse remains as a deprecated alias
    from re import _constants as C
    from re import _parser as parser
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as parser  # type: ignore[no-redef]

REPEATS = {C.MAX_REPEAT, C.MIN_REPEAT}
SINGLE_CHAR = {C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN}
# The characters sets are compared on: ASCII and Latin-1, plus a few wider letters, digits
# and spaces, so that \w, \d, \s and ranges overlap where they really do.
ALPHABET = frozenset(map(chr, range(256))) | frozenset("ßЖж中٣\u2028\u3000")
CATEGORIES = {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D",
              C.CATEGORY_SPACE: r"\s", C.CATEGORY_NOT_SPACE: r"\S",
              C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W"}
FIX = ("use a possessive quantifier (a++ instead of a+, .*+ instead of .*) or an atomic "
       "group (?>...), or make the repeated parts unable to match the same text")


LEADING_FIX = r"start it with a literal or \b, e.g. \b\w+@corp rather than \w+@corp"


def backtracking_risk(pattern: str) -> tuple[str, str] | None:
    """(why `pattern` may backtrack catastrophically, how to write it instead), or None
    when it has none of the shapes. `pattern` must compile."""
    tree = parser.parse(pattern)
    reason = _sequence(list(tree), tree.state.flags)
    if reason:
        return reason, FIX
    leading = _leading(list(tree))
    return (leading, LEADING_FIX) if leading else None


def _leading(items: list) -> str | None:
    """A search tries every start position; a pattern that begins by repeating a character
    class re-scans the rest of a long run from each one (20,000 characters: seconds)."""
    while items and items[0][0] == C.SUBPATTERN:
        items = list(items[0][1][3])
    if (items and items[0][0] in REPEATS and items[0][1][1] == C.MAXREPEAT
            and _single(list(items[0][1][2]), 0) is not None):
        return ("it begins with an unbounded repeat, so a long run of such characters is "
                "scanned again from every position")
    return None


def _sequence(items: list, flags: int) -> str | None:
    # The characters of the unbounded one-character repeats that can still meet the next
    # one: nothing that only they could match has come between.
    reach: frozenset[str] = frozenset()
    for op, av in items:
        if op in REPEATS:
            low, high, body = av
            if (high > 1 and high != low) or high == low > 1:
                reason = _repeated_body(list(body), flags, unbounded=high == C.MAXREPEAT)
                if reason:
                    return reason
            chars = _single(list(body), flags)
            if chars is None:
                reach = frozenset()
            elif high == C.MAXREPEAT:
                if reach & chars:
                    return ("two unbounded repeats in a row can match the same characters, "
                            "so a failed match tries every way of splitting the text "
                            "between them")
                reach = chars | (reach if low == 0 else frozenset())
            elif low > 0 and not reach & chars:
                reach = frozenset()  # a required character the repeats cannot take
        elif op in SINGLE_CHAR:
            if not reach & _charset(op, av, flags):
                reach = frozenset()
        elif op != C.AT:
            reach = frozenset()
        reason = _inside(op, av, flags)
        if reason:
            return reason
    return None


def _inside(op, av, flags: int) -> str | None:
    """Check the sub-patterns of a group, alternation, lookaround or repeat."""
    if op == C.SUBPATTERN:
        return _sequence(list(av[3]), (flags | av[1]) & ~av[2])
    if op == C.BRANCH:
        return next(filter(None, (_sequence(list(b), flags) for b in av[1])), None)
    if op in REPEATS:
        return _sequence(list(av[2]), flags)
    if op in (C.ASSERT, C.ASSERT_NOT):
        return _sequence(list(av[1]), flags)
    if op == C.GROUPREF_EXISTS:
        return next(filter(None, (_sequence(list(b), flags) for b in av[1:] if b)), None)
    return None  # possessive repeats and atomic groups never backtrack into themselves


def _repeated_body(body: list, flags: int, *, unbounded: bool) -> str | None:
    r"""What a repeated `body` must not contain: under an unbounded repeat, any repeat of
    variable length; under a counted one ({3}, {2,5}), an unbounded repeat (`(.*a){12}`
    tries n^12 splits); the counted ones stay, so `(\d{1,3}\.){3}` passes."""
    if _has(body, lambda op, av: op in REPEATS and av[0] != av[1]
            and (unbounded or av[1] == C.MAXREPEAT)):
        low, high = _width(body)
        if low != high:
            return ("a repeat inside a repeat (like (a+)+) can split the same text in "
                    "exponentially many ways")
    if not unbounded:
        return None
    for op, av in _walk(body):
        if op == C.BRANCH:
            if any(_width(list(branch))[0] == 0 for branch in av[1]):
                return ("a repeated alternation with an empty branch (like (a|aa)*, which "
                        "Python reads as (a(|a))*) can match the same text in many ways")
            starts = [_first(list(branch), flags) for branch in av[1]]
            for i, one in enumerate(starts):
                if any(one & other for other in starts[i + 1:]):
                    return ("a repeated alternation (like (a|ab)*) has branches that can "
                            "begin with the same character")
    return None


def _width(items: list) -> tuple[int, int]:
    return parser.SubPattern(parser.State(), items).getwidth()


def _walk(items: list):
    for op, av in items:
        yield op, av
        if op == C.SUBPATTERN:
            yield from _walk(list(av[3]))
        elif op == C.BRANCH:
            for branch in av[1]:
                yield from _walk(list(branch))
        elif op in REPEATS:
            yield from _walk(list(av[2]))


def _has(items: list, test) -> bool:
    return any(test(op, av) for op, av in _walk(items))


def _first(items: list, flags: int) -> frozenset[str]:
    """The characters a match of `items` can begin with (all of them when unsure)."""
    found: frozenset[str] = frozenset()
    for op, av in items:
        if op in SINGLE_CHAR:
            return found | _charset(op, av, flags)
        if op == C.AT:
            continue
        if op in REPEATS and av[0] == 0:
            found |= _first(list(av[2]), flags)
            continue
        if op in REPEATS:
            return found | _first(list(av[2]), flags)
        if op == C.SUBPATTERN:
            inner = list(av[3])
            found |= _first(inner, flags)
            if _width(inner)[0] > 0:
                return found
            continue
        return ALPHABET
    return found


def _single(body: list, flags: int) -> frozenset[str] | None:
    """The characters of a one-character body (`a`, `[a-z]`, `.`, `(\\d)`), else None."""
    while len(body) == 1 and body[0][0] == C.SUBPATTERN:
        body = list(body[0][1][3])
    if len(body) == 1 and body[0][0] in SINGLE_CHAR:
        return _charset(body[0][0], body[0][1], flags)
    return None


def _charset(op, av, flags: int) -> frozenset[str]:
    if op == C.LITERAL:
        chars = frozenset(chr(av))
    elif op == C.NOT_LITERAL:
        chars = ALPHABET - {chr(av)}
    elif op == C.ANY:
        chars = ALPHABET if flags & re.DOTALL else ALPHABET - {"\n"}
    else:
        chars, negate = frozenset(), False
        for kind, value in av:
            if kind == C.NEGATE:
                negate = True
            elif kind == C.LITERAL:
                chars |= {chr(value)}
            elif kind == C.RANGE:
                chars |= {c for c in ALPHABET if value[0] <= ord(c) <= value[1]}
            elif kind == C.CATEGORY:
                chars |= _category(value)
            else:  # anything unforeseen counts as every character: refuse rather than miss
                chars = ALPHABET
        chars = ALPHABET - chars if negate else chars
    if flags & re.IGNORECASE:
        chars |= {c.swapcase() for c in chars if len(c.swapcase()) == 1}
    return frozenset(chars)


@cache
def _category(category) -> frozenset[str]:
    test = re.compile(CATEGORIES.get(category, r"[\s\S]"))
    return frozenset(c for c in ALPHABET if test.fullmatch(c))
