"""What a note is found by: words from every field, meaning from its head.

Full text reads everything (details and file paths too: "where did we touch
checkout.py" should find the note). The embedding model reads only the first 256 or
so tokens, so it gets the head a person would skim: title, category, what, why,
impact and tags, without the long details that would push them out.
"""

from __future__ import annotations

from collections.abc import Iterable


def note_head(*, title: str, category: str, what: str, why: str, impact: str,
              tags: Iterable[str]) -> str:
    parts = [f"{title} ({category})", what, why, impact]
    tag_list = ", ".join(tags)
    if tag_list:
        parts.append(f"tags: {tag_list}")
    return "\n".join(part for part in parts if part)


def note_search_text(*, title: str, category: str, what: str, why: str, impact: str,
                     tags: Iterable[str], related_files: Iterable[str], details: str,
                     project: str) -> str:
    head = note_head(title=title, category=category, what=what, why=why, impact=impact,
                     tags=tags)
    tail = [details, " ".join(related_files), project]
    return "\n".join(part for part in [head, *tail] if part)
