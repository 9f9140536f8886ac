"""get_episode: where facts came from (the episode that wrote them)."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import Field

from memories.core.inputs import InputModel
from memories.graph import episodes
from tools.arguments import MemoryName, Scope
from tools.contract import Tool, keywords
from tools.results import FactOut, Out, ReadResult, Writer
from tools.write_episode import MAX_FACTS_PER_EPISODE


class GetEpisodeArgs(InputModel):
    """Where facts came from: one episode's session, time, writer, entities and facts."""

    scope: Scope
    episode_id: uuid.UUID = Field(description="The episode_id of a fact (query_memory, "
                                              "trace_cause) or of a write_episode reply.")
    memory: MemoryName
    facts_after: int | None = Field(
        default=None, ge=0, le=MAX_FACTS_PER_EPISODE,
        description="facts_next of the previous reply, for the episode's next facts; omit "
                    "for the first ones.")
    limit: int = Field(default=100, ge=1, le=MAX_FACTS_PER_EPISODE,
                       description=f"Most facts, 1 to {MAX_FACTS_PER_EPISODE}.")


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


class CreatedEntity(Out):
    id: str
    name: str
    type: str


class GetEpisodeResult(ReadResult):
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


run = keywords(episodes.get_episode)


TOOL = Tool(
    name="get_episode", title="Trace a fact to its source",
    description=(
        "Where facts came from: the episode (one write_episode call) that wrote them, "
        "with its session_id, time, writer (tool, key holder, key) and project, the facts "
        "it wrote in order, the earlier versions they replaced and the entities it "
        "created. Pass the episode_id that every fact from query_memory or trace_cause "
        "carries. Use it when the user asks where something was learned, in which "
        "conversation, or by which agent. Page long episodes with facts_after. Costs one "
        "unit per fact returned."),
    args=GetEpisodeArgs, output=GetEpisodeResult, run=run,
    read_only=True, idempotent=True,
    meters="fact returned",
)
