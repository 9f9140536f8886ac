"""Which records of a file this memory already holds, and which the box has erased.

For one batch of one kind, each source id is either
- mapped: an earlier import into this memory recorded it (ImportedRecord): already present,
  or, if that row has been forgotten here since, skipped (it stays forgotten);
- on this box and in this memory (a memory's own export imported into itself): present;
- erased: the file comes from this box and the row no longer exists anywhere on it. Ids
  are random UUIDs made by this box, so a missing one was forgotten, or its memory or
  account deleted: it stays erased, and so does everything that names it;
- new: to be created (kind rules may still match it to a row by name or key).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from memories.import_records import ImportedRecord
from memories.models import Entity, Episode, Fact, Memory, Note, RecallSave

MODELS = {"episode": Episode, "entity": Entity, "fact": Fact, "note": Note,
          "recall_save": RecallSave}
FORGOTTEN_HERE = "forgotten in this memory after an earlier import"
ERASED_ON_BOX = "erased on this box since the export"


@dataclass
class Matched:
    present: dict[uuid.UUID, uuid.UUID] = field(default_factory=dict)
    skipped: dict[uuid.UUID, str] = field(default_factory=dict)
    new: list[uuid.UUID] = field(default_factory=list)


def match(*, memory: Memory, kind: str, source_box: uuid.UUID, same_box: bool,
          ids: list[uuid.UUID]) -> Matched:
    """Sort a batch's source ids (three queries at most, whatever its size)."""
    model = MODELS[kind]
    found = Matched()
    mapped = dict(ImportedRecord.objects.filter(
        memory_id=memory.pk, kind=kind, source_box=source_box, source_id__in=ids,
    ).values_list("source_id", "local_id"))
    if mapped:
        alive = set(model.objects.filter(pk__in=list(mapped.values()), memory_id=memory.pk)
                    .values_list("pk", flat=True))
        for source, local in mapped.items():
            if local in alive:
                found.present[source] = local
            else:
                found.skipped[source] = FORGOTTEN_HERE
    rest = [pk for pk in ids if pk not in mapped]
    if same_box and rest:
        where = dict(model.objects.filter(pk__in=rest).values_list("pk", "memory_id"))
        for pk in rest:
            if pk not in where:
                found.skipped[pk] = ERASED_ON_BOX
            elif where[pk] == memory.pk:
                found.present[pk] = pk
        rest = [pk for pk in rest if where.get(pk) not in (None, memory.pk)]
    found.new = rest
    return found


def remember(*, memory: Memory, kind: str, source_box: uuid.UUID,
             pairs: list[tuple[uuid.UUID, uuid.UUID]]) -> None:
    """Record (source id, local id) for rows this import created or matched by name/key."""
    if pairs:
        ImportedRecord.objects.bulk_create([
            ImportedRecord(memory_id=memory.pk, kind=kind, source_box=source_box,
                           source_id=source, local_id=local) for source, local in pairs],
            batch_size=1000)
