"""What an episode is made of, as the engine accepts it: entities and the facts between them.

tools/write_episode.py lists them in its arguments; the write path (services.py,
resolution.py) reads them. Declared here so the engine owns the shape it stores.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from memories.core import limits
from memories.core.inputs import EventTime, InputModel, text_field
from memories.core.names import normalize

MAX_FACT_CHARS = limits.FACT_CHARS
Confidence = Literal["extracted", "inferred", "ambiguous"]
CausalHint = Literal["caused_by", "led_to", "enabled_by", "blocked_by", "contradicts"]


class EntityIn(InputModel):
    name: str = text_field(limits.NAME_CHARS,
                           "The entity's name, exactly as facts will refer to it.")
    type: str = text_field(limits.TYPE_CHARS, "Free text: person, service, venue, team, ...")

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


class FactIn(InputModel):
    source: str = text_field(limits.NAME_CHARS, "Must equal one of `entities[].name` exactly.")
    target: str = text_field(limits.NAME_CHARS, "Must equal one of `entities[].name` exactly.")
    relation_type: str = text_field(
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
