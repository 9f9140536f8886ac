"""write_episode: store the entities and facts an agent extracted from one conversation."""

from __future__ import annotations

import uuid
from typing import Annotated

from pydantic import Field, model_validator

from memories.core import limits
from memories.core.inputs import InputModel
from memories.core.names import normalize, same_type
from memories.graph import services
from memories.graph.inputs import EntityIn, FactIn
from tools.arguments import VERBATIM, MemoryName, Scope, refusal
from tools.contract import Tool, keywords
from tools.results import Out

MAX_FACTS_PER_EPISODE = 500
MAX_ENTITIES_PER_EPISODE = 500


class WriteEpisodeArgs(InputModel):
    """Record what happened: the entities and facts you extracted from one conversation."""

    scope: Scope
    session_id: str = Field(default="", max_length=limits.LABEL_CHARS,
                            description="Your id for the conversation or run (audited).")
    entities: list[EntityIn] = Field(
        max_length=MAX_ENTITIES_PER_EPISODE,
        description="Every entity the facts mention. Listing one twice (the same name after "
                    "normalization, the same type) lists it once.")
    facts: list[FactIn] = Field(default_factory=list, max_length=MAX_FACTS_PER_EPISODE)
    entity_resolutions: dict[str, Annotated[str, VERBATIM]] = Field(
        default_factory=dict,
        description="For names the server reported as ambiguous: name -> an existing entity "
                    "id, or \"new\" for a new entity.")
    assume_new: bool = Field(
        default=False,
        description="Every entity here is new to the graph; skips the similar-name check. "
                    "An exact existing name still resolves to its node.")
    memory: MemoryName
    project: str = Field(default="", max_length=limits.LABEL_CHARS,
                         description="Optional label. Omit to use the X-Echo-Project header "
                                     "your setup sends.")

    @model_validator(mode="after")
    def _consistent(self) -> WriteEpisodeArgs:
        aliases = self._merge_repeated_entities()
        for index, fact in enumerate(self.facts):
            for end in ("source", "target"):
                name = getattr(fact, end)
                if name not in aliases:
                    raise refusal(f"facts[{index}].{end}",
                                 f"{name!r} is not among entities[].name; add "
                                 f"{{\"name\": {name!r}, \"type\": ...}} to entities or use "
                                 "the exact spelling listed there")
                setattr(fact, end, aliases[name])
        self._merge_resolutions(aliases)
        seen: dict[tuple[str, str, str], int] = {}
        for index, fact in enumerate(self.facts):
            key = (fact.source, fact.target, fact.relation_type)
            if key in seen:
                raise refusal(f"facts[{index}]",
                             f"facts[{seen[key]}] and facts[{index}] have the same key "
                             f"(source, target, relation_type) = {key}; one edge holds one "
                             "fact: merge them, or give one a distinguishing relation_type "
                             "or entity")
            seen[key] = index
        for name, choice in self.entity_resolutions.items():
            if name not in aliases:
                raise refusal(f"entity_resolutions[{name!r}]",
                             f"{name!r} is not among entities[].name; resolve only names "
                             "this episode lists")
            if choice != "new":
                try:
                    uuid.UUID(choice)
                except ValueError:
                    raise refusal(f"entity_resolutions[{name!r}]",
                                 f"{choice!r} is neither \"new\" nor an entity id; use an id "
                                 "from ambiguous_entities[].candidates or \"new\"") from None
        return self

    def _merge_repeated_entities(self) -> dict[str, str]:
        """Keep the first listing of each entity; map every listed spelling to it.

        Two listings that normalize to one name are one entity when their types agree
        (a model repeating itself); with different types they cannot both be stored
        under one name, so the call is refused with both positions.
        """
        first: dict[str, int] = {}
        aliases: dict[str, str] = {}
        kept: list[EntityIn] = []
        for index, entity in enumerate(self.entities):
            key = normalize(entity.name)
            if key in first:
                earlier = self.entities[first[key]]
                if not same_type(earlier.type, entity.type):
                    spelled = (f"{entity.name!r} is listed twice" if earlier.name == entity.name
                               else f"{earlier.name!r} and {entity.name!r} are one name once "
                                    "normalized, listed")
                    raise refusal(
                        f"entities[{index}]",
                        f"{spelled} as entities[{first[key]}] and entities[{index}] with types "
                        f"{earlier.type!r} and {entity.type!r}; list the entity once with one "
                        "type, or give different things different names")
                aliases[entity.name] = earlier.name
                continue
            first[key] = index
            aliases[entity.name] = entity.name
            kept.append(entity)
        self.entities = kept
        return aliases

    def _merge_resolutions(self, aliases: dict[str, str]) -> None:
        merged: dict[str, str] = {}
        for name, choice in self.entity_resolutions.items():
            if name not in aliases:
                continue  # refused below, with the name as given
            canonical = aliases[name]
            if merged.setdefault(canonical, choice) != choice:
                raise refusal(f"entity_resolutions[{name!r}]",
                             f"{name!r} and {canonical!r} are one entity in this episode but "
                             "are resolved differently; give one resolution")
        unknown = {n: c for n, c in self.entity_resolutions.items() if n not in aliases}
        self.entity_resolutions = {**merged, **unknown}


class Edge(Out):
    fact_id: str
    source: str
    target: str
    relation_type: str


class SupersededEdge(Edge):
    superseded_by: str


class Candidate(Out):
    id: str
    name: str
    type: str
    why: str


class AmbiguousEntity(Out):
    name: str
    type: str
    candidates: list[Candidate]


class EntityOut(Out):
    name: str
    id: str
    type: str
    created: bool


class WriteEpisodeResult(Out):
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


run = keywords(services.write_episode)


TOOL = Tool(
    name="write_episode", title="Remember what happened",
    description=(
        "Store what you learned in this conversation as entities and facts you extracted "
        "yourself (the server never calls a model). Call it when the user states something "
        "worth recalling later: a decision, a preference, who owns what, what caused an "
        "incident. Every fact's source and target must be listed in entities by exact name. "
        "Writing the same (source, target, relation_type) again replaces the old fact (it "
        "stays queryable as superseded). Check `stored`: when false, nothing was written "
        "because a name may mean an existing entity; call again with entity_resolutions "
        "mapping each name in ambiguous_entities to a candidate id or \"new\". Set "
        "causal_hint only when the conversation said one thing caused another. Costs one "
        "unit per fact created."),
    args=WriteEpisodeArgs, output=WriteEpisodeResult, run=run,
    read_only=False, idempotent=True, context_defaults=("project",),
    meters="fact created", audits=frozenset({"entity.created", "fact.created", "fact.superseded"}),
)
