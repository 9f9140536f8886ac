"""memory_save: save a note (a decision, a bug fix, a pattern) for future sessions."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from accounts.principal import Principal
from memories.core import limits
from memories.core.inputs import text_field
from memories.notes import services
from tools.arguments import MAX_NOTE_LIST_ITEMS, ListItem, NoteArgs, NoteCategory, NoteText
from tools.contract import Tool
from tools.results import Out


class MemorySaveArgs(NoteArgs):
    """Save a note (a decision, a bug fix, a pattern) for future sessions."""

    title: str = text_field(limits.NOTE_TITLE_CHARS, "Short title, at most 60 characters. Saving "
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


class MemorySaveResult(Out):
    id: str = Field(description="The note's id (the same one when a save updated it).")
    title: str
    project: str | None
    created: bool
    updated: bool = Field(description="True when a note with this title in this project "
                                      "existed and changed; its previous text is in history.")
    version: int
    changed: list[str] = Field(description="The fields this save changed (on a new note: "
                                           "those it filled).")
    kept: list[str] = Field(description="On an update, the fields the save left out, which "
                                        "kept their stored value.")
    warnings: list[str] = Field(description="What would make a decision or bug note useful "
                                            "later; the note is saved regardless.")
    redacted: int = Field(default=0, description="Secrets replaced by [REDACTED:<kind>] "
                                                 "before storing.")
    memory: str
    scope: str
    units: int
    message: str


def run(principal: Principal, args: MemorySaveArgs) -> dict[str, Any]:
    """Only the fields the call named with a value replace the stored note's (null is the
    same as leaving one out)."""
    given = {name for name in args.model_fields_set
             if name in services.MERGED_FIELDS and getattr(args, name) is not None}
    return services.memory_save(
        principal, scope=args.scope, memory=args.memory, title=args.title, what=args.what,
        why=args.why, impact=args.impact, tags=args.tags, category=args.category,
        related_files=args.related_files, details=args.details, project=args.project,
        given=frozenset(given))


TOOL = Tool(
    name="memory_save", title="Save a note",
    description=(
        "Save a note for future sessions. You MUST call this before ending any session in "
        "which you made changes, fixed a bug, made a decision or learned something not "
        "obvious from the code: an architectural choice (X over Y, and why), a bug (root "
        "cause and fix), a gotcha, setup or configuration. Do not save trivial changes, "
        "what the code already says, or duplicates. Saving the same title in the same "
        "project updates that note: the fields you give replace the stored ones (an "
        "empty string or list clears one), the fields you leave out keep their value, "
        "the earlier text is kept as history, and changed / kept in the reply say "
        "which is which. Secrets (keys, "
        "tokens, passwords) are redacted before anything is stored; mark anything else "
        "private as <redacted>...</redacted>. warnings says what would make the note "
        "useful later. Costs one unit per note saved (an identical re-save is free)."),
    args=MemorySaveArgs, output=MemorySaveResult, run=run,
    read_only=False, idempotent=True, context_defaults=("project",),
    meters="note saved", audits=frozenset({"note.created", "note.updated"}),
)
