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
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from echomem.errors import ValidationFailed
from echomem.text import unstorable
from memories.core import limits
from memories.graph.names import normalize, same_type


class Verbatim:
    """Marks an argument that identifies something (a memory, a page, a note) rather than
    saying something: redaction (memories/free_text.py) leaves it as sent."""

    def __repr__(self) -> str:
        return "VERBATIM"


VERBATIM = Verbatim()

MAX_FACT_CHARS = limits.FACT_CHARS
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
    VERBATIM,
]
Confidence = Literal["extracted", "inferred", "ambiguous"]
CausalHint = Literal["caused_by", "led_to", "enabled_by", "blocked_by", "contradicts"]


def _utc(value: datetime | None) -> datetime | None:
    """Event times without an offset are taken as UTC, so they compare with everything else.

    The instant must be readable back: Postgres stores years up to 294276, but Python
    (and so psycopg) reads only years 1 to 9999 in UTC, and a row it cannot read makes
    every query that reaches it fail. `9999-12-31T23:59:59-14:00` is year 10000 in UTC.
    """
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        # In UTC from here on: Python takes offsets up to ±23:59, PostgreSQL only ±15:59.
        return value.astimezone(UTC)
    except OverflowError:
        raise PydanticCustomError(
            "date_out_of_range",
            "{value} falls outside years 1 to 9999 once converted to UTC, which this server "
            "cannot store and read back; send a time inside that range (or omit it)",
            {"value": value.isoformat()},
        ) from None


EventTime = Annotated[datetime | None, AfterValidator(_utc)]

# The two clocks a read can be set to (docs/engine.md, "Record time and event time"). Declared
# once here for every tool that reads facts, so their names, meaning and checks cannot drift.
AsOf = Annotated[EventTime, Field(
    default=None,
    description="Record time: answer as the memory stood at this time (ISO 8601; UTC when no "
                "offset is given): facts recorded by then and not yet replaced by then. "
                "Whatever the memory learned later is ignored.")]
ValidAsOf = Annotated[EventTime, Field(
    default=None,
    description="Event time: only facts that were true in the world at this time (ISO 8601; "
                "UTC when no offset is given), judged by their valid_at and invalid_at. A fact "
                "without valid_at counts as true from when it was recorded; a replaced version "
                "stays true until its replacement's valid_at (or, without one, until it was "
                "replaced). With as_of too: what the memory held at as_of about that time.")]


def _storable(value: Any, where: str = "") -> None:
    """Refuse text the database cannot hold, in strings, list items and dict keys alike."""
    if isinstance(value, str):
        reason = unstorable(value)
        if reason:
            raise PydanticCustomError("unstorable_text", where + reason)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _storable(item, f"item {index} ")
    elif isinstance(value, dict):
        for key, item in value.items():
            _storable(key, f"key {key!r} ")
            _storable(item, f"[{key!r}] ")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("*")
    @classmethod
    def _text_is_storable(cls, value: Any, info: ValidationInfo) -> Any:
        _storable(value)
        return value


def _text(max_length: int, description: str, min_length: int = 1):
    return Field(min_length=min_length, max_length=max_length, description=description)


class EntityIn(_Args):
    name: str = _text(limits.NAME_CHARS, "The entity's name, exactly as facts will refer to it.")
    type: str = _text(limits.TYPE_CHARS, "Free text: person, service, venue, team, ...")

    @field_validator("name")
    @classmethod
    def _normalized_name_fits(cls, value: str) -> str:
        length = len(normalize(value))
        if length > limits.NAME_CHARS:
            raise PydanticCustomError(
                "name_too_long_normalized",
                "becomes {length} characters once normalized for matching (Unicode NFKC and "
                "case folding expand some characters, e.g. 'ß' to 'ss'); the limit is "
                "{limit}: shorten the name",
                {"length": length, "limit": limits.NAME_CHARS},
            )
        return value


