"""How a note's text is written into an EchoVault Markdown file so that it reads back the
same, whatever it holds.

EchoVault's own layout holds one line per field (`**What:** text`), a title after `### `,
comma-separated lists and details between `<details>` tags. Text that fits that layout is
written as it is, so the file stays what EchoVault and a person expect. Text that does not
(several lines, spaces at either end, a line that would close the details, a leading quote,
a comma or a leading bracket in a tag) is written as a JSON string or array on its line,
which the reader recognises by its first character and decodes; plain text is never
written starting with that character, so the two cannot be confused.
"""

from __future__ import annotations

import json
import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u0085]")
DETAILS_TAGS = ("<details>", "</details>")
# Unicode's White_Space: what the server strips from the ends of strings. str.strip() also
# takes U+001C..U+001F, which the server keeps, so a project named "\x1f" is a name.
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
               + "\u2028\u2029\u202f\u205f\u3000")


def blank(text: str) -> bool:
    return not text.strip(WHITE_SPACE)


def _one_line_plain(text: str) -> bool:
    return (text == text.strip() and "\n" not in text and not _CONTROL.search(text)
            and not text.startswith('"'))


def write_value(text: str) -> str:
    """A title or a field value, for the rest of its line."""
    return text if text and _one_line_plain(text) else json.dumps(text, ensure_ascii=False)


def read_value(raw: str) -> str:
    """The value `write_value` wrote (or EchoVault's plain text, stripped)."""
    raw = raw.strip()
    if raw.startswith('"'):
        try:
            decoded = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(decoded, str):
            return decoded
    return raw


def write_list(items: list[str]) -> str:
    """Tags or files: `a, b` when that reads back as the same items, else a JSON array."""
    if all(item and _one_line_plain(item) and "," not in item and not item.startswith("[")
           for item in items):
        return ", ".join(items)
    return json.dumps(items, ensure_ascii=False)


def read_list(raw: str) -> list[Any] | None:
    """The items of a JSON array `write_list` wrote; None when `raw` is not one (then it is
    a comma-separated list)."""
    raw = raw.strip()
    if not raw.startswith("["):
        return None
    try:
        decoded = json.loads(raw)
    except ValueError:
        return None
    return decoded if isinstance(decoded, list) else None


def write_details(text: str) -> str:
    """What goes between the details tags: the text itself when it reads back unchanged."""
    lines = text.split("\n")
    plain = (text == text.strip() and not text.startswith('"') and not _CONTROL.search(text)
             and not any(line.strip() in DETAILS_TAGS for line in lines))
    return text if plain else json.dumps(text, ensure_ascii=False)


def read_details(lines: list[str]) -> str:
    text = "\n".join(lines).strip()
    if text.startswith('"') and "\n" not in text:
        return read_value(text)
    return text
