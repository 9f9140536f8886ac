"""Models of memories/portability/ (kept out of models.py, which is full; it imports them).

What the box keeps so imports can be repeated safely: its own stable id, and for each
imported row where it came from (the source box and the row's id there).

The mapping is what makes a second import of one file a no-op: a record whose (memory,
kind, source box, source id) is already mapped is "already present", whatever became of
the row it was mapped to since (forgotten rows stay forgotten). `local_id` is not a
foreign key for that reason: forgetting the imported row leaves its mapping behind.
"""

from __future__ import annotations

import uuid

from django.db import models

from echomem import bulk


class BoxIdentity(models.Model):
    """This box's one stable id, written in every export as `source_box`. Made on first use
    and kept in the database, so a backup restored elsewhere is still the same box."""

    # One row: the key is always 1, so two first callers at once cannot make two ids.
    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    box_id = models.UUIDField(default=uuid.uuid4, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)


class ImportedRecord(models.Model):
    """One row an import created (or matched) in `memory`, and the record it came from."""

    class Kind(models.TextChoices):
        EPISODE = "episode"
        ENTITY = "entity"
        FACT = "fact"
        NOTE = "note"
        RECALL_SAVE = "recall_save"

    memory = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="+",
                               db_index=False)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    source_box = models.UUIDField()
    source_id = models.UUIDField()
    local_id = models.UUIDField()
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "kind", "source_box", "source_id"],
                                    name="imported_record_once"),
        ]
        # A later export's new version of an edge asks which live facts came from its source.
        indexes = [models.Index(fields=["memory", "kind", "local_id"],
                                name="imported_record_local")]


def this_box() -> uuid.UUID:
    """The box's id, made by the first caller (two at once agree: the row is unique)."""
    bulk.execute("INSERT INTO memories_boxidentity (id, box_id, created_at) "
                 "VALUES (1, %s, now()) ON CONFLICT (id) DO NOTHING", [uuid.uuid4()])
    return bulk.execute("SELECT box_id FROM memories_boxidentity WHERE id = 1", [])[0][0]
