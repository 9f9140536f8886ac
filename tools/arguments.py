"""The argument pieces several tools share: scopes, the memory name, the two clocks, the
note family's common fields, and the marker that keeps identifiers out of redaction.

Messages here are read by a model deciding what to change, so each says the fix.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from pydantic_core import PydanticCustomError

from memories.core import limits
from memories.core.inputs import EventTime, InputModel


class Verbatim:
    """Marks an argument that identifies something (a memory, a page, a note) rather than
    saying something: redaction (tools/free_text.py) leaves it as sent."""

    def __repr__(self) -> str:
        return "VERBATIM"


VERBATIM = Verbatim()

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



def refusal(location: str, message: str) -> PydanticCustomError:
    """A validator's refusal that names its field (tools/parsing.py reports it as given)."""
    return PydanticCustomError("echo", "{location}: {message}",
                               {"location": location, "message": message})


# Note tools (EchoVault's memory_* family): scope defaults to shared, and `project` may
# come from the request's X-Echo-Project header (tools/calling.py fills it in).
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


class NoteArgs(InputModel):
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
