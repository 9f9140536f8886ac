"""What the indexer stores for the rows it claims: vectors (a fact's with the facts before it
in its episode) and the word statistics BM25 needs. Below the indexer (indexing.py), the
read-your-writes settling (freshness.py) and re-embedding (reembedding.py), which all
store alike."""

from __future__ import annotations

import json

from django.conf import settings

from memories.models import TEXT_SEARCH_CONFIG
from memories.search import first_pass, note_words, query_turns, vector_params
from memories.search.embeddings import get_embedder
from memories.search.note_text import note_head

# A fact's context: the search texts of the facts stored at up to _context_facts()
# positions before it in its episode, in order, joined by spaces. The indexer embeds a
# fact with it (with_context), and the word search counts its words at a lower weight
# (Fact.context_vector). Read from the table here; the write, which holds the episode's
# facts, builds the same with `contexts`.
_CONTEXT_OF = ("SELECT f.id, string_agg(p.search_text, ' ' ORDER BY p.position) AS context "
               "FROM memories_fact f JOIN memories_fact p ON p.episode_id = f.episode_id "
               "AND p.position BETWEEN f.position - %(context)s AND f.position - 1 "
               "WHERE {where} GROUP BY f.id")
# How a context's words are stored: stemmed as a fact's own words are (search_vector), and
# without positions (the search matches words, never phrases). At most two facts of at
# most limits.FACT_CHARS each: far below what a tsvector holds (1 MB).
CONTEXT_VECTOR = f"strip(to_tsvector('{TEXT_SEARCH_CONFIG}', {{}}))"


def _context_facts() -> int:
    """How many facts before it in the same episode a fact is embedded with.

    A reply ("Yes, last week!") means little without the turn it answers: two facts of
    context lifted LoCoMo recall@10 from 0.701 to 0.767 (docs/benchmarks.md). Episodes
    of unrelated, self-contained facts may prefer ECHO_MEMORY_EMBED_CONTEXT=0.
    """
    return settings.ECHO_MEMORY_EMBED_CONTEXT


def _embed_and_store(cursor, rows: list[tuple], *, give_way: bool = False) -> None:
    """Vectors (with context) and word statistics for claimed (id, search_text, episode_id,
    position) rows: what the indexer stores. `give_way`: embed in turns that let this
    process's queries go first (the indexer thread's, query_turns.py)."""
    texts = _texts_with_context(cursor, rows)
    embedder = get_embedder()
    vectors = (query_turns.in_turns(texts, lambda turn: embedder.embed(turn, bulk=True))
               if give_way else embedder.embed(texts))
    ids = [row[0] for row in rows]
    store_embeddings(cursor, "memories_fact", ids, vectors)
    count_terms(cursor, ids)


def _note_vectors(rows: list[tuple]):
    """Vectors of note rows that begin (id, title, category, what, why, impact, tags)."""
    return get_embedder().embed([
        note_head(title=title, category=category, what=what, why=why, impact=impact,
                  tags=tags if isinstance(tags, list) else json.loads(tags))
        for _, title, category, what, why, impact, tags, *_ in rows])


# What embedding a note reads: _note_vectors' columns, then where its words are kept.
NOTE_COLUMNS = "id, title, category, what, why, impact, tags, memory_id, partition"


def _embed_and_store_notes(cursor, rows: list[tuple]) -> None:
    """Vectors and words for claimed note rows (NOTE_COLUMNS): what the indexer and
    `settle_notes` both store."""
    ids = [row[0] for row in rows]
    store_embeddings(cursor, "memories_note", ids, _note_vectors(rows))
    note_words.index_words(cursor, ids, get_embedder())
    # An edit may have dropped words that no other note holds.
    for memory_id, partition in sorted({(row[7], row[8]) for row in rows}):
        note_words.prune_words(cursor, memory_id, partition)


