"""Text PostgreSQL cannot store: NUL characters and lone UTF-16 surrogates.

JSON can carry both (`\\u0000`, `\\ud800`); a `text` column refuses the first and UTF-8
cannot encode the second. Every edge refuses them by name instead of letting the
database fail on them.
"""

from __future__ import annotations

import re

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> str | None:
    """Why `text` cannot be stored (a phrase naming the character), or None if it can."""
    match = _UNSTORABLE.search(text)
    if match is None:
        return None
    char = match.group()
    if char == "\x00":
        return "contains a NUL character (\\u0000), which text cannot hold; remove it"
    return (f"contains a lone surrogate (\\u{ord(char):04x}), which is not valid Unicode; "
            "send the text as valid UTF-8")
