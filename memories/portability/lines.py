"""The export format's lines, declared once: the import validates each line with these
models, the export writes their shape, and docs/export-format.schema.json is generated from
them (`python -m memories.portability.schema`; a test keeps the file in step).

A file is JSON Lines: a header, one line per record, a trailer with the counts. Vectors,
when exported, travel inside their record (`vector`, `name_vector`): a record and its
vector are checked together and the import never holds vectors waiting for their rows.
"""

from __future__ import annotations

import math
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from echomem.text import unstorable
from memories.core import limits
from memories.core.inputs import utc_instant

FORMAT = "echo-memory-export"
VERSION = 1
DIMENSIONS = 384
KINDS = ("episode", "entity", "fact", "note", "recall_save")
TOOL_CHARS = 64  # the written_by / tool label columns
NOTE_FIELD_CHARS = 100_000  # a note's free-text fields; the tools' own limit is lower


# As the tools read times: no offset means UTC; the instant must be readable back.
Time = Annotated[datetime, AfterValidator(utc_instant)]
OptionalTime = Annotated[datetime | None, AfterValidator(utc_instant)]


def _text(most: int, least: int = 0, description: str = "") -> Any:
    return Field(min_length=least, max_length=most, description=description or None)


def _finite(values: list[float] | None) -> list[float] | None:
    if values is not None and not all(math.isfinite(v) for v in values):
        raise PydanticCustomError("vector_not_finite", "holds NaN or infinity; export again")
    return values


Vector = Annotated[list[float] | None, Field(min_length=DIMENSIONS, max_length=DIMENSIONS),
                   AfterValidator(_finite)]


