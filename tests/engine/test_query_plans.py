"""The hot queries use their indexes: EXPLAIN of the SQL the services really send.

A memory of a few thousand facts (bulk-loaded in SQL, random unit vectors) is
enough for the planner to prefer each index over a scan, so a regression that
makes a query unindexable fails here. docs/benchmarks.md has the plans at 100k,
including the trigram lookup of similar names, which only pays off at that size.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from memories.models import Fact
from memories.search import candidates, storing, vector_params
from memories.search.window import Window
from tests.factories import Engine, fact, person

FACTS = 4000


@pytest.fixture
def graph(engine) -> Engine:
    engine.write(entities=[person("Ann"), person("Ben"), {"name": "outage", "type": "event"}],
                 assume_new=True, facts=[
        fact("Ann", "Ben", "knows", "Ann knows Ben from the climbing gym"),
        fact("outage", "Ann", "paged", "The outage was caused by Ann's deploy",
             causal_hint="caused_by"),
    ])
    Engine.index()
    with connection.cursor() as cursor:
        # Setup, not a query under test: on a loaded CI box the bulk insert ran past the
        # server's statement timeout. The tests' own statements keep the timeout.
        cursor.execute("SET LOCAL statement_timeout = 0")
        # Many more entities and facts in the same memory, written as the engine would.
        cursor.execute("""
            INSERT INTO memories_entity (id, memory_id, partition, name, normalized_name,
                                         initials, type, created_at)
            SELECT gen_random_uuid(), e.memory_id, e.partition, 'entity ' || g,
                   'entity ' || g, 'e' || g, 'thing', now()
            FROM generate_series(1, %s) g, (SELECT memory_id, partition FROM memories_entity
                                           LIMIT 1) e
        """, [FACTS])
        # The HNSW index built once over the filled table, as pgvector advises for a bulk
        # load, rather than grown one insert at a time (which took most of this set-up).
        cursor.execute("SELECT pg_get_indexdef('fact_embedding'::regclass)")
        [fact_embedding] = cursor.fetchone()
        cursor.execute("DROP INDEX fact_embedding")
        cursor.execute("""
            INSERT INTO memories_fact (id, memory_id, partition, source_id, target_id,
                relation_type, fact, confidence, causal_hint, session_id, project, episode_id,
                position, written_by_tool, created_at, search_text, embedding)
            SELECT gen_random_uuid(), f.memory_id, f.partition, n.id, f.target_id,
                   'r' || n.name, 'filler sentence number ' || n.name || ' about topic '
                   || (random() * 500)::int, 'extracted',
                   CASE WHEN random() < 0.05 THEN 'led_to' END, 's', '', f.episode_id, 0,
                   'bench', now() - random() * interval '30 days',
                   'filler sentence number ' || n.name, v.embedding
            FROM memories_entity n
            CROSS JOIN (SELECT * FROM memories_fact LIMIT 1) f
            CROSS JOIN LATERAL (SELECT l2_normalize(ARRAY(
                SELECT random() - 0.5 + 0 * length(n.name) FROM generate_series(1, 384)
            )::halfvec) AS embedding) v
            WHERE n.type = 'thing'
        """)
        # Its foreign keys are checked at commit: now, so that the index may be built; then
        # deferred again, as Django declares them (the engine's writes rely on it).
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(fact_embedding)
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        # Counted in the word statistics, as the indexer counts what it embeds: the query
        # sees a memory of 4,002 indexed facts, past EXACT_SEARCH_MAX, so it takes the
        # indexes (a smaller one is read row by row) and weighs the filler's words.
        cursor.execute("SELECT id FROM memories_fact WHERE written_by_tool = 'bench'")
        storing.count_terms(cursor, [row[0] for row in cursor.fetchall()])
        cursor.execute("ANALYZE memories_fact; ANALYZE memories_entity")
        cursor.execute(f"SET LOCAL statement_timeout = {int(settings.STATEMENT_TIMEOUT_MS)}")
    return engine


def plan_of(run, marker: str, *, undo: bool = True) -> str:
    """The plan of the statement `run` sent that holds `marker`, explained as that request
    saw it. Each request is its own transaction in production, so the planner settings a
    request sets with SET LOCAL (the word search's cpu_operator_cost) end with it; here
    the savepoint's rollback ends them, or they would price the next check's plan.
    `undo=False` keeps what the request did (and its settings) for the test to inspect."""
    savepoint = transaction.savepoint()
    try:
        with CaptureQueriesContext(connection) as captured:
            run()
        sql = next(q["sql"] for q in captured.captured_queries if marker in q["sql"])
        with connection.cursor() as cursor:
            # A search sends its SET LOCALs in the statement's round trip: set them, then
            # explain the statement under them.
            while sql.startswith("SET LOCAL "):
                setting, sql = sql.split("; ", 1)
                cursor.execute(setting)
            cursor.execute("EXPLAIN " + sql)
            return "\n".join(row[0] for row in cursor.fetchall())
    finally:
        if undo:
            transaction.savepoint_rollback(savepoint)
        else:
            transaction.savepoint_commit(savepoint)


def test_hot_queries_use_their_indexes(graph, monkeypatch):

    monkeypatch.setattr(candidates, "EXACT_SEARCH_MAX", 1)  # the plans of a big memory
    checks = [
        ("vector candidates", lambda: graph.query("who climbs"), "embedding <=>",
         "fact_embedding"),
        ("text candidates", lambda: graph.query("climbing gym"), "WITH candidates AS",
         "fact_search_vector"),
        ("digest", lambda: graph.query(digest=True), "ORDER BY \"memories_fact\".\"created_at\"",
         "fact_live_recent"),
        ("causal walk", lambda: graph.trace("outage", direction="upstream"), "causal_hint",
         "fact_causal_"),
        ("live edges", lambda: graph.write(entities=[person("Ann"), person("Ben")], facts=[
            fact("Ann", "Ben", "knows", "Ann knows Ben from work")]), "relation_type = k.r",
         "one_live_edge_per_key|memories_fact_source_id"),
    ]
    failures = []
    for name, run, marker, index in checks:
        plan = plan_of(run, marker)
        if not any(option in plan for option in index.split("|")):
            failures.append(f"{name} does not use {index}:\n{plan}")
    assert not failures, "\n\n".join(failures)


def test_a_table_filled_before_its_first_analyze_keeps_the_live_edge_probe(engine):
    """Postgres without statistics guesses every equality at 0.5%: with 12k facts it
    probed live edges through fact_live_recent, reading the memory's whole live set for
    every key. The write path analyzes such a table before it plans."""
    from memories.search import planner_stats

    engine.write(entities=[person("Ann"), person("Ben")], assume_new=True,
                 facts=[fact("Ann", "Ben", "knows", "Ann knows Ben")])
    columns = [f.column for f in Fact._meta.concrete_fields]
    with connection.cursor() as cursor:
        # A bulk import that outran autovacuum: many facts, no statistics at all.
        cursor.execute("""
            INSERT INTO memories_fact (id, memory_id, partition, source_id, target_id,
                relation_type, fact, confidence, session_id, project, episode_id, position,
                written_by_tool, created_at, search_text)
            SELECT gen_random_uuid(), f.memory_id, f.partition, f.source_id, f.target_id,
                   'bulk ' || g, 'bulk fact ' || g, 'extracted', 's', '', f.episode_id, 0,
                   'bench', now(), 'bulk fact ' || g
            FROM generate_series(1, 12000) g, (SELECT * FROM memories_fact LIMIT 1) f
        """)
        cursor.execute("SELECT pg_clear_relation_stats(current_schema(), 'memories_fact')")
        for column in columns:
            cursor.execute("SELECT pg_clear_attribute_stats(current_schema(), 'memories_fact', "
                           "%s, false)", [column])
    planner_stats.forget()

    plan = plan_of(lambda: engine.write(entities=[person("Ann"), person("Ben")], facts=[
        fact("Ann", "Ben", "met", "Ann met Ben at the crag")]), "relation_type = k.r",
        undo=False)

    assert "one_live_edge_per_key" in plan, plan
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() "
                       "AND tablename = 'memories_fact'")
        assert cursor.fetchone()[0] == len(columns)


def test_the_indexer_queues_are_read_through_their_index_however_long(engine, charlie):
    """Another account's bulk import of 12k waiting facts: choosing the queues and
    claiming shares touch a few index entries, and a query's own embedding and pending
    count in a small memory never read the other's backlog."""
    from memories.search import freshness, indexing

    engine.write(entities=[person("Ann"), person("Ben")], assume_new=True,
                 facts=[fact("Ann", "Ben", "knows", "Ann knows Ben")])
    Engine(charlie.principal).write(entities=[person("Cy")], assume_new=True,
                                    facts=[fact("Cy", "Cy", "is", "Cy waits too")])
    with connection.cursor() as cursor:
        cursor.execute("""
            INSERT INTO memories_fact (id, memory_id, partition, source_id, target_id,
                relation_type, fact, confidence, session_id, project, episode_id, position,
                written_by_tool, created_at, search_text)
            SELECT gen_random_uuid(), f.memory_id, f.partition, f.source_id, f.target_id,
                   'bulk ' || g, 'bulk fact ' || g, 'extracted', 's', '', f.episode_id, g,
                   'bench', now(), 'bulk fact ' || g
            FROM generate_series(1, 12000) g,
                 (SELECT * FROM memories_fact WHERE relation_type = 'is') f
        """)
        cursor.execute("ANALYZE memories_fact")
        cursor.execute(
            "SELECT memory_id, partition FROM memories_fact WHERE relation_type = 'knows'")
        memory_id, partition = cursor.fetchone()
        cursor.execute("SELECT memory_id FROM memories_fact WHERE relation_type = 'is'")
        importer = cursor.fetchone()[0]
        plans = {}
        for name, sql, params in [
            ("queues", indexing.WAITING_QUEUES, [64]),
            ("claim", indexing.CLAIM_SHARES, [[importer, memory_id], [partition] * 2, 16]),
            ("pending", "SELECT count(*) FROM memories_fact WHERE memory_id = %s "
                        "AND partition = %s AND embedding IS NULL", [memory_id, partition]),
        ]:
            cursor.execute("EXPLAIN " + sql, params)
            plans[name] = "\n".join(row[0] for row in cursor.fetchall())
        # A query rescores its own candidates and keeps their vectors, by primary key.
        cursor.execute("SELECT array_agg(id) FROM (SELECT id FROM memories_fact LIMIT 100) f")
        ranked = cursor.fetchone()[0]
        vector = vector_params.halfvec(np.ones(384, dtype=np.float32))
        by_id = {}
        for name, sql, params in [
            ("best waiting", freshness.BEST_WAITING, [ranked, ranked, 8]),
            ("cosines", freshness.MODEL_COSINES, [vector, ranked]),
            ("keep", freshness.STORE_PROVISIONAL, [ranked[:4], [vector] * 4, ranked[:4]]),
        ]:
            cursor.execute("EXPLAIN " + sql, params)
            by_id[name] = "\n".join(row[0] for row in cursor.fetchall())
    failures = {name: plan for name, plan in plans.items()
                if "fact_index_queue" not in plan or "Seq Scan on memories_fact" in plan}
    failures |= {name: plan for name, plan in by_id.items()
                 if "memories_fact_pkey" not in plan or "Seq Scan on memories_fact" in plan}
    assert not failures, failures


def _uses_hnsw(run) -> bool:
    return "fact_embedding" in plan_of(run, "embedding <=>")


def test_a_small_partition_is_searched_exactly_and_a_large_one_through_hnsw(graph,
                                                                            monkeypatch):

    assert _uses_hnsw(lambda: graph.query("who climbs"))
    assert "fact_search_vector" in plan_of(lambda: graph.query("climbing gym"),
                                           "WITH candidates AS")
    # Its 4,002 facts as a small partition: every vector read, and the words matched row
    # by row, not through the word index (whose posting lists hold every memory's facts).
    monkeypatch.setattr(candidates, "EXACT_SEARCH_MAX", 10_000)
    assert not _uses_hnsw(lambda: graph.query("who climbs"))
    assert "fact_search_vector" not in plan_of(lambda: graph.query("climbing gym"),
                                               "WITH mine AS")
    # A read of the past sees replaced versions too, which no partition index holds: HNSW
    # whatever the size.
    monkeypatch.setattr(candidates, "EXACT_SEARCH_MAX", 10**9)
    assert _uses_hnsw(lambda: graph.query("who climbs", as_of="2999-01-01T00:00:00Z"))


def test_the_exact_branch_returns_the_true_nearest_facts(graph):
    from memories.models import Fact
    from memories.search import embeddings

    memory_id, partition = Fact.objects.values_list("memory_id", "partition").first()
    query = embeddings.get_embedder().embed(["who climbs"])[0]
    found = candidates.vector_candidates(memory_id, partition, query, 50, Window(),
                                     exact=True)
    literal = "[" + ",".join(map(str, query.tolist())) + "]"
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM memories_fact WHERE memory_id = %s AND partition = %s "
                       "AND superseded_at IS NULL AND embedding IS NOT NULL "
                       "ORDER BY (embedding <=> %s::halfvec) + 0 LIMIT 50",
                       [memory_id, partition, literal])
        nearest = [row[0] for row in cursor.fetchall()]
    assert [c.fact_id for c in found] == nearest



