"""memory_details: one note in full, with its earlier versions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from memories.notes import selectors
from tools.arguments import VERBATIM, NoteArgs
from tools.contract import Tool, keywords
from tools.results import NoteSummary, Out, ReadResult, Writer


class MemoryDetailsArgs(NoteArgs):
    """One note in full, with its earlier versions."""

    id: Annotated[str, VERBATIM] = Field(min_length=8, max_length=36,
                    description="A note id from memory_search or memory_context, or a unique "
                                "prefix of it (8 characters or more).")


class NoteVersionOut(Out):
    version: int
    title: str
    what: str
    why: str | None
    impact: str | None
    category: str
    tags: list[str]
    related_files: list[str]
    details: str | None
    written_by: Writer
    saved_at: datetime
    replaced_at: datetime


class MemoryDetailsResult(NoteSummary, ReadResult):
    details: str | None
    related_files: list[str]
    version: int
    written_by: Writer
    history: list[NoteVersionOut] = Field(description="Earlier versions, newest first.")
    memory: str
    scope: str


run = keywords(selectors.memory_details, leave_out=frozenset({"file_path", "project"}))


TOOL = Tool(
    name="memory_details", title="Read a note in full",
    description=(
        "One note in full: details, related files and its earlier versions. Pass the id "
        "from memory_search or memory_context, or a unique prefix of 8 or more "
        "characters of it. Use it when a result has has_details and the summary is not "
        "enough. Costs one unit."),
    args=MemoryDetailsArgs, output=MemoryDetailsResult,
    run=run, read_only=True, idempotent=True,
    meters="note returned",
)
