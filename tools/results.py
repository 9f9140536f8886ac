"""The reply shapes several tools share (a fact, a ranked result, a read's cost, a note's
summary); each tool's module declares its own result on these.

Together they are the MCP outputSchema and the REST response schema; the tests validate
real replies against them, so a field the engine adds or renames fails there first.
Extra fields are allowed: a client written against these keeps working when a reply
gains a field.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class Writer(Out):
    tool: str


class FactOut(Out):
    fact_id: str
    fact: str
    source: str
    target: str
    relation_type: str
    confidence: str
    causal_hint: str | None
    session_id: str
    project: str | None
    written_by: Writer
    created_at: datetime
    valid_at: datetime | None
    invalid_at: datetime | None
    superseded_at: datetime | None = Field(description="Set when a newer fact replaced it.")
    superseded_by: str | None
    episode_id: str = Field(description="The write_episode call that wrote it; get_episode "
                                        "returns that episode's session, writer and facts.")


class Ranked(Out):
    rank: int = Field(description="1 is the best match.")
    score: float | None = Field(description="Cosine similarity to the query, comparable across "
                                            "queries; null when only full text matched.")
    matched: list[str] = Field(description="Which retrievers found it: vector, text (digest "
                                           "for query_memory's digest).")


class ReadResult(Out):
    units: int = Field(description="Units this call cost: one per fact returned.")
    cut_by_allowance: bool = Field(
        default=False, description="True when the month's unit allowance ran out: fewer "
                                   "were returned than found, and message says so.")
    message: str | None = None


class NoteSummary(Out):
    id: str
    title: str
    what: str
    why: str | None
    impact: str | None
    category: str
    tags: list[str]
    project: str | None
    created_at: datetime
    updated_at: datetime
    has_details: bool = Field(description="memory_details returns the full details.")
