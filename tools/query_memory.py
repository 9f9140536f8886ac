"""query_memory: recall facts by meaning and by words."""

from __future__ import annotations

from pydantic import Field, model_validator

from memories.core.inputs import InputModel
from memories.graph import selectors
from tools.arguments import AsOf, MemoryName, Scope, ValidAsOf, refusal
from tools.contract import Tool, keywords
from tools.results import FactOut, Ranked, ReadResult


class QueryMemoryArgs(InputModel):
    """Recall facts by meaning and by words, best first."""

    scope: Scope
    query: str = Field(default="", max_length=2000,
                       description="Natural language. May be omitted with digest: true.")
    top_k: int = Field(default=10, ge=1, le=100, description="How many facts, 1 to 100.")
    digest: bool = Field(default=False, description="Ignore query; return the most recent "
                                                    "active facts.")
    include_superseded: bool = Field(default=False,
                                     description="Also return facts that were replaced.")
    as_of: AsOf
    valid_as_of: ValidAsOf
    memory: MemoryName

    @model_validator(mode="after")
    def _query_or_digest(self) -> QueryMemoryArgs:
        if not self.digest and not self.query:
            raise refusal("query", "is empty; pass a question or phrase, or set digest: true "
                                  "for the most recent facts")
        return self


class RankedFact(FactOut, Ranked):
    pass


class QueryMemoryResult(ReadResult):
    facts: list[RankedFact]
    count: int
    memory: str
    scope: str
    facts_pending_vector: int = Field(
        description="Facts of this memory and scope still waiting for the model's vector: "
                    "found by words and by a quick first-pass vector, not yet by the model. "
                    "While it is above 0, recall by meaning is approximate; ask again "
                    "shortly for the settled answer.")


run = keywords(selectors.query_memory)


TOOL = Tool(
    name="query_memory", title="Recall facts",
    description=(
        "Recall stored facts by meaning and by words, best first. Call it before answering "
        "anything that earlier conversations may have settled (preferences, decisions, who "
        "or what something is), and before asking the user to repeat themselves. Each fact "
        "has rank, score (cosine similarity, comparable across queries: threshold on it; "
        "null when only the words matched) and matched. digest: true returns the most "
        "recent facts instead (omit query). valid_as_of asks what was true in the world at a "
        "time (from the facts' valid_at / invalid_at); as_of asks what the memory held at "
        "a time (what it knew then); both together: what it knew then about that time. "
        "facts_pending_vector counts facts not yet embedded by the model (just "
        "bulk-written): while it is above 0 they are found by words and a quick first-pass "
        "vector, so recall by meaning is approximate. "
        "Costs one unit per fact returned."),
    args=QueryMemoryArgs, output=QueryMemoryResult, run=run,
    read_only=True, idempotent=True,
    meters="fact returned",
)
