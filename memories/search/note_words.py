"""Near words: what lets memory_search find the note a paraphrase is about.

A paraphrased question shares no word with its note, so full text cannot see the note,
and the note's one embedding blurs the point among its sentences. Yet most of the
question's words have a near neighbour among the note's: "levy" and "taxed", "reject"
and "refused", "state" and "California". So each content word of the question is matched
to the nearest word of each candidate note, by the embeddings of the two words alone, and
the note's word match is the mean, over the question's words, of that nearest
similarity where it reaches a threshold (an exact word counts 1). It is the coverage that
full text measures, with near words counted for their nearness.

Words are the 'simple' parser's tokens, unstemmed (the model embeds real words), less the
stop words of the full-text configuration. The indexer lists a note's words (Note.words)
when it embeds the note, and keeps their vectors per memory and partition (NoteWord),
pruned to the words the notes still hold.
"""

from __future__ import annotations

import uuid
from typing import NamedTuple

from django.db import connection

from memories.models import TEXT_SEARCH_CONFIG
from memories.search.vector_params import halfvec

# The words of {text}, as rows t(word).
_WORDS_OF = "unnest(tsvector_to_array(to_tsvector('simple', {text}))) AS t(word)"
# Which of them carry meaning: not a stop word, not a number or a hash, not a blob.
_CONTENT = ("length(t.word) BETWEEN 3 AND 64 AND t.word ~ '^[[:alpha:]]' "
            f"AND to_tsvector('{TEXT_SEARCH_CONFIG}', t.word) <> ''::tsvector")


class WordMatch(NamedTuple):
    """For one note, each question word's similarity to the note's nearest word."""

    note_id: uuid.UUID
    nearest: tuple[float, ...]

    def coverage(self, threshold: float) -> float:
        return sum(s for s in self.nearest if s >= threshold) / len(self.nearest)


def index_words(cursor, note_ids: list, embedder) -> int:
    """Lists these notes' words and stores the vectors their partitions do not hold yet."""
    cursor.execute(
        "UPDATE memories_note n SET words = ARRAY(SELECT DISTINCT t.word FROM "
        f"{_WORDS_OF.format(text='n.search_text')} WHERE {_CONTENT} ORDER BY 1) "
        "WHERE n.id = ANY(%s::uuid[])", [note_ids])
    cursor.execute(
        "SELECT DISTINCT n.memory_id, n.partition, t.word FROM memories_note n "
        "CROSS JOIN LATERAL unnest(n.words) AS t(word) "
        "WHERE n.id = ANY(%s::uuid[]) AND NOT EXISTS (SELECT 1 FROM memories_noteword w "
        "WHERE w.memory_id = n.memory_id AND w.partition = n.partition AND w.word = t.word) "
        "ORDER BY 1, 2, 3", [note_ids])
    rows = cursor.fetchall()
    if not rows:
        return 0
    words = sorted({word for _, _, word in rows})
    vector_of = dict(zip(words, (halfvec(v) for v in embedder.embed(words)), strict=True))
    cursor.execute(
        "INSERT INTO memories_noteword (memory_id, partition, word, embedding) "
        "SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::halfvec[]) "
        "ON CONFLICT DO NOTHING",
        [[m for m, _, _ in rows], [p for _, p, _ in rows], [w for _, _, w in rows],
         [vector_of[w] for _, _, w in rows]])
    return len(rows)


def prune_words(cursor, memory_id: int, partition: str) -> None:
    """Drops the partition's words that no note holds any more (after an edit or a forget).

    A note saved but not indexed yet lists no words; the indexer adds back any of its
    words pruned meanwhile.
    """
    cursor.execute(
        # NOT IN a subquery: hashed once, rather than every note's words read per word.
        "DELETE FROM memories_noteword WHERE memory_id = %s AND partition = %s "
        "AND word NOT IN (SELECT unnest(words) FROM memories_note "
        "WHERE memory_id = %s AND partition = %s)",
        [memory_id, partition, memory_id, partition])


def word_matches(memory_id: int, partition: str, query: str, note_ids: list,
                 embedder) -> list[WordMatch]:
    """The word match of each of these notes (those with a near word) to the query."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT t.word FROM {_WORDS_OF.format(text='%s')} "
                       f"WHERE {_CONTENT} ORDER BY 1", [query])
        words = [row[0] for row in cursor.fetchall()]
        if not words or not note_ids:
            return []
        vectors = [halfvec(v) for v in embedder.embed(words)]
        cursor.execute("SELECT id, words FROM memories_note WHERE id = ANY(%s::uuid[]) "
                       "AND memory_id = %s AND partition = %s AND words IS NOT NULL",
                       [note_ids, memory_id, partition])
        held = cursor.fetchall()
        # Each distinct word once against all of the question's words.
        cursor.execute(
            "SELECT w.word, array_agg(1 - (w.embedding <=> q.v) ORDER BY q.i) "
            "FROM memories_noteword w CROSS JOIN unnest(%s::halfvec[]) WITH ORDINALITY "
            "AS q(v, i) WHERE w.memory_id = %s AND w.partition = %s AND w.word = ANY(%s) "
            "GROUP BY w.word",
            [vectors, memory_id, partition, sorted({w for _, note in held for w in note})])
        similarity = dict(cursor.fetchall())
    nearest = {}
    for note_id, note in held:
        rows = [similarity[word] for word in note if word in similarity]
        if rows:
            nearest[note_id] = [float(max(column)) for column in zip(*rows, strict=True)]
    return [WordMatch(note_id, tuple(values)) for note_id, values in nearest.items()]


