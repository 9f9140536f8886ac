"""Re-embedding after a model change: every stored vector made again with the model this
release runs, a batch per step, resumable.

The stored vectors' model is recorded by its fingerprint (a digest of the model's files).
When a worker runs a release whose model differs, each step (memories/tasks.py, from
Celery beat) embeds one batch again, facts then notes then entity names, and keeps its
place in the one EmbeddingModelState row; the row's lock makes steps run one at a time.
Until the walk ends, a search compares the query with a mix of old and new vectors, so
it ranks less well but still answers. Facts written meanwhile are embedded by the indexer
with the new model already.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

from django.db import connection, transaction

from memories.models import EmbeddingModelState
from memories.search import vector_params
from memories.search.embeddings import get_embedder
from memories.search.indexing import BATCH_SIZE
from memories.search.model_files import MODEL_DIR
from memories.search.storing import _note_vectors, _texts_with_context, store_embeddings

STAGES = ("facts", "notes", "entities")
# storing._texts_with_context's layout; a new layout is a new fingerprint, so an upgraded
# box embeds its stored facts again (the walk below).
TEXT_LAYOUT = "fact, then up to ECHO_MEMORY_EMBED_CONTEXT earlier facts of its episode"
MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")


@lru_cache(maxsize=1)
def model_fingerprint() -> str:
    """The model's files and how a fact's text is laid out for it: a change to either
    makes every stored vector stale."""
    digest = hashlib.sha256(TEXT_LAYOUT.encode())
    for name in MODEL_FILES:
        with (MODEL_DIR / name).open("rb") as model_file:
            digest.update(hashlib.file_digest(model_file, "sha256").digest())
    return digest.hexdigest()


# Re-embedding after a model change walks each table by id. Waiting rows are left to the
# indexer (it runs the new model already); a row is waited for, not skipped, since the walk
# passes it only once.
REEMBED = {
    "facts": "SELECT id, search_text, episode_id, position FROM memories_fact "
             "WHERE embedding IS NOT NULL AND id > %s ORDER BY id LIMIT %s FOR UPDATE",
    "notes": "SELECT id, title, category, what, why, impact, tags FROM memories_note "
             "WHERE embedding IS NOT NULL AND id > %s ORDER BY id LIMIT %s FOR UPDATE",
    "entities": "SELECT id, name FROM memories_entity "
                "WHERE name_embedding IS NOT NULL AND id > %s ORDER BY id LIMIT %s FOR UPDATE",
}
FIRST_ID = "00000000-0000-0000-0000-000000000000"


def reembed_batch(table: str, *, after: str | None,
                  size: int = BATCH_SIZE) -> tuple[int, str | None]:
    """Embed again, with the model this process runs, up to `size` stored vectors of
    `table` (facts, notes or entities) past id `after`; returns how many and the last id
    (None when the table is done). Word statistics are left alone: the words are the same."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(REEMBED[table], [after or FIRST_ID, size])
        rows = cursor.fetchall()
        if not rows:
            return 0, None
        ids = [row[0] for row in rows]
        if table == "facts":
            store_embeddings(cursor, "memories_fact", ids,
                             get_embedder().embed(_texts_with_context(cursor, rows)))
        elif table == "notes":
            store_embeddings(cursor, "memories_note", ids, _note_vectors(rows))
        else:
            cursor.execute(
                "UPDATE memories_entity e SET name_embedding = v.embedding "
                "FROM unnest(%s::uuid[], %s::vector[]) AS v(id, embedding) WHERE e.id = v.id",
                [ids, [vector_params.vector(vector) for vector in get_embedder().embed(
                    [row[1] for row in rows])]])
    return len(rows), str(rows[-1][0])


@dataclass(frozen=True)
class Step:
    reembedded: int  # rows embedded again by this step (0 or one batch)
    more: bool  # whether another step has work to do


def reembed_step(*, batch: int = BATCH_SIZE) -> Step:
    """One batch of re-embedding, if the stored vectors come from another model.

    Migration 0013 recorded the model shipped when it ran; without that row (the model
    files were missing then), the first step records the current model.
    """
    current = model_fingerprint()
    with transaction.atomic():
        # pk 1 is the one row: two workers' first steps at once make one row, not two.
        _, created = EmbeddingModelState.objects.get_or_create(pk=1, defaults={"model": current})
        if created:
            return Step(0, more=False)
        state = EmbeddingModelState.objects.select_for_update().get(pk=1)
        if state.model == current and not state.target:
            return Step(0, more=False)
        if state.target != current:  # a change (or another change mid-walk): start over
            state.target, state.stage, state.after = current, STAGES[0], None
        done, last = reembed_batch(
            state.stage, after=state.after and str(state.after), size=batch)
        if last is None:
            following = STAGES.index(state.stage) + 1
            if following == len(STAGES):
                state.model, state.target, state.stage = current, "", ""
            else:
                state.stage = STAGES[following]
            state.after = None
        else:
            state.after = last
        state.save()
        return Step(done, more=bool(state.target))
