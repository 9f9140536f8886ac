"""memory_search: search notes by meaning and by words."""

from __future__ import annotations

from pydantic import Field

from memories.notes import selectors
from tools.arguments import NoteArgs
from tools.contract import Tool, keywords
from tools.results import NoteSummary, Ranked, ReadResult


class MemorySearchArgs(NoteArgs):
    """Search notes by meaning and by words, best first."""

    query: str = Field(min_length=1, max_length=2000, description="Search terms or a "
                                                                  "question.")
    limit: int = Field(default=5, ge=1, le=50, description="Most results, 1 to 50.")


class SearchedNote(NoteSummary, Ranked):
    pass


class MemorySearchResult(ReadResult):
    results: list[SearchedNote]
    count: int
    memory: str
    scope: str
    project: str | None


run = keywords(selectors.memory_search, leave_out=frozenset({"file_path"}))


TOOL = Tool(
    name="memory_search", title="Search notes",
    description=(
        "Search saved notes (decisions, bugs, patterns) by meaning and by words, best "
        "first. You MUST call this at session start before doing any work, and whenever "
        "the user's request touches a topic that may have prior context. Each result has "
        "rank, score (cosine similarity; null when only words matched) and has_details "
        "(memory_details returns them). project filters to one project. Costs one unit "
        "per note returned."),
    args=MemorySearchArgs, output=MemorySearchResult, run=run,
    read_only=True, idempotent=True, context_defaults=("project",), text_from="results",
    meters="note returned",
)
