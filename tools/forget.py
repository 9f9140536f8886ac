"""forget: erase facts, entities, episodes or notes for good."""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import Field, model_validator

from memories.core.inputs import InputModel
from memories.erasure import forget
from tools.arguments import VERBATIM, MemoryName, Scope, refusal
from tools.contract import Tool, keywords
from tools.results import Out

MAX_FORGET_IDS = 500
NoteIdOrPrefix = Annotated[str, Field(min_length=8, max_length=36), VERBATIM]


class ForgetArgs(InputModel):
    """Retract facts, entities (with their facts), whole episodes or notes, by id, for good."""

    scope: Scope
    memory: MemoryName
    facts: list[uuid.UUID] = Field(
        default_factory=list, max_length=MAX_FORGET_IDS,
        description="fact_id values from query_memory, trace_cause or write_episode.")
    entities: list[uuid.UUID] = Field(
        default_factory=list, max_length=MAX_FORGET_IDS,
        description="Entity ids (write_episode's entities[].id); every fact to or from each "
                    "goes with it, earlier versions included.")
    episodes: list[uuid.UUID] = Field(
        default_factory=list, max_length=MAX_FORGET_IDS,
        description="episode_id values from write_episode; every fact the episode wrote goes, "
                    "and the entities it created unless facts of other episodes use them.")
    notes: list[NoteIdOrPrefix] = Field(
        default_factory=list, max_length=MAX_FORGET_IDS,
        description="Note ids from memory_search or memory_context, or unique prefixes of 8 "
                    "or more characters; each note goes with its earlier versions.")

    @model_validator(mode="after")
    def _something(self) -> ForgetArgs:
        if not (self.facts or self.entities or self.episodes or self.notes):
            raise refusal("facts", "nothing to forget; pass at least one id in facts, entities, "
                                  "episodes or notes")
        return self


class ForgetResult(Out):
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


run = keywords(forget.forget)


TOOL = Tool(
    name="forget", title="Forget for good",
    description=(
        "Erase facts, entities or whole episodes (by the ids other tools returned) or notes "
        "(ids or 8+ character prefixes) from this memory for good: they are no longer "
        "recalled, traced or searched, and their text is erased from the audit trail too. "
        "Call it only when the user asks to forget or delete something, or to remove a "
        "secret or a mistake; to correct a fact, write it again instead (the old version "
        "stays as history). An entity goes with every fact to or from it; an episode with "
        "every fact it wrote. Any id not found in this scope refuses the whole call and "
        "nothing is forgotten. Free."),
    args=ForgetArgs, output=ForgetResult, run=run,
    read_only=False, idempotent=False, destructive=True,
    meters="", audits=frozenset({"memory.forgotten"}),
)
