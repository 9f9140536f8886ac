"""One declaration per tool: the argument model is the MCP inputSchema, the REST
validation and the docs (the result models, for outputSchema, are in
mcp_gateway/outputs.py).

Messages here are read by a model deciding what to change, so each says the fix.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from echomem.errors import ValidationFailed

MAX_FACT_CHARS = 4000
MAX_FACTS_PER_EPISODE = 500
MAX_ENTITIES_PER_EPISODE = 500

Scope = Annotated[
    Literal["shared", "solo"],
    Field(description="`shared`: everyone on the account reads and writes it (the default "
                      "choice). `solo`: private to this key's holder and tool."),
]
MemoryName = Annotated[
    str | None,
    Field(default=None, description="Which graph (memory) to use; omit for the key's default "
                                    "memory, else the account's `default`. Must already exist."),
]
Confidence = Literal["extracted", "inferred", "ambiguous"]
CausalHint = Literal["caused_by", "led_to", "enabled_by", "blocked_by", "contradicts"]


def _utc(value: datetime | None) -> datetime | None:
    """Event times without an offset are taken as UTC, so they compare with everything else."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


EventTime = Annotated[datetime | None, AfterValidator(_utc)]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def _text(max_length: int, description: str, min_length: int = 1):
    return Field(min_length=min_length, max_length=max_length, description=description)


class EntityIn(_Args):
    name: str = _text(500, "The entity's name, exactly as facts will refer to it.")
    type: str = _text(100, "Free text: person, service, venue, team, ...")


class FactIn(_Args):
    source: str = _text(500, "Must equal one of `entities[].name` exactly.")
    target: str = _text(500, "Must equal one of `entities[].name` exactly.")
    relation_type: str = _text(
        200, "The edge label, e.g. works_at. (source, target, relation_type) identifies the "
             "edge: writing it again replaces (supersedes) the previous fact.")
    fact: str = Field(min_length=1, description="One sentence stating the fact "
                                                f"(at most {MAX_FACT_CHARS} characters).")
    confidence: Confidence = Field(description="`extracted`: stated in the source. "
                                   "`inferred`: your conclusion. `ambiguous`: unsure.")
    causal_hint: CausalHint | None = Field(
        default=None,
        description="Only what the session said: `led_to` (source led to target), `caused_by` "
                    "(source was caused by target), `enabled_by`, `blocked_by` (target "
                    "enabled/blocked source), `contradicts`. Omit when merely associated; "
                    "never guess a cause.")
    valid_at: EventTime = Field(default=None, description="When it became true in the world "
                                "(ISO 8601; UTC when no offset is given).")
    invalid_at: EventTime = Field(default=None, description="When it stopped being true "
                                  "(ISO 8601).")

    @field_validator("fact")
    @classmethod
    def _fact_is_a_sentence(cls, value: str) -> str:
        if len(value) > MAX_FACT_CHARS:
            raise PydanticCustomError(
                "fact_too_long",
                "is {length} characters; the limit is {limit}: facts are sentences, not "
                "documents, so split it into several facts",
                {"length": len(value), "limit": MAX_FACT_CHARS},
            )
        return value

    @model_validator(mode="after")
    def _valid_before_invalid(self) -> FactIn:
        if self.valid_at and self.invalid_at and self.invalid_at < self.valid_at:
            raise PydanticCustomError(
                "invalid_before_valid",
                "invalid_at ({invalid}) is before valid_at ({valid}); swap them or drop one",
                {"invalid": self.invalid_at.isoformat(), "valid": self.valid_at.isoformat()},
            )
        return self


