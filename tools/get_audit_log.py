"""get_audit_log: every recorded change in a scope, oldest first."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from memories.core.inputs import EventTime, InputModel
from memories.graph import selectors
from tools.arguments import VERBATIM, MemoryName, Scope
from tools.contract import Tool, keywords
from tools.results import Out, ReadResult


class GetAuditLogArgs(InputModel):
    """Every recorded change in this scope: what, when, which session, by whom."""

    scope: Scope
    since: EventTime = Field(default=None, description="Only changes at or after this time.")
    memory: MemoryName
    cursor: Annotated[str | None, VERBATIM] = Field(
        default=None, description="next_cursor of the previous page.")
    limit: int = Field(default=100, ge=1, le=500)


class Actor(Out):
    holder_id: int | None
    tool: str


class AuditEventOut(Out):
    seq: int
    at: datetime
    action: str
    object_id: str
    memory: str
    session_id: str
    actor: Actor
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    hash: str
    units: int = Field(default=0, description="What the write that recorded this change was "
                                              "charged for it: 1 for fact.created, "
                                              "note.created and note.updated, else 0.")


class GetAuditLogResult(ReadResult):
    events: list[AuditEventOut]
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null at "
                                                "the end.")
    memory: str
    scope: str


run = keywords(selectors.get_audit_log)


TOOL = Tool(
    name="get_audit_log", title="Read the audit log",
    description=(
        "List every recorded change in a scope, oldest first: what changed, when, in which "
        "session and by which tool. Use it when the user asks who wrote or changed "
        "something, or what happened since a time (since). Page with next_cursor. Costs "
        "one unit per fact or note snapshot returned (fact.created, fact.superseded, "
        "note.created and note.updated events), as they would cost through query_memory "
        "or memory_search; other events are free."),
    args=GetAuditLogArgs, output=GetAuditLogResult, run=run,
    read_only=True, idempotent=True,
    meters="fact or note snapshot returned",
)
