"""How entity names are compared: normalization and abbreviations."""

from __future__ import annotations

import re
import unicodedata

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
MINOR_WORDS = frozenset({"of", "the", "and", "for", "a", "an", "in", "on", "at", "to", "de"})
# The longest abbreviation compared (as_abbreviation): longer initials can never match one.
MAX_ABBREVIATION = 8


def normalize(name: str) -> str:
    """NFKC, casefold, whitespace folded: full-width, upper-case, double-spaced spellings meet."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", name).casefold()).strip()


def same_type(a: str, b: str) -> bool:
    return normalize(a) == normalize(b)


def initials(name: str) -> str:
    """'New York City' -> 'nyc'; single words have none (they may *be* an abbreviation),
    and neither do names of more words than an abbreviation has letters."""
    words = _WORD.findall(normalize(name))
    return "".join(word[0] for word in words) if 2 <= len(words) <= MAX_ABBREVIATION else ""


def as_abbreviation(name: str) -> str:
    """The form an abbreviation is compared in: 'N.Y.C.' -> 'nyc'; '' if it cannot be one."""
    folded = normalize(name).replace(".", "")
    return folded if 2 <= len(folded) <= MAX_ABBREVIATION and folded.isalnum() else ""
