"""memory_context: the project's most recent notes, to load at session start."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from memories.notes import selectors
from tools.arguments import VERBATIM, NoteArgs
from tools.contract import Tool, keywords
from tools.results import Out, ReadResult


class MemoryContextArgs(NoteArgs):
    """The project's most recent notes, to load at the start of a session."""

    limit: int = Field(default=10, ge=1, le=100, description="Most notes, 1 to 100.")
    cursor: Annotated[str | None, VERBATIM] = Field(
        default=None, max_length=200,
        description="Omit for the newest notes. To read further back, pass the next_cursor "
                    "of the previous reply (with the same project and scope) unchanged.")


class ContextNote(Out):
    id: str
    title: str
    category: str
    tags: list[str]
    project: str | None
    date: str = Field(description="Day of the last save (YYYY-MM-DD, UTC).")
    updated_at: datetime
    has_details: bool


class MemoryContextResult(ReadResult):
    total: int = Field(description="Notes in this scope (and project).")
    showing: int
    memories: list[ContextNote] = Field(description="Most recently saved first.")
    next_cursor: str | None = Field(
        description="Pass it as cursor for the notes after these; null when none are left.")
    memory: str
    scope: str
    project: str | None


run = keywords(selectors.memory_context, leave_out=frozenset({"file_path"}))


TOOL = Tool(
    name="memory_context", title="Load project context",
    description=(
        "The project's most recently saved notes (titles, categories, tags), newest "
        "first. You MUST call this at the start of every session to load prior decisions, "
        "bugs and context before working; then memory_search for specific topics and "
        "memory_save before the session ends. Costs one unit per note returned."),
    args=MemoryContextArgs, output=MemoryContextResult,
    run=run, read_only=True, idempotent=True,
    meters="note returned",
    context_defaults=("project",),
)
