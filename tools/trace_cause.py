"""trace_cause: answer a why question with chains of recorded causes or effects."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memories.core import limits
from memories.core.inputs import InputModel
from memories.graph import causal
from tools.arguments import AsOf, MemoryName, Scope, ValidAsOf
from tools.contract import Tool, keywords
from tools.results import FactOut, Out, ReadResult


class TraceCauseArgs(InputModel):
    """Why something happened: chains of recorded causal links, nearest cause first."""

    scope: Scope
    subject: str = Field(min_length=1, max_length=limits.NAME_CHARS,
                         description="The thing to trace from (an entity name).")
    direction: Literal["upstream", "downstream", "both"] = Field(
        default="both", description="upstream: its causes; downstream: its effects.")
    max_hops: int = Field(default=3, ge=1, le=6, description="Longest chain, 1 to 6.")
    as_of: AsOf
    valid_as_of: ValidAsOf
    memory: MemoryName


class ChainLink(FactOut):
    cause: str = Field(description="The entity on the cause side of this link.")
    effect: str = Field(description="The entity on the effect side of this link.")


class Anchor(Out):
    id: str
    name: str
    type: str
    matched: str


class TraceCauseResult(ReadResult):
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


run = keywords(causal.trace_cause)


TOOL = Tool(
    name="trace_cause", title="Explain why",
    description=(
        "Answer a why question with chains of recorded causes (upstream) or effects "
        "(downstream) of a subject, nearest first. Use it instead of query_memory when the "
        "user asks why something happened or what it led to. It follows only facts written "
        "with a causal_hint, so an empty answer means nobody recorded a cause (empty_reason "
        "says whether the subject was not found or had no causal links), not that none "
        "exists. valid_as_of and as_of set the clock as in query_memory. Costs one unit "
        "per fact returned."),
    args=TraceCauseArgs, output=TraceCauseResult, run=run,
    read_only=True, idempotent=True,
    meters="fact returned",
)
