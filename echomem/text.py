"""Text PostgreSQL cannot store: NUL characters and lone UTF-16 surrogates; and the check of
a name people give a thing (an account, a passkey).

JSON can carry both (`\\u0000`, `\\ud800`); a `text` column refuses the first and UTF-8
cannot encode the second. Every edge refuses them by name instead of letting the
database fail on them.
"""

from __future__ import annotations

import re
import unicodedata

from echomem.errors import ValidationFailed

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


def checked_display_name(name: str, *, field: str, missing: str, example: str,
                         most: int) -> str:
    """A name people give a thing (an account, a passkey) as it will be stored: surrounding
    spaces dropped, not empty, at most `most` characters, no control characters; else a
    ValidationFailed naming `field` and what to type instead."""
    name = name.strip()
    if not name:
        raise ValidationFailed(missing, field=field, fix=f"type {example}")
    if len(name) > most:
        raise ValidationFailed(f"the name is {len(name)} characters long", field=field,
                               fix=f"use at most {most} characters")
    if any(unicodedata.category(char) in ("Cc", "Cs") for char in name):
        raise ValidationFailed("the name contains control characters", field=field,
                               fix="use letters, digits, spaces and punctuation only")
    return name
