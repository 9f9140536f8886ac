"""What each tool returns, as models: the MCP outputSchema and the REST response schema.

They describe the engine's replies (memories/graph/services.py, selectors.py, causal.py);
tests/mcp/test_tool_registry.py validates real replies against them, so a field
the engine adds or renames fails there first. Extra fields are allowed: a client
written against these keeps working when a reply gains a field.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class Writer(_Out):
    tool: str


class FactOut(_Out):
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


class _Ranked(_Out):
    rank: int = Field(description="1 is the best match.")
    score: float | None = Field(description="Cosine similarity to the query, comparable across "
                                            "queries; null when only full text matched.")
    matched: list[str] = Field(description="Which retrievers found it: vector, text (digest "
                                           "for query_memory's digest).")


class RankedFact(FactOut, _Ranked):
    pass


class ChainLink(FactOut):
    cause: str = Field(description="The entity on the cause side of this link.")
    effect: str = Field(description="The entity on the effect side of this link.")


class Edge(_Out):
    fact_id: str
    source: str
    target: str
    relation_type: str


class SupersededEdge(Edge):
    superseded_by: str


class Candidate(_Out):
    id: str
    name: str
    type: str
    why: str


class AmbiguousEntity(_Out):
    name: str
    type: str
    candidates: list[Candidate]


class EntityOut(_Out):
    name: str
    id: str
    type: str
    created: bool


class WriteEpisodeResult(_Out):
    stored: bool = Field(description="False when nothing was written: see ambiguous_entities.")
    edges_created: list[Edge]
    superseded: list[SupersededEdge]
    unchanged: list[Edge] = Field(default_factory=list)
    ambiguous_entities: list[AmbiguousEntity]
    entities: list[EntityOut] = Field(default_factory=list)
    episode_id: str | None = None
    memory: str
    scope: str
    units: int
    message: str
    redacted: int = Field(default=0, description="Secrets replaced by [REDACTED:<kind>] in "
                                                 "the episode's text (facts, names, "
                                                 "session_id, project) before storing.")


class _Read(_Out):
    units: int = Field(description="Units this call cost: one per fact returned.")
    cut_by_allowance: bool = Field(
        default=False, description="True when the month's unit allowance ran out: fewer "
                                   "were returned than found, and message says so.")
    message: str | None = None


class QueryMemoryResult(_Read):
    facts: list[RankedFact]
    count: int
    memory: str
    scope: str
    facts_pending_vector: int = Field(
        description="Facts of this memory and scope still waiting for the model's vector: "
                    "found by words and by a quick first-pass vector, not yet by the model. "
                    "While it is above 0, recall by meaning is approximate; ask again "
                    "shortly for the settled answer.")


class Anchor(_Out):
    id: str
    name: str
    type: str
    matched: str


class TraceCauseResult(_Read):
    subject: str
    anchors: list[Anchor]
    causes: list[list[ChainLink]] = Field(description="Chains, nearest cause first.")
    effects: list[list[ChainLink]] = Field(description="Chains, nearest effect first.")
    contradictions: list[FactOut]
    truncated: bool
    empty_reason: str | None = Field(description="no_anchor or no_causal_links when empty.")
    empty_sides: list[Literal["causes", "effects"]] = Field(
        description="Which of the lists the direction asked for (causes, effects) nobody "
                    "recorded anything on; message says so too. With direction both, "
                    "[\"effects\"] means causes were found and no effect was recorded.")
    memory: str
    scope: str


class EpisodeWriter(Writer):
    holder: str | None = Field(description="The key holder's email (or user name); null when "
                                           "that user was removed.")
    key: str | None = Field(description="The key's name and prefix, as `name (em_<prefix>_…)`; "
                                        "null for a self-hosted box's own agent or a deleted "
                                        "key.")


class _Linked(FactOut):
    source_id: str
    target_id: str


class EpisodeFact(_Linked):
    position: int = Field(description="Its place among the episode's facts, from 0; pass the "
                                      "last one as facts_after for the next facts.")
    live: bool = Field(description="False once a later fact replaced it.")


class CreatedEntity(_Out):
    id: str
    name: str
    type: str


class GetEpisodeResult(_Read):
    episode_id: str
    memory: str
    scope: str = Field(description="The partition the episode was written to.")
    session_id: str | None
    project: str | None
    created_at: datetime = Field(description="When write_episode stored it.")
    written_by: EpisodeWriter
    facts: list[EpisodeFact] = Field(description="The facts it wrote, in the order written.")
    facts_next: int | None = Field(description="Pass as facts_after for the next facts; null "
                                               "when these are the last.")
    replaced: list[_Linked] = Field(description="The earlier versions these facts superseded "
                                                "(written by other episodes).")
    entities_created: list[CreatedEntity] = Field(
        description="Entities this episode created; the others its facts name existed already.")


class Party(_Out):
    holder_id: int
    tool: str


class RecordRecallSaveResult(_Out):
    recorded: bool
    recall_save_id: str
    fact_id: str
    writer: Party
    reader: Party
    memory: str
    units: int
    redacted: int = Field(default=0, description="Secrets replaced by [REDACTED:<kind>] in "
                                                 "note and session_id before storing.")


class Actor(_Out):
    holder_id: int | None
    tool: str


class AuditEventOut(_Out):
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


class GetAuditLogResult(_Read):
    events: list[AuditEventOut]
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null at "
                                                "the end.")
    memory: str
    scope: str


class GetUsageResult(_Out):
    metered: bool = Field(description="False on a self-hosted server: no allowance, no units.")
    plan: str | None
    month: str | None = Field(description="The calendar month (UTC) counted, as YYYY-MM.")
    used: int | None
    allowed: int | None
    remaining: int | None
    resets_at: str | None = Field(description="When the month's units reset (UTC).")
    requests_per_minute: int | None = Field(description="Each key's rate limit on this plan.")
    upgrade_url: str | None
    units: int
    message: str


class MemorySaveResult(_Out):
    id: str = Field(description="The note's id (the same one when a save updated it).")
    title: str
    project: str | None
    created: bool
    updated: bool = Field(description="True when a note with this title in this project "
                                      "existed and changed; its previous text is in history.")
    version: int
    changed: list[str] = Field(description="The fields this save changed (on a new note: "
                                           "those it filled).")
    kept: list[str] = Field(description="On an update, the fields the save left out, which "
                                        "kept their stored value.")
    warnings: list[str] = Field(description="What would make a decision or bug note useful "
                                            "later; the note is saved regardless.")
    redacted: int = Field(default=0, description="Secrets replaced by [REDACTED:<kind>] "
                                                 "before storing.")
    memory: str
    scope: str
    units: int
    message: str


class NoteSummary(_Out):
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


class SearchedNote(NoteSummary, _Ranked):
    pass


class MemorySearchResult(_Read):
    results: list[SearchedNote]
    count: int
    memory: str
    scope: str
    project: str | None


class ContextNote(_Out):
    id: str
    title: str
    category: str
    tags: list[str]
    project: str | None
    date: str = Field(description="Day of the last save (YYYY-MM-DD, UTC).")
    updated_at: datetime
    has_details: bool


class MemoryContextResult(_Read):
    total: int = Field(description="Notes in this scope (and project).")
    showing: int
    memories: list[ContextNote] = Field(description="Most recently saved first.")
    next_cursor: str | None = Field(
        description="Pass it as cursor for the notes after these; null when none are left.")
    memory: str
    scope: str
    project: str | None


class NoteVersionOut(_Out):
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


class MemoryDetailsResult(NoteSummary, _Read):
    details: str | None
    related_files: list[str]
    version: int
    written_by: Writer
    history: list[NoteVersionOut] = Field(description="Earlier versions, newest first.")
    memory: str
    scope: str


class ForgetResult(_Out):
    facts: int = Field(description="Facts deleted: those named, and those of the named "
                                   "entities and episodes.")
    entities: int
    episodes: int
    notes: int
    note_versions: int = Field(description="Earlier versions deleted with the notes.")
    recall_saves: int = Field(description="Recall saves of the forgotten facts, deleted.")
    audit_events_erased: int = Field(description="Audit events whose text was erased; one "
                                                 "memory.forgotten event lists them.")
    memory: str
    scope: str
    units: int = Field(description="Always 0: forgetting is free.")
    message: str
