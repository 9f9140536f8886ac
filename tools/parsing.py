"""Tool arguments validated against their model; a refusal names every field and its fix."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from echomem.errors import ValidationFailed
from echomem.text import unstorable


def parse(model: type[BaseModel], arguments: dict[str, Any] | None) -> Any:
    """Validate tool arguments; refuse with every problem, each naming its field."""
    bad_name = _unstorable_name(arguments or {})
    if bad_name:
        where, reason = bad_name
        raise ValidationFailed(f"invalid arguments: {where}: the name {reason}", field=where,
                               fix="spell every argument and key as plain, valid text")
    try:
        return model.model_validate(arguments or {})
    except ValidationError as exc:
        problems = [_describe(error) for error in exc.errors(include_url=False)]
        first = exc.errors(include_url=False)[0]
        field = _location(first["loc"]) or _custom_location(first)
        raise ValidationFailed(
            "invalid arguments: " + "; ".join(problems), field=field,
            fix="change the named fields as described and call again",
        ) from None


def _unstorable_name(value: Any, loc: tuple[Any, ...] = ()) -> tuple[str, str] | None:
    """The first member name (at any depth) that is not storable text, with why.

    pydantic refuses such a name without saying where (it fails to read the key), so it
    is found here first, and named like any other field.
    """
    if isinstance(value, dict):
        for key, item in value.items():
            reason = unstorable(key) if isinstance(key, str) else None
            if reason:
                return _location((*loc, key)), reason
            found = _unstorable_name(item, (*loc, key))
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _unstorable_name(item, (*loc, index))
            if found:
                return found
    return None


def _location(loc: tuple[Any, ...]) -> str:
    """`facts[0].valid_at`; a key that is not a plain name is bracketed: `['']`, `['a b']`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).isidentifier():
            out += f"[{str(part)!r}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _custom_location(error: dict[str, Any]) -> str:
    return (error.get("ctx") or {}).get("location", "")


def _describe(error: dict[str, Any]) -> str:
    if error["type"] == "echo":
        return error["msg"]
    where = _location(error["loc"]) or "arguments"
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{where}: unknown argument; remove it (check the spelling against the schema)"
    if kind == "missing":
        return f"{where}: required; add it"
    if kind == "string_unicode":  # pydantic's own refusal of a lone surrogate
        return f"{where}: {unstorable(error['input']) or 'is not valid Unicode'}"
    given = error.get("input")
    shown = ""
    if (isinstance(given, str) and len(given) <= 60) or isinstance(given, int | float | bool):
        shown = f" (got {given!r})"
    if kind.startswith("datetime"):
        return (f"{where}: {error['msg']}{shown}; send an ISO 8601 date and time such as "
                "2024-05-01T09:30:00Z (UTC when no offset is given)")
    return f"{where}: {error['msg']}{shown}"
