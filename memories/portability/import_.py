"""Importing an export file into a memory: one transaction for the whole file.

"Nothing half-imported" means exactly that: every record of the file is stored, paid for
and audited, or (a refused line, the allowance, any fault) nothing is, and the memory is
as it was. A dry run does all of it and rolls back, so its report is the one a real import
would give. Imports into one memory queue on the memory (one at a time); writes by agents
meanwhile go on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.db import transaction

from accounts.account_events import account_event
from accounts.limits import refuse_if_read_only
from accounts.principal import Principal
from accounts.redaction_settings import redactor_for
from echomem import bulk
from memories.core import metering
from memories.erasure.services import member_role, require_owner_or_admin
from memories.graph.selectors import memory_for
from memories.graph.services import hold_memory, memory_create
from memories.import_records import this_box
from memories.models import Memory
from memories.portability.export import embedding_model
from memories.portability.fact_rows import History, link_history, store_facts
from memories.portability.lines import KINDS
from memories.portability.reading import FileReader, ImportRefused
from memories.portability.writing import (
    Known,
    Tally,
    Target,
    store_entities,
    store_episodes,
    store_notes,
    store_recall_saves,
)
from memories.search import indexing, planner_stats

BATCH = 1000
STORED_AS_GIVEN = "stored as given"
Progress = Callable[[int], Any]


@dataclass(frozen=True)
class KindCounts:
    created: int
    already_present: int
    skipped: int


@dataclass(frozen=True)
class ImportReport:
    """What the import did (or, in a dry run, would do)."""

    memory: str
    dry_run: bool
    source_box: str
    source_memory: str
    same_box: bool
    vectors: str
    counts: dict[str, KindCounts]
    history_links: int
    units: int
    skipped_reasons: list[str] = field(default_factory=list)

    @property
    def vectors_stored(self) -> bool:
        return self.vectors == STORED_AS_GIVEN

    @property
    def changed(self) -> bool:
        return any(count.created for count in self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory, "dry_run": self.dry_run, "source_box": self.source_box,
            "source_memory": self.source_memory, "same_box": self.same_box,
            "vectors": self.vectors, "history_links": self.history_links, "units": self.units,
            "counts": {kind: vars(count) for kind, count in self.counts.items()},
            "skipped_reasons": self.skipped_reasons, "changed": self.changed,
        }


def memory_create_if_missing(*, principal: Principal, name: str) -> bool:
    """Make the memory `name` in the principal's account for an import into it, unless it
    exists; whether it was made. Owners and admins only, as the import itself."""
    require_owner_or_admin(member_role(principal), doing="import into a new memory")
    if Memory.objects.filter(account_id=principal.account_id, name=name).exists():
        return False
    memory_create(account_id=principal.account_id, name=name, actor_id=principal.holder_id)
    return True


def import_memory(*, principal: Principal, memory: str, lines: Iterable[bytes | str],
                  dry_run: bool = False, progress: Progress | None = None) -> ImportReport:
    """Import the export file `lines` into the memory `memory` of the principal's account.

    Only an owner or admin may. Imported rows get new ids and remember their source, so
    importing the same file again changes nothing. Bad input raises ImportRefused naming
    the line and the field, with nothing written. `progress`, if given, is called with the
    number of records each finished batch held."""
    refuse_if_read_only(principal, tool="import")
    graph = memory_for(principal, memory)
    require_owner_or_admin(member_role(principal), doing="import into a memory")
    reader = FileReader(lines)
    header = reader.header
    box = this_box()
    vectors_usable = header.vectors and header.embedding_model == embedding_model()
    target = Target(principal=principal, memory=graph, source_box=header.source_box,
                    same_box=header.source_box == box, use_vectors=vectors_usable,
                    embed_names=not dry_run, redactor=redactor_for(principal.account_id))
    known, tally, history = Known(), Tally(), History()
    with transaction.atomic():
        hold_memory(graph)
        bulk.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_IMPORT_LOCK, graph.pk])
        analyze_at = ANALYZE_FIRST_AT
        for kind, batch in _batches(reader):
            if kind == "fact":
                store_facts(target, known, tally, history, batch)
                if tally.created["fact"] >= analyze_at:
                    planner_stats.analyze_during_bulk_load()
                    analyze_at *= 2
            else:
                _STORE[kind](target, known, tally, batch)
            if progress is not None:
                progress(len(batch))
        links = link_history(known, history)
        created = sum(tally.created.values())
        units = tally.created["fact"]
        if units:
            metering.charge(principal, graph, "import_memory", [1] * units, whole=True)
        report = _report(graph.name, dry_run, header, target, tally, links, units,
                         _vectors_said(header.vectors, vectors_usable))
        if dry_run:
            transaction.set_rollback(True)
        elif created:
            account_event(account_id=principal.account_id, actor_id=principal.holder_id,
                          action="memory.imported", object_id=graph.pk, memory=graph,
                          tool=principal.tool, key_id=principal.key_id,
                          after={"source_box": str(header.source_box),
                                 "source_memory": header.memory.name,
                                 "format_version": header.version,
                                 "created": dict(tally.created), "units": units})
            transaction.on_commit(partial(indexing.schedule, history.waiting))
    return report


# A large import refreshes the fact table's planner statistics after this many facts,
# then after twice as many each time (memories/search/planner_stats.py says why); a small
# one never does.
ANALYZE_FIRST_AT = 2_000
# The first half of the import's advisory lock key (the memory's id is the second).
_IMPORT_LOCK = 0x4D45  # "ME"
_STORE = {"episode": store_episodes, "entity": store_entities, "note": store_notes,
          "recall_save": store_recall_saves}


def _batches(reader: FileReader) -> Iterator[tuple[str, list[tuple[int, Any]]]]:
    """Runs of up to BATCH records of one kind, refusing kinds out of the format's order
    (a record may name only records before it)."""
    kind, batch, rank = None, [], 0
    for record in reader.records():
        here = KINDS.index(record.kind)
        if here < rank:
            raise ImportRefused(reader.number, f"a {record.kind} line after {KINDS[rank]} "
                                f"lines: records come in the order {', '.join(KINDS)}",
                                field="kind", fix="export the memory again")
        rank = here
        if batch and (record.kind != kind or len(batch) == BATCH):
            yield kind, batch
            batch = []
        kind = record.kind
        batch.append((reader.number, record))
    if batch:
        yield kind, batch


def _vectors_said(in_file: bool, usable: bool) -> str:
    if usable:
        return STORED_AS_GIVEN
    if in_file:
        return "re-embedded: the file's vectors come from another embedding model"
    return "embedded by this server: the file carries no vectors"


def _report(name: str, dry_run: bool, header, target: Target, tally: Tally, links: int,
            units: int, vectors: str) -> ImportReport:
    return ImportReport(
        memory=name, dry_run=dry_run, source_box=str(header.source_box),
        source_memory=header.memory.name, same_box=target.same_box, vectors=vectors,
        counts={kind: KindCounts(tally.created[kind], tally.present[kind], tally.skipped[kind])
                for kind in KINDS},
        history_links=links, units=units, skipped_reasons=list(tally.reasons))

