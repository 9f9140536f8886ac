"""Upgrading a box keeps what it recalls: the move of fact vectors to half precision."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memories.graph.selectors import question_vector
from memories.search.embeddings import get_embedder
from tests.factories import Engine, fact, person

BEFORE = ("memories", "0006_indexer_queue_in_order")
HALF_PRECISION = ("memories", "0007_half_precision_fact_embeddings")


def migrate(target: tuple[str, str]) -> None:
    MigrationExecutor(connection).migrate([target])


def column_type() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                       "WHERE attrelid = 'memories_fact'::regclass AND attname = 'embedding'")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_full_precision_vectors_of_an_older_box_are_kept_and_found(engine: Engine):
    text = "Alice spent her spring holiday hiking near Kyoto"
    engine.write(entities=[person("Alice"), {"name": "Kyoto", "type": "city"}],
                 assume_new=True, facts=[fact("Alice", "Kyoto", "travelled_to", text)])
    Engine.index()
    try:
        migrate(BEFORE)
        assert column_type() == "vector(384)"
        # What an older box stored: the model's float32 vector of the indexed text.
        with connection.cursor() as cursor:
            cursor.execute("SELECT search_text FROM memories_fact")
            (search_text,) = cursor.fetchone()
            exact = get_embedder().embed([search_text])[0]
            cursor.execute("UPDATE memories_fact SET embedding = %s::vector",
                           ["[" + ",".join(map(str, exact.tolist())) + "]"])

        migrate(HALF_PRECISION)

        assert column_type() == "halfvec(384)"
        with connection.cursor() as cursor:
            cursor.execute("SELECT embedding::text FROM memories_fact")
            stored = np.array(cursor.fetchone()[0].strip("[]").split(","), dtype=np.float32)
        assert np.abs(stored - exact).max() < 1e-3
        # Searched by today's code, once the later migrations have run too.
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        # (A question naming no entity: one that does is searched with a blended vector.)
        found = engine.query("who went hiking in the spring?", top_k=1)["facts"]
        assert [f["fact"] for f in found] == [text]
        assert "vector" in found[0]["matched"]
        query = question_vector("who went hiking in the spring?")  # as query_memory does
        assert found[0]["score"] == pytest.approx(float(query @ exact), abs=1e-3)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def test_the_layout_migration_records_the_fingerprint_the_product_computes():
    import importlib

    from memories.search import reembedding

    shipped = importlib.import_module("memories.migrations.0021_fact_first_embedding_layout")
    assert shipped.TEXT_LAYOUT == reembedding.TEXT_LAYOUT
    assert shipped.fingerprint() == reembedding.model_fingerprint()


@pytest.mark.django_db(transaction=True)
def test_the_context_words_migration_fills_what_a_write_stores(engine: Engine):
    """An older box's facts get the context words a write stores now (memories/graph's
    write and the migration's frozen statement agree)."""
    talk = [person("Mel"), person("Caro")]
    for session, turns in (("s1", ["the kiln broke", "we fire on Sunday", "bring the vases"]),
                           ("s2", ["glazing takes patience", "paint them in June"])):
        engine.write(session_id=session, entities=talk, assume_new=session == "s1", facts=[
            fact("Mel", "Caro", f"said {session} {n}", f"Mel: {text}")
            for n, text in enumerate(turns)])

    def context_words() -> dict:
        with connection.cursor() as cursor:
            cursor.execute("SELECT id, context_vector::text FROM memories_fact")
            return dict(cursor.fetchall())

    written = context_words()
    assert sum(1 for words in written.values() if words) == 3
    try:
        migrate(("memories", "0021_fact_first_embedding_layout"))
        migrate(("memories", "0022_fact_context_words"))
        assert context_words() == written
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
