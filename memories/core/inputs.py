"""The base of every validated input the engine accepts, and its one time type.

Tool arguments (tools/) and the engine's own input shapes (memories/graph/inputs.py) build
on these, so what the database can hold is checked once, at the edge of the engine.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from echomem.text import unstorable


def utc_instant(value: datetime | None) -> datetime | None:
    """Event times without an offset are taken as UTC, so they compare with everything else.

    The instant must be readable back: Postgres stores years up to 294276, but Python
    (and so psycopg) reads only years 1 to 9999 in UTC, and a row it cannot read makes
    every query that reaches it fail. `9999-12-31T23:59:59-14:00` is year 10000 in UTC.
    """
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        # In UTC from here on: Python takes offsets up to ±23:59, PostgreSQL only ±15:59.
        return value.astimezone(UTC)
    except OverflowError:
        raise PydanticCustomError(
            "date_out_of_range",
            "{value} falls outside years 1 to 9999 once converted to UTC, which this server "
            "cannot store and read back; send a time inside that range (or omit it)",
            {"value": value.isoformat()},
        ) from None


EventTime = Annotated[datetime | None, AfterValidator(utc_instant)]


def _storable(value: Any, where: str = "") -> None:
    """Refuse text the database cannot hold, in strings, list items and dict keys alike."""
    if isinstance(value, str):
        reason = unstorable(value)
        if reason:
            raise PydanticCustomError("unstorable_text", where + reason)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _storable(item, f"item {index} ")
    elif isinstance(value, dict):
        for key, item in value.items():
            _storable(key, f"key {key!r} ")
            _storable(item, f"[{key!r}] ")


class InputModel(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("*")
    @classmethod
    def _text_is_storable(cls, value: Any, info: ValidationInfo) -> Any:
        _storable(value)
        return value


def text_field(max_length: int, description: str, min_length: int = 1):
    return Field(min_length=min_length, max_length=max_length, description=description)