def test_ef_search_grows_with_the_fact_table_past_a_million():
    assert candidates.ef_search(50) == candidates.ef_search(50, 1_000_000) == 128
    assert candidates.ef_search(50, 2_000_000) == 256
    assert candidates.ef_search(50, 3_000_000) == 384
    assert candidates.ef_search(50, 50_000_000) == candidates.HNSW_EF_SEARCH_MAX
    assert candidates.ef_search(300) == 300  # a pool bigger than ef_search still fits


def test_query_memory_searches_with_the_ef_search_of_the_tables_size(graph, monkeypatch):
    monkeypatch.setattr(candidates, "EXACT_SEARCH_MAX", 1)  # through the graph
    with CaptureQueriesContext(connection) as captured:
        graph.query("who climbs")
    [search] = [q["sql"] for q in captured.captured_queries if "embedding <=>" in q["sql"]]
    assert search.startswith("SET LOCAL hnsw.ef_search = 128;")
    # The fixture's table (4,002 facts, analyzed) as if the million were 2,000 facts: twice
    # past it, twice the ef_search.
    monkeypatch.setattr(candidates, "HNSW_EF_SEARCH_FACTS", 2000)
    with CaptureQueriesContext(connection) as captured:
        graph.query("who climbs")
    [search] = [q["sql"] for q in captured.captured_queries if "embedding <=>" in q["sql"]]
    assert search.startswith("SET LOCAL hnsw.ef_search = 256;")