def store_embeddings(cursor, table: str, ids: list, vectors) -> None:
    """One UPDATE for a batch; `table` is one of ours, never input. A fact's first-pass
    vector goes as its settled one arrives."""
    clear = (", first_pass_embedding = NULL, first_pass_from_model = false"
             if table == "memories_fact" else "")
    cursor.execute(
        f"UPDATE {table} f SET embedding = v.embedding{clear} "
        "FROM unnest(%s::uuid[], %s::halfvec[]) AS v(id, embedding) WHERE f.id = v.id",
        [ids, [vector_params.halfvec(vector) for vector in vectors]],
    )


def count_terms(cursor, ids: list) -> None:
    """Adds these facts to the BM25 word statistics of their partitions.

    Runs once per fact, when it is indexed; in term order so concurrent indexers lock alike.
    """
    cursor.execute(
        "INSERT INTO memories_termstat (memory_id, partition, term, df) "
        "SELECT memory_id, partition, lexeme, count(*) FROM memories_fact, "
        "unnest(tsvector_to_array(search_vector)) AS lexeme WHERE id = ANY(%s) "
        "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3 "
        "ON CONFLICT (memory_id, partition, term) "
        "DO UPDATE SET df = memories_termstat.df + EXCLUDED.df", [ids],
    )
    cursor.execute(
        "INSERT INTO memories_corpusstat (memory_id, partition, documents, tokens) "
        "SELECT memory_id, partition, count(*), sum(length(search_vector)) "
        "FROM memories_fact WHERE id = ANY(%s) GROUP BY 1, 2 ORDER BY 1, 2 "
        "ON CONFLICT (memory_id, partition) DO UPDATE SET "
        "documents = memories_corpusstat.documents + EXCLUDED.documents, "
        "tokens = memories_corpusstat.tokens + EXCLUDED.tokens", [ids],
    )


def uncount_terms(cursor, ids: list) -> None:
    """Takes these facts, about to be deleted, out of the word statistics, if they were
    counted (count_terms runs when a fact is indexed, so: those with an embedding); a word
    no remaining fact uses leaves the table, so forgotten words are not kept as statistics.

    Word rows are locked in term order, as count_terms takes them, so a concurrent indexer
    and a forget wait for each other instead of deadlocking.
    """
    cursor.execute(
        "WITH gone AS (SELECT memory_id, partition, lexeme AS term, count(*) AS n "
        "FROM memories_fact, unnest(tsvector_to_array(search_vector)) AS lexeme "
        "WHERE id = ANY(%s) AND embedding IS NOT NULL GROUP BY 1, 2, 3), "
        "locked AS (SELECT t.id, gone.n FROM memories_termstat t JOIN gone "
        "USING (memory_id, partition, term) ORDER BY t.memory_id, t.partition, t.term "
        "FOR UPDATE OF t) "
        "UPDATE memories_termstat t SET df = greatest(t.df - locked.n, 0) FROM locked "
        "WHERE t.id = locked.id RETURNING t.id, t.df", [ids],
    )
    unused = [row_id for row_id, df in cursor.fetchall() if df <= 0]
    if unused:
        cursor.execute("DELETE FROM memories_termstat WHERE id = ANY(%s)", [unused])
    cursor.execute(
        "UPDATE memories_corpusstat c SET documents = greatest(c.documents - g.documents, 0), "
        "tokens = greatest(c.tokens - g.tokens, 0) FROM (SELECT memory_id, partition, "
        "count(*) AS documents, "
        "sum(length(search_vector)) AS tokens FROM memories_fact "
        "WHERE id = ANY(%s) AND embedding IS NOT NULL GROUP BY 1, 2) g "
        "WHERE c.memory_id = g.memory_id AND c.partition = g.partition", [ids],
    )


def _texts_with_context(cursor, rows: list[tuple]) -> list[str]:
    context_facts = _context_facts()
    if not context_facts:
        return [row[1] for row in rows]
    cursor.execute(_CONTEXT_OF.format(where="f.id = ANY(%(ids)s)"),
                   {"context": context_facts, "ids": [row[0] for row in rows]})
    context = dict(cursor.fetchall())
    return [with_context(row[1], context.get(row[0])) for row in rows]


