"""Facts are embedded fact first, their episode context after (memories/search/storing.py),
and the layout is part of the model fingerprint (reembedding.model_fingerprint).

A box that already holds vectors keeps the fingerprint migration 0013 recorded, so the
re-embedding walk makes them again in the new layout. A box with none yet (a fresh
install) records the new fingerprint now: there is nothing to walk.
"""

import hashlib

from django.db import migrations

# reembedding.TEXT_LAYOUT as this migration shipped (tests/engine/test_migrations.py holds
# this fingerprint equal to the product's).
TEXT_LAYOUT = "fact, then up to ECHO_MEMORY_EMBED_CONTEXT earlier facts of its episode"


def fingerprint() -> str | None:
    from memories.search.embeddings import MODEL_DIR

    digest = hashlib.sha256(TEXT_LAYOUT.encode())
    try:
        for name in ("config.json", "tokenizer.json", "model.safetensors"):
            with (MODEL_DIR / name).open("rb") as model_file:
                digest.update(hashlib.file_digest(model_file, "sha256").digest())
    except OSError:  # no model files here: the first re-embedding step records it
        return None
    return digest.hexdigest()


def record_the_layout_where_nothing_is_embedded(apps, schema_editor):
    state = apps.get_model("memories", "EmbeddingModelState")
    fact = apps.get_model("memories", "Fact")
    current = fingerprint()
    if current is None or fact.objects.filter(embedding__isnull=False).exists():
        return
    state.objects.filter(pk=1, target="").update(model=current)


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0020_imported_records'),
    ]

    operations = [
        migrations.RunPython(record_the_layout_where_nothing_is_embedded,
                             migrations.RunPython.noop),
    ]
