"""record_recall_save: credit a recalled fact that saved the user from explaining again."""

from __future__ import annotations

import uuid

from pydantic import Field

from memories.core import limits
from memories.core.inputs import InputModel
from memories.graph import recall_saves
from tools.arguments import MemoryName, Scope
from tools.contract import Tool, keywords
from tools.results import Out


class RecordRecallSaveArgs(InputModel):
    """A recalled fact saved the user from re-explaining something."""

    scope: Scope
    fact_id: uuid.UUID = Field(description="The fact_id from a query_memory result.")
    note: str = Field(min_length=1, max_length=2000,
                      description="What it saved, in a sentence.")
    session_id: str = Field(default="", max_length=limits.LABEL_CHARS)
    memory: MemoryName


class Party(Out):
    holder_id: int
    tool: str


class RecordRecallSaveResult(Out):
    recorded: bool
    recall_save_id: str
    fact_id: str
    writer: Party
    reader: Party
    memory: str
    units: int
    redacted: int = Field(default=0, description="Secrets replaced by [REDACTED:<kind>] in "
                                                 "note and session_id before storing.")


run = keywords(recall_saves.record_recall_save)


TOOL = Tool(
    name="record_recall_save", title="Credit a recalled fact",
    description=(
        "Record that a fact you recalled (its fact_id from query_memory) saved the user "
        "from explaining something again; note says what it saved. Call it once per such "
        "moment. The writer is read from the fact and the reader from your key. Free."),
    args=RecordRecallSaveArgs, output=RecordRecallSaveResult,
    run=run, read_only=False, idempotent=False,
    meters="", audits=frozenset({"recall_save.recorded"}),
)