class WriteEpisodeArgs(_Args):
    """Record what happened: the entities and facts you extracted from one conversation."""

    scope: Scope
    session_id: str = Field(default="", max_length=200,
                            description="Your id for the conversation or run (audited).")
    entities: list[EntityIn] = Field(max_length=MAX_ENTITIES_PER_EPISODE,
                                     description="Every entity the facts mention.")
    facts: list[FactIn] = Field(default_factory=list, max_length=MAX_FACTS_PER_EPISODE)
    entity_resolutions: dict[str, str] = Field(
        default_factory=dict,
        description="For names the server reported as ambiguous: name -> an existing entity "
                    "id, or \"new\" for a new entity.")
    assume_new: bool = Field(
        default=False,
        description="Every entity here is new to the graph; skips the similar-name check. "
                    "An exact existing name still resolves to its node.")
    memory: MemoryName
    project: str = Field(default="", max_length=200, description="Optional label.")

    @model_validator(mode="after")
    def _consistent(self) -> WriteEpisodeArgs:
        types: dict[str, str] = {}
        for index, entity in enumerate(self.entities):
            known = types.setdefault(entity.name, entity.type)
            if known != entity.type:
                raise _error(f"entities[{index}]",
                             f"{entity.name!r} is listed twice with types {known!r} and "
                             f"{entity.type!r}; list each entity once")
        for index, fact in enumerate(self.facts):
            for end in ("source", "target"):
                name = getattr(fact, end)
                if name not in types:
                    raise _error(f"facts[{index}].{end}",
                                 f"{name!r} is not among entities[].name; add "
                                 f"{{\"name\": {name!r}, \"type\": ...}} to entities or use "
                                 "the exact spelling listed there")
        seen: dict[tuple[str, str, str], int] = {}
        for index, fact in enumerate(self.facts):
            key = (fact.source, fact.target, fact.relation_type)
            if key in seen:
                raise _error(f"facts[{index}]",
                             f"facts[{seen[key]}] and facts[{index}] have the same key "
                             f"(source, target, relation_type) = {key}; one edge holds one "
                             "fact: merge them, or give one a distinguishing relation_type "
                             "or entity")
            seen[key] = index
        for name, choice in self.entity_resolutions.items():
            if name not in types:
                raise _error(f"entity_resolutions[{name!r}]",
                             f"{name!r} is not among entities[].name; resolve only names "
                             "this episode lists")
            if choice != "new":
                try:
                    uuid.UUID(choice)
                except ValueError:
                    raise _error(f"entity_resolutions[{name!r}]",
                                 f"{choice!r} is neither \"new\" nor an entity id; use an id "
                                 "from ambiguous_entities[].candidates or \"new\"") from None
        return self


class QueryMemoryArgs(_Args):
    """Recall facts by meaning and by words, best first."""

    scope: Scope
    query: str = Field(default="", max_length=2000,
                       description="Natural language. May be omitted with digest: true.")
    top_k: int = Field(default=10, ge=1, le=100, description="How many facts, 1 to 100.")
    digest: bool = Field(default=False, description="Ignore query; return the most recent "
                                                    "active facts.")
    include_superseded: bool = Field(default=False,
                                     description="Also return facts that were replaced.")
    as_of: EventTime = Field(default=None, description="Answer as the memory stood at this "
                             "time (ISO 8601): facts recorded by then and not yet superseded.")
    memory: MemoryName

    @model_validator(mode="after")
    def _query_or_digest(self) -> QueryMemoryArgs:
        if not self.digest and not self.query:
            raise _error("query", "is empty; pass a question or phrase, or set digest: true "
                                  "for the most recent facts")
        return self


class TraceCauseArgs(_Args):
    """Why something happened: chains of recorded causal links, nearest cause first."""

    scope: Scope
    subject: str = Field(min_length=1, max_length=500,
                         description="The thing to trace from (an entity name).")
    direction: Literal["upstream", "downstream", "both"] = Field(
        default="both", description="upstream: its causes; downstream: its effects.")
    max_hops: int = Field(default=3, ge=1, le=6, description="Longest chain, 1 to 6.")
    memory: MemoryName


class RecordRecallSaveArgs(_Args):
    """A recalled fact saved the user from re-explaining something."""

    scope: Scope
    fact_id: uuid.UUID = Field(description="The fact_id from a query_memory result.")
    note: str = Field(min_length=1, max_length=2000,
                      description="What it saved, in a sentence.")
    session_id: str = Field(default="", max_length=200)
    memory: MemoryName


class GetAuditLogArgs(_Args):
    """Every recorded change in this scope: what, when, which session, by whom."""

    scope: Scope
    since: EventTime = Field(default=None, description="Only changes at or after this time.")
    memory: MemoryName
    cursor: str | None = Field(default=None, description="next_cursor of the previous page.")
    limit: int = Field(default=100, ge=1, le=500)


def _error(location: str, message: str) -> PydanticCustomError:
    return PydanticCustomError("echo", "{location}: {message}",
                               {"location": location, "message": message})


def parse(model: type[BaseModel], arguments: dict[str, Any] | None) -> Any:
    """Validate tool arguments; refuse with every problem, each naming its field."""
    try:
        return model.model_validate(arguments or {})
    except ValidationError as exc:
        problems = [_describe(error) for error in exc.errors(include_url=False)]
        first = exc.errors(include_url=False)[0]
        field = _location(first["loc"]) or _custom_location(first)
        raise ValidationFailed(
            "invalid arguments: " + "; ".join(problems), field=field,
            fix="change the named fields as described and call again",
        ) from None


def _location(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _custom_location(error: dict[str, Any]) -> str:
    return (error.get("ctx") or {}).get("location", "")


def _describe(error: dict[str, Any]) -> str:
    if error["type"] == "echo":
        return error["msg"]
    where = _location(error["loc"]) or "arguments"
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{where}: unknown argument; remove it (check the spelling against the schema)"
    if kind == "missing":
        return f"{where}: required; add it"
    given = error.get("input")
    shown = ""
    if (isinstance(given, str) and len(given) <= 60) or isinstance(given, int | float | bool):
        shown = f" (got {given!r})"
    return f"{where}: {error['msg']}{shown}"