class FactIn(_Args):
    source: str = _text(limits.NAME_CHARS, "Must equal one of `entities[].name` exactly.")
    target: str = _text(limits.NAME_CHARS, "Must equal one of `entities[].name` exactly.")
    relation_type: str = _text(
        limits.RELATION_CHARS,
        "The edge label, e.g. works_at. (source, target, relation_type) identifies the "
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
                    raise _error(f"facts[{index}].{end}",
                                 f"{name!r} is not among entities[].name; add "
                                 f"{{\"name\": {name!r}, \"type\": ...}} to entities or use "
                                 "the exact spelling listed there")
                setattr(fact, end, aliases[name])
        self._merge_resolutions(aliases)
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
            if name not in aliases:
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
                    raise _error(
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
                raise _error(f"entity_resolutions[{name!r}]",
                             f"{name!r} and {canonical!r} are one entity in this episode but "
                             "are resolved differently; give one resolution")
        unknown = {n: c for n, c in self.entity_resolutions.items() if n not in aliases}
        self.entity_resolutions = {**merged, **unknown}


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
    as_of: AsOf
    valid_as_of: ValidAsOf
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
    subject: str = Field(min_length=1, max_length=limits.NAME_CHARS,
                         description="The thing to trace from (an entity name).")
    direction: Literal["upstream", "downstream", "both"] = Field(
        default="both", description="upstream: its causes; downstream: its effects.")
    max_hops: int = Field(default=3, ge=1, le=6, description="Longest chain, 1 to 6.")
    as_of: AsOf
    valid_as_of: ValidAsOf
    memory: MemoryName


class GetEpisodeArgs(_Args):
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


class RecordRecallSaveArgs(_Args):
    """A recalled fact saved the user from re-explaining something."""

    scope: Scope
    fact_id: uuid.UUID = Field(description="The fact_id from a query_memory result.")
    note: str = Field(min_length=1, max_length=2000,
                      description="What it saved, in a sentence.")
    session_id: str = Field(default="", max_length=limits.LABEL_CHARS)
    memory: MemoryName


class GetAuditLogArgs(_Args):
    """Every recorded change in this scope: what, when, which session, by whom."""

    scope: Scope
    since: EventTime = Field(default=None, description="Only changes at or after this time.")
    memory: MemoryName
    cursor: Annotated[str | None, VERBATIM] = Field(
        default=None, description="next_cursor of the previous page.")
    limit: int = Field(default=100, ge=1, le=500)


def _error(location: str, message: str) -> PydanticCustomError:
    return PydanticCustomError("echo", "{location}: {message}",
                               {"location": location, "message": message})


def parse(model: type[BaseModel], arguments: dict[str, Any] | None) -> Any:
    """Validate tool arguments; refuse with every problem, each naming its field."""
    bad_name = _unstorable_name(arguments or {})
    if bad_name:
        where, reason = bad_name
        raise ValidationFailed(f"invalid arguments: {where}: the name {reason}", field=where,
                               fix="spell every argument and key as plain, valid text")
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


def _unstorable_name(value: Any, loc: tuple[Any, ...] = ()) -> tuple[str, str] | None:
    """The first member name (at any depth) that is not storable text, with why.

    pydantic refuses such a name without saying where (it fails to read the key), so it
    is found here first, and named like any other field.
    """
    if isinstance(value, dict):
        for key, item in value.items():
            reason = unstorable(key) if isinstance(key, str) else None
            if reason:
                return _location((*loc, key)), reason
            found = _unstorable_name(item, (*loc, key))
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _unstorable_name(item, (*loc, index))
            if found:
                return found
    return None


def _location(loc: tuple[Any, ...]) -> str:
    """`facts[0].valid_at`; a key that is not a plain name is bracketed: `['']`, `['a b']`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).isidentifier():
            out += f"[{str(part)!r}]"
        else:
            out += f".{part}" if out else str(part)
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
    if kind == "string_unicode":  # pydantic's own refusal of a lone surrogate
        return f"{where}: {unstorable(error['input']) or 'is not valid Unicode'}"
    given = error.get("input")
    shown = ""
    if (isinstance(given, str) and len(given) <= 60) or isinstance(given, int | float | bool):
        shown = f" (got {given!r})"
    if kind.startswith("datetime"):
        return (f"{where}: {error['msg']}{shown}; send an ISO 8601 date and time such as "
                "2024-05-01T09:30:00Z (UTC when no offset is given)")
    return f"{where}: {error['msg']}{shown}"


# Note tools (EchoVault's memory_* family): scope defaults to shared, and `project` may
# come from the request's X-Echo-Project header (mcp_gateway/tools.py fills it in).
NoteScope = Annotated[
    Literal["shared", "solo"],
    Field(default="shared", description="`shared` (the default): everyone on the account "
                                        "reads it. `solo`: private to this key's holder and "
                                        "tool."),
]
NoteCategory = Literal["decision", "bug", "pattern", "learning", "context"]
MAX_NOTE_TEXT_CHARS = 20_000
MAX_NOTE_LIST_ITEMS = 50
NoteText = Annotated[str, Field(max_length=MAX_NOTE_TEXT_CHARS)]
ListItem = Annotated[str, Field(min_length=1, max_length=limits.LABEL_CHARS)]


class _NoteArgs(_Args):
    scope: NoteScope
    memory: MemoryName
    project: str | None = Field(
        default=None, max_length=limits.LABEL_CHARS,
        description="Project name. Omit to use the X-Echo-Project header your setup sends "
                    "(`memory setup --project`); with neither, notes of every project.")
    file_path: str | None = Field(
        default=None, max_length=4096,
        description="Accepted for EchoVault compatibility and ignored: notes live on the "
                    "server, not in a vault file.")


class MemorySaveArgs(_NoteArgs):
    """Save a note (a decision, a bug fix, a pattern) for future sessions."""

    title: str = _text(limits.NOTE_TITLE_CHARS, "Short title, at most 60 characters. Saving "
                       "the same title in the same project again updates that note: fields "
                       "given replace its own, fields left out keep theirs, and its earlier "
                       "text is kept as history.")
    what: NoteText = Field(min_length=1, description="1-2 sentences: the essence a future "
                                                     "agent needs.")
    why: NoteText | None = Field(default=None, description="Reasoning behind the decision, "
                                                           "or the root cause of the bug.")
    impact: NoteText | None = Field(default=None, description="What changed as a result.")
    tags: list[ListItem] = Field(default_factory=list, max_length=MAX_NOTE_LIST_ITEMS,
                                 description='Relevant tags, e.g. ["auth", "jwt"].')
    category: NoteCategory = Field(
        default="context", description="decision: chose X over Y; bug: fixed a problem; "
                                       "pattern: reusable gotcha; learning: non-obvious "
                                       "discovery; context: project setup or architecture. "
                                       "A new note without one is context; an update "
                                       "without one keeps the note's.")
    related_files: list[ListItem] = Field(default_factory=list,
                                          max_length=MAX_NOTE_LIST_ITEMS,
                                          description="File paths involved.")
    details: NoteText | None = Field(
        default=None, description="Full context for a future agent with none: context, "
                                  "options considered, decision, tradeoffs, follow-up.")
    project: str | None = Field(
        default=None, max_length=limits.LABEL_CHARS,
        description="Project name. Omit to use the X-Echo-Project header your setup sends; "
                    "with neither, the note belongs to no project.")


class MemorySearchArgs(_NoteArgs):
    """Search notes by meaning and by words, best first."""

    query: str = Field(min_length=1, max_length=2000, description="Search terms or a "
                                                                  "question.")
    limit: int = Field(default=5, ge=1, le=50, description="Most results, 1 to 50.")


class MemoryContextArgs(_NoteArgs):
    """The project's most recent notes, to load at the start of a session."""

    limit: int = Field(default=10, ge=1, le=100, description="Most notes, 1 to 100.")
    cursor: Annotated[str | None, VERBATIM] = Field(
        default=None, max_length=200,
        description="Omit for the newest notes. To read further back, pass the next_cursor "
                    "of the previous reply (with the same project and scope) unchanged.")


class MemoryDetailsArgs(_NoteArgs):
    """One note in full, with its earlier versions."""

    id: Annotated[str, VERBATIM] = Field(min_length=8, max_length=36,
                    description="A note id from memory_search or memory_context, or a unique "
                                "prefix of it (8 characters or more).")


MAX_FORGET_IDS = 500
NoteIdOrPrefix = Annotated[str, Field(min_length=8, max_length=36), VERBATIM]


class ForgetArgs(_Args):
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
            raise _error("facts", "nothing to forget; pass at least one id in facts, entities, "
                                  "episodes or notes")
        return self
