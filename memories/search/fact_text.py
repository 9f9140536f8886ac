"""What a fact is found by: its sentence, plus endpoint names the sentence leaves out."""

from __future__ import annotations


def search_text_for(fact: str, source: str, target: str) -> str:
    """'prefers dark mode' written on (Alice -> UI) is found by 'Alice' too."""
    lowered = fact.casefold()
    missing = [name for name in dict.fromkeys((source, target)) if name.casefold() not in lowered]
    return f"{fact} ({', '.join(missing)})" if missing else fact