class Line(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*")
    @classmethod
    def _storable(cls, value: Any, info: ValidationInfo) -> Any:
        # The reader says when the line cannot hold such a character (JSON spells NUL and
        # lone surrogates only as \u escapes), which spares this walk on nearly every line.
        if info.context is not None and not info.context.get("check_text", True):
            return value
        for text in value if isinstance(value, list) else [value]:
            reason = unstorable(text) if isinstance(text, str) else None
            if reason:
                raise PydanticCustomError("unstorable_text", reason)
        return value


class InPartition(Line):
    """Which partition a record is in: the shared one, or a solo one of the exporter's
    (named by its tool; on import it becomes the importer's solo partition of that tool)."""

    id: uuid.UUID = Field(description="The record's id on the source box.")
    scope: Literal["shared", "solo"]
    solo_tool: str | None = _text(TOOL_CHARS, 1, "The solo partition's tool (solo only).")

    @model_validator(mode="after")
    def _solo_names_its_tool(self) -> InPartition:
        if (self.scope == "solo") != (self.solo_tool is not None):
            raise PydanticCustomError(
                "solo_tool", "solo_tool is required with scope 'solo' and absent with "
                "'shared'; give both as the export wrote them")
        return self


class MemoryHeader(Line):
    name: str = _text(64, 1)
    description: str = _text(10_000)
    created_at: Time
    source_id: int


class Header(Line):
    kind: Literal["header"]
    format: Literal["echo-memory-export"]
    version: Literal[1]
    exported_at: Time
    source_box: uuid.UUID = Field(description="The stable id of the box that wrote the file.")
    memory: MemoryHeader
    embedding_model: str = _text(200, 1, description="The model (and settings) that made "
                                 "the vectors; vectors are used only when it matches.")
    vectors: bool = Field(description="Whether records carry their vectors.")
    scopes: str = _text(200, description="Which partitions the file holds (the exporter's "
                        "view: shared and their own solo partitions).")


class EpisodeLine(InPartition):
    kind: Literal["episode"]
    session_id: str = _text(limits.LABEL_CHARS)
    project: str = _text(limits.LABEL_CHARS)
    tool: str = _text(TOOL_CHARS)
    created_at: Time


class EntityLine(InPartition):
    kind: Literal["entity"]
    name: str = _text(limits.NAME_CHARS, 1)
    type: str = _text(limits.TYPE_CHARS, 1)
    episode: uuid.UUID | None = Field(description="The episode that created it (in the file).")
    created_at: Time
    name_vector: Vector = None


class FactLine(InPartition):
    kind: Literal["fact"]
    source: uuid.UUID = Field(description="An entity of the file.")
    target: uuid.UUID = Field(description="An entity of the file.")
    relation_type: str = _text(limits.RELATION_CHARS, 1)
    fact: str = _text(limits.FACT_CHARS, 1)
    confidence: Literal["extracted", "inferred", "ambiguous"]
    causal_hint: Literal["caused_by", "led_to", "enabled_by", "blocked_by",
                         "contradicts"] | None
    session_id: str = _text(limits.LABEL_CHARS)
    project: str = _text(limits.LABEL_CHARS)
    episode: uuid.UUID = Field(description="Provenance: the episode that wrote it (in the file).")
    position: int = Field(ge=0, le=2**31 - 1)
    written_by_tool: str = _text(TOOL_CHARS)
    created_at: Time = Field(description="Record time: when the memory learned it.")
    superseded_at: OptionalTime = Field(description="Record time it was replaced; null: live.")
    superseded_by: uuid.UUID | None = Field(description="The fact that replaced it.")
    valid_at: OptionalTime = Field(description="Event time: when it became true.")
    invalid_at: OptionalTime = Field(description="Event time: when it stopped being true.")
    vector: Vector = None

    @model_validator(mode="after")
    def _times_in_order(self) -> FactLine:
        if self.valid_at and self.invalid_at and self.invalid_at < self.valid_at:
            raise PydanticCustomError("invalid_before_valid",
                                      "invalid_at is before valid_at; swap them or drop one")
        if (self.superseded_by is not None) and self.superseded_at is None:
            raise PydanticCustomError("superseded_by_without_time",
                                      "superseded_by is set but superseded_at is null")
        return self


class NoteContent(Line):
    title: str = _text(limits.NOTE_TITLE_CHARS, 1)
    what: str = _text(NOTE_FIELD_CHARS, 1)
    why: str = _text(NOTE_FIELD_CHARS)
    impact: str = _text(NOTE_FIELD_CHARS)
    tags: list[Annotated[str, Field(max_length=200)]] = Field(max_length=100)
    category: Literal["decision", "bug", "pattern", "learning", "context"]
    related_files: list[Annotated[str, Field(max_length=1000)]] = Field(max_length=200)
    details: str = _text(NOTE_FIELD_CHARS)
    written_by_tool: str = _text(TOOL_CHARS)


class NoteVersionLine(NoteContent):
    version: int = Field(ge=1, le=2**31 - 1)
    saved_at: Time
    replaced_at: Time


class NoteLine(InPartition, NoteContent):
    kind: Literal["note"]
    project: str = _text(limits.LABEL_CHARS)
    version: int = Field(ge=1, le=2**31 - 1)
    created_at: Time
    updated_at: Time
    versions: list[NoteVersionLine] = Field(max_length=10_000,
                                            description="Earlier versions, oldest first.")


class RecallSaveLine(InPartition):
    kind: Literal["recall_save"]
    fact: uuid.UUID = Field(description="The recalled fact (in the file).")
    writer_tool: str = _text(TOOL_CHARS)
    reader_tool: str = _text(TOOL_CHARS)
    note: str = _text(NOTE_FIELD_CHARS)
    session_id: str = _text(limits.LABEL_CHARS)
    created_at: Time


class Trailer(Line):
    kind: Literal["trailer"]
    records: int = Field(ge=0, description="How many record lines lie between header and "
                                           "trailer (a cut file is detected).")
    counts: dict[Literal["episode", "entity", "fact", "note", "recall_save"], int]


RECORDS: dict[str, type[InPartition]] = {
    "episode": EpisodeLine, "entity": EntityLine, "fact": FactLine, "note": NoteLine,
    "recall_save": RecallSaveLine,
}
ALL_LINES: tuple[type[Line], ...] = (Header, *RECORDS.values(), Trailer)
