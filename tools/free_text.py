"""The one place a tool call's free text is redacted, before the tool sees it.

tools.calling.call_tool passes every call's validated arguments through `redacted`,
so whatever a tool stores, audits, embeds or exports is already clean, and a new tool or
field is covered without a line here. Free text is every string of the argument model
(nested models, list items, dict keys and values) except:
- Literal choices (`scope`, `category`): a fixed set, nothing to redact;
- identifiers, marked `Verbatim` in tools/arguments.py (a memory name, a cursor, a note
  id): they name something that exists, and a redacted one would name nothing.

Reads go through it too: a query or a subject is compared with text that was redacted
when it was stored, so it is redacted the same way.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from inspect import isclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import MaxLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from echomem.errors import ValidationFailed
from redaction.redactor import Redactor
from tools.arguments import Verbatim
from tools.parsing import parse

# One text through the redactor: (its value, the most characters its field holds).
_Clean = Callable[[str, int | None], str]


def redacted(redactor: Redactor, args: BaseModel) -> tuple[BaseModel, int]:
    """`args` with every free-text string redacted, and how many secrets were replaced.

    A text that appears in several places (an entity's name and the facts that name it)
    is counted once, and stays one text: if redaction makes it longer than the shortest
    field it stands in, it is cut to that length everywhere (the secret is gone either
    way). The arguments are then validated again, so names that redaction made equal are
    one entity, as if the agent had written them so.
    """
    limits: dict[str, int | None] = {}

    def note(text: str, most: int | None) -> str:
        known = limits.get(text)
        limits[text] = most if known is None else known if most is None else min(known, most)
        return text

    _walk(args, type(args), [], note)
    if redactor.leaves_alone(limits):
        return args, 0
    seen: dict[str, str] = {}
    total = 0

    def clean(text: str, most: int | None) -> str:
        nonlocal total
        if text not in seen:
            value, count = redactor.text(text)
            total += count
            shortest = limits[text]
            seen[text] = value if shortest is None else value[:shortest]
        return seen[text]

    data = _walk(args, type(args), [], clean)
    if not total:
        return args, 0
    try:
        return parse(type(args), data), total
    except ValidationFailed as refused:
        raise ValidationFailed(
            f"once {total} secret(s) were replaced by [REDACTED:<kind>]: {refused.message}",
            field=refused.field, fix="shorten the named text (a secret's placeholder may be "
                                     "longer than the secret), or leave the secret out",
        ) from None


def free_texts(args: BaseModel) -> list[str]:
    """Every free-text string of `args`, in order (a text may repeat)."""
    found: list[str] = []

    def keep(text: str, most: int | None) -> str:
        found.append(text)
        return text

    _walk(args, type(args), [], keep)
    return found


def _walk(value: Any, annotation: Any, metadata: list[Any], clean: _Clean) -> Any:
    """`value` (of type `annotation`) with `clean` applied to its free text; models come
    back as dicts, ready to be validated again."""
    if value is None:
        return None
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *extra = get_args(annotation)
        inner = list(metadata)
        for item in extra:
            inner.extend(item.metadata if isinstance(item, FieldInfo) else [item])
        return _walk(value, base, inner, clean)
    if any(isinstance(item, Verbatim) for item in metadata) or origin is Literal:
        return value
    if origin in (Union, types.UnionType):
        arm = next((a for a in get_args(annotation) if _fits(value, a)), None)
        return value if arm is None else _walk(value, arm, metadata, clean)
    if annotation is str:
        return clean(value, _max_length(metadata))
    if origin is list:
        (item_type,) = get_args(annotation)
        return [_walk(item, item_type, [], clean) for item in value]
    if origin is dict:
        key_type, item_type = get_args(annotation)
        return {_walk(key, key_type, [], clean): _walk(item, item_type, [], clean)
                for key, item in value.items()}
    if isclass(annotation) and issubclass(annotation, BaseModel):
        # Only the fields the call gave: validated again, the others take their defaults
        # as before, and a tool that tells "left out" from "given" (memory_save's merge)
        # still can.
        return {name: _walk(getattr(value, name), field.annotation, field.metadata, clean)
                for name, field in type(value).model_fields.items()
                if name in value.model_fields_set}
    return value  # numbers, booleans, datetimes, UUIDs: no free text


def _fits(value: Any, annotation: Any) -> bool:
    """Whether `value` is of this arm of a union."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _fits(value, get_args(annotation)[0])
    if origin is Literal:
        return value in get_args(annotation)
    if origin in (list, dict):
        return isinstance(value, origin)
    return isclass(annotation) and isinstance(value, annotation)


def _max_length(metadata: list[Any]) -> int | None:
    return next((item.max_length for item in metadata if isinstance(item, MaxLen)), None)