def contexts(texts: list[str], positions: list[int]) -> list[str | None]:
    """The context of each of one episode's facts as stored (texts and positions of every
    fact the episode stores): what _CONTEXT_OF reads once they are in the table."""
    at = dict(zip(positions, texts, strict=True))
    out = []
    for position in positions:
        before = [at[p] for p in range(position - _context_facts(), position) if p in at]
        out.append(" ".join(before) or None)
    return out


def fill_context_vectors(cursor, episode_ids: list) -> None:
    """Stores the context words of every fact of these episodes from the table: for facts
    written without them (an import, whose batches may split an episode) and for those
    left after a forget (a forgotten fact's words must not stay findable beside it)."""
    if not episode_ids:
        return
    context = _context_facts()
    cursor.execute(
        "UPDATE memories_fact t SET context_vector = c.words FROM (SELECT e.id, "
        f"{CONTEXT_VECTOR.format('c.context')} AS words FROM memories_fact e "
        f"LEFT JOIN ({_CONTEXT_OF.format(where='f.episode_id = ANY(%(episodes)s)')}) c "
        "ON c.id = e.id WHERE e.episode_id = ANY(%(episodes)s)) c "
        "WHERE t.id = c.id AND t.context_vector IS DISTINCT FROM c.words",
        {"context": context, "episodes": list(episode_ids)})


def with_context(text: str, context: str | None) -> str:
    """What the model embeds for a fact: its text, then the facts before it. Fact first:
    the model reads at most 256 wordpieces, and two long turns before a reply used to push
    the reply's own words past the cut. Vectors alone, recall@10: LoCoMo 0.576 to 0.627,
    runbooks 0.705 to 0.774 (docs/benchmarks.md, "Ranking with the graph")."""
    return f"{text} {context}" if context else text


def followers(cursor, fact_ids: list) -> list:
    """The facts embedded with one of these as context (up to _context_facts() positions
    after it in its episode), these excluded: what forgetting them must embed again."""
    if not fact_ids or not _context_facts():
        return []
    cursor.execute(
        "SELECT DISTINCT f.id FROM memories_fact gone JOIN memories_fact f "
        "ON f.episode_id = gone.episode_id "
        "AND f.position BETWEEN gone.position + 1 AND gone.position + %(context)s "
        "WHERE gone.id = ANY(%(gone)s) AND NOT f.id = ANY(%(gone)s)",
        {"context": _context_facts(), "gone": list(fact_ids)})
    return [row[0] for row in cursor.fetchall()]


def embed_again(cursor, ids: list) -> None:
    """Sends these facts back to the indexer, as if just written: out of the word
    statistics (count_terms adds them again when they are indexed), the settled vector
    cleared and the first-pass one made from the context the table holds now. A vector is
    not text, but it was made from the text beside it: one made with a forgotten fact would
    keep that fact findable by meaning."""
    if not ids:
        return
    uncount_terms(cursor, ids)
    cursor.execute(
        "SELECT e.id, e.search_text, e.position, e.episode_id FROM memories_fact e "
        "WHERE e.episode_id IN (SELECT episode_id FROM memories_fact WHERE id = ANY(%s)) "
        "ORDER BY e.episode_id, e.position", [list(ids)])
    episodes: dict = {}
    for fact_id, text, position, episode_id in cursor.fetchall():
        episodes.setdefault(episode_id, []).append((fact_id, text, position))
    wanted = set(ids)
    chosen, vectors = [], []
    for rows in episodes.values():
        fresh = first_pass.halfvecs([text for _, text, _ in rows], [p for _, _, p in rows])
        for (fact_id, _, _), vector in zip(rows, fresh, strict=True):
            if fact_id in wanted:
                chosen.append(fact_id)
                vectors.append(vector)
    cursor.execute(
        "UPDATE memories_fact f SET embedding = NULL, first_pass_embedding = v.vector, "
        "first_pass_from_model = false "
        "FROM unnest(%s::uuid[], %s::halfvec[]) AS v(id, vector) WHERE f.id = v.id",
        [chosen, vectors])
