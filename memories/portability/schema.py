"""docs/export-format.schema.json, generated from the line models (lines.py):
`python -m memories.portability.schema > docs/export-format.schema.json`."""

from __future__ import annotations

import json
from typing import Annotated, Union

from pydantic import Field, TypeAdapter

from memories.portability.lines import ALL_LINES, FORMAT, VERSION

SCHEMA_ID = "urn:echo-memory:export-format:1"


def json_schema() -> dict:
    """One schema for every line of a version-1 file (draft 2020-12): a line is one of the
    kinds, told apart by `kind`."""
    any_line = Annotated[Union[ALL_LINES], Field(discriminator="kind")]  # noqa: UP007
    schema = TypeAdapter(any_line).json_schema(ref_template="#/$defs/{model}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
        "title": f"{FORMAT} version {VERSION}: one line",
        "description": "Each line of an Echo Memory export file (JSON Lines): a header, "
                       "records (episode, entity, fact, note, recall_save, in that order), "
                       "then a trailer. See docs/export-format.md.",
        **schema,
    }


def rendered() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(rendered(), end="")
