"""Embedding in Celery workers: separate `echo-memory worker` processes on the fleet's
database and Redis, and what survives a worker killed in the middle of a batch."""

from __future__ import annotations

import json
import secrets
import signal
import time

import psutil
import redis

from tests.fleet.conftest import Fleet, Worker
from tests.harness import free_port

EMBED_TASK = "memories.tasks.embed_facts"
# Kombu's Redis transport keeps each delivered, unacknowledged message here until its ack.
UNACKED, UNACKED_INDEX = "unacked", "unacked_index"


def write_facts(fleet: Fleet, web, count: int) -> tuple[list[str], list[str]]:
    """One episode of `count` facts through the web process; their ids and texts."""
    tag = secrets.token_hex(3)
    texts = [f"Courier {tag} number {i} delivered parcel {i} to the harbour office"
             for i in range(count)]
    entities = [{"name": f"Courier {tag} {i}", "type": "person"} for i in range(count)]
    entities.append({"name": f"Harbour office {tag}", "type": "place"})
    facts = [{"source": f"Courier {tag} {i}", "target": f"Harbour office {tag}",
              "relation_type": "delivered_to", "fact": text, "confidence": "extracted"}
             for i, text in enumerate(texts)]
    with fleet.tools(web) as tools:
        written = tools.post("/write_episode", json={
            "scope": "shared", "assume_new": True, "entities": entities, "facts": facts})
    assert written.status_code == 200, written.text
    return [edge["fact_id"] for edge in written.json()["edges_created"]], texts


def embedded(fleet: Fleet, ids: list[str]) -> int:
    with fleet.sql() as db:
        return db.execute("SELECT count(*) FROM memories_fact WHERE id = ANY(%s::uuid[]) "
                          "AND embedding IS NOT NULL", [ids]).fetchone()[0]


def counted_documents(fleet: Fleet, fact_id: str) -> int:
    """How many facts the fact's partition has in its word statistics: the indexer adds
    each fact once when it embeds it, so a fact embedded twice would count twice."""
    with fleet.sql() as db:
        row = db.execute(
            "SELECT coalesce(c.documents, 0) FROM memories_fact f LEFT JOIN memories_corpusstat "
            "c USING (memory_id, partition) WHERE f.id = %s", [fact_id]).fetchone()
        return row[0]


def wait_for(condition, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not true after {timeout}s: {what}"
        time.sleep(0.2)


def embed_lines(worker: Worker) -> list[dict]:
    return [line for line in worker.lines() if line.get("task") == EMBED_TASK
            and line.get("message", "").startswith("embedded ")]


def assert_clean_json_log(worker: Worker, *secrets_: str) -> None:
    """Every line the worker wrote is one JSON object, and none holds a key or fact text."""
    output = worker.server.output()
    for line in output.splitlines():
        if line.strip():
            json.loads(line)
    for secret in secrets_:
        assert secret not in output


def test_facts_written_through_the_web_are_embedded_by_a_worker(fleet):
    web = fleet.web()
    worker = fleet.worker()
    ids, texts = write_facts(fleet, web, 5)

    wait_for(lambda: embedded(fleet, ids) == 5, "the worker embedded the 5 facts")
    # The worker did it (nothing else ran: no query settled them, no beat swept them).
    wait_for(lambda: sum(line["facts"] for line in embed_lines(worker)) == 5,
             "the worker logged its batch")
    assert [line["redelivered"] for line in embed_lines(worker)] == [False]
    assert all(line["task_id"] for line in embed_lines(worker))
    with fleet.tools(web) as tools:
        found = tools.post("/query_memory", json={
            "scope": "shared", "query": "who brought a package to the port?"}).json()["facts"]
    hits = [fact for fact in found if fact["fact_id"] in ids]
    assert hits and all("vector" in fact["matched"] for fact in hits)
    assert_clean_json_log(worker, fleet.key, *texts)


def _unacked_embeds(broker: redis.Redis, queue: str) -> dict[bytes, float]:
    """Delivered-but-unacknowledged embedding tasks of this fleet's queue, by tag: when
    each was delivered."""
    held = {}
    for tag, value in broker.hgetall(UNACKED).items():
        payload, _, routing_key = json.loads(value)
        if routing_key == queue and payload["headers"]["task"] == EMBED_TASK:
            held[tag] = broker.zscore(UNACKED_INDEX, tag) or 0.0
    return held


def test_a_worker_killed_mid_batch_loses_nothing_and_embeds_nothing_twice(fleet, tmp_path):
    hold = tmp_path / "hold"
    hold.mkdir()
    visibility = 2
    env = {"ECHO_MEMORY_TEST_HOLD_BATCH": str(hold),
           "ECHO_MEMORY_CELERY_VISIBILITY_TIMEOUT": str(visibility)}
    broker = redis.Redis.from_url(fleet.env["REDIS_URL"])
    web = fleet.web()
    first = fleet.worker(**env)
    ids, texts = write_facts(fleet, web, 8)
    documents_before = counted_documents(fleet, ids[0])

    # The worker has claimed the batch and waits inside it (rows locked, nothing stored).
    wait_for(lambda: list(hold.glob("held-*.json")), "the worker holds the batch")
    held = json.loads(next(hold.glob("held-*.json")).read_text())["facts"]
    assert sorted(held) == sorted(ids)
    # Late acknowledgement: while the batch runs, its message is delivered but not acked.
    assert len(_unacked_embeds(broker, fleet.queue)) == 1

    first.kill()
    # The killed batch's transaction rolled back with its connection: nothing half-stored.
    assert embedded(fleet, ids) == 0
    assert counted_documents(fleet, ids[0]) == documents_before
    assert embed_lines(first) == []
    (hold / "release").touch()
    # Redis hands an unacknowledged message out again once it is older than the visibility
    # timeout, when a worker next looks (a restarted one looks first thing).
    delivered = next(iter(_unacked_embeds(broker, fleet.queue).values()))
    wait_for(lambda: time.time() - delivered > visibility, "the visibility timeout passed")

    second = fleet.worker(**env)
    wait_for(lambda: embedded(fleet, ids) == 8, "the redelivered batch is completed")
    wait_for(lambda: embed_lines(second), "the second worker logged the batch")
    [done] = embed_lines(second)
    assert done["facts"] == 8 and done["redelivered"] is True
    # The very task the killed worker had received, not a new one.
    assert f"{EMBED_TASK}[{done['task_id']}] received" in first.server.output()
    # The same batch, claimed again by the second worker.
    assert [sorted(json.loads(path.read_text())["facts"])
            for path in sorted(hold.glob("held-*.json"))] == [sorted(ids)] * 2
    # Embedded exactly once: the word statistics counted each of the 8 facts one time.
    assert counted_documents(fleet, ids[0]) == documents_before + 8
    wait_for(lambda: not _unacked_embeds(broker, fleet.queue), "the batch is acknowledged")
    assert_clean_json_log(second, fleet.key, *texts)




def test_a_pool_process_killed_mid_batch_hands_the_batch_back_to_its_worker(fleet, tmp_path):
    hold = tmp_path / "hold"
    hold.mkdir()
    web = fleet.web()
    # Celery logs the lost pool process as an error with its traceback: expected here.
    worker = fleet.worker(ECHO_MEMORY_TEST_HOLD_BATCH=str(hold), tracebacks_expected=True)
    ids, texts = write_facts(fleet, web, 6)
    documents_before = counted_documents(fleet, ids[0])
    wait_for(lambda: list(hold.glob("held-*.json")), "a pool process holds the batch")
    holder = json.loads(next(hold.glob("held-*.json")).read_text())["pid"]
    assert holder != worker.pid

    psutil.Process(holder).kill()
    # The worker rejects the lost task back to the queue (reject_on_worker_lost), a new
    # pool process takes it and claims the same facts again.
    wait_for(lambda: len(list(hold.glob("held-*.json"))) == 2, "the batch is taken again")
    again = json.loads(sorted(hold.glob("held-*.json"))[1].read_text())
    assert sorted(again["facts"]) == sorted(ids) and again["pid"] != holder
    assert embedded(fleet, ids) == 0
    (hold / "release").touch()

    wait_for(lambda: embedded(fleet, ids) == 6, "the batch is completed")
    wait_for(lambda: embed_lines(worker), "the worker logged the batch")
    [done] = embed_lines(worker)
    assert done["facts"] == 6 and done["redelivered"] is True
    assert counted_documents(fleet, ids[0]) == documents_before + 6
    assert worker.server.process.poll() is None  # the worker itself never stopped
    assert_clean_json_log(worker, fleet.key, *texts)  # the lost process's notice too


def test_a_worker_told_to_stop_finishes_its_batch_first(fleet, tmp_path):
    hold = tmp_path / "hold"
    hold.mkdir()
    broker = redis.Redis.from_url(fleet.env["REDIS_URL"])
    web = fleet.web()
    worker = fleet.worker(ECHO_MEMORY_TEST_HOLD_BATCH=str(hold))
    ids, texts = write_facts(fleet, web, 4)
    wait_for(lambda: list(hold.glob("held-*.json")), "the worker holds the batch")

    worker.server.process.send_signal(signal.SIGTERM)
    wait_for(lambda: "Warm shutdown" in worker.server.output(), "the worker is stopping")
    assert worker.server.process.poll() is None  # still running: it waits for its batch
    (hold / "release").touch()

    assert worker.server.process.wait(120) == 0
    assert embedded(fleet, ids) == 4
    [done] = embed_lines(worker)
    assert done["facts"] == 4 and done["redelivered"] is False
    assert not _unacked_embeds(broker, fleet.queue)  # finished, so acknowledged
    assert_clean_json_log(worker, fleet.key, *texts)


def test_a_write_is_stored_while_the_broker_is_down_and_the_sweep_embeds_it(fleet):
    from echomem.celery import app

    # This web process's broker is a port where nothing listens.
    web = fleet.web(CELERY_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0")
    ids, texts = write_facts(fleet, web, 2)  # answered 200: stored
    wait_for(lambda: "could not send facts to the workers" in web.server.output(),
             "the web process said why the facts wait")
    assert embedded(fleet, ids) == 0
    worker = fleet.worker()
    # What beat sends every minute.
    app.send_task("memories.tasks.index_waiting", queue=fleet.queue)
    wait_for(lambda: embedded(fleet, ids) == 2, "the sweep embedded the facts")
    assert_clean_json_log(worker, fleet.key, *texts)


def test_a_500_fact_episode_is_found_by_meaning_on_the_next_call_with_a_worker(fleet):
    """Written through one web process, found by its first-pass vector at once; embedded by
    the worker, then found through another web process by the worker's vector."""
    web, other_web = fleet.web(), fleet.web()
    fleet.worker()
    tag = secrets.token_hex(3)
    facts = [{"source": f"Courier {tag}", "target": f"Harbour office {tag}",
              "relation_type": f"delivered_{i}", "confidence": "extracted",
              "fact": f"Courier {tag} delivered parcel {i} to the harbour office"}
             for i in range(499)]
    # Shares no word with the question below: only a vector can find it.
    facts.insert(250, {"source": "Alice", "target": "Kyoto", "relation_type": "travelled_to",
                       "fact": "Alice spent her spring holiday hiking near Kyoto",
                       "confidence": "extracted"})
    entities = [{"name": f"Courier {tag}", "type": "person"},
                {"name": f"Harbour office {tag}", "type": "place"},
                {"name": "Alice", "type": "person"}, {"name": "Kyoto", "type": "city"}]
    with fleet.tools(web) as tools:
        written = tools.post("/write_episode", json={
            "scope": "shared", "session_id": f"day-{tag}", "assume_new": True,
            "entities": entities, "facts": facts})
        assert written.status_code == 200, written.text
        target = written.json()["edges_created"][250]["fact_id"]  # in position order
        question = {"scope": "shared", "query": "Who went trekking in the mountains during "
                                                "a vacation?"}

        first = tools.post("/query_memory", json=question).json()
        hit = next(fact for fact in first["facts"] if fact["fact_id"] == target)
        assert "vector" in hit["matched"], first["facts"]
        assert first["facts_pending_vector"] > 0  # the worker had not caught up

        # Once the episode is embedded (by the worker; the first query's own budget may
        # have taken a few), the reply says nothing waits.
        ids = [edge["fact_id"] for edge in written.json()["edges_created"]]
        wait_for(lambda: embedded(fleet, ids) == 500, "the episode embedded", timeout=600)
    # Through the other web process: the worker's vectors, nothing waiting. (Whether HNSW
    # finds this one outlier among 499 near-duplicates is not asserted: at ef_search 64 it
    # sometimes does not, a recall problem the issue note records.)
    with fleet.tools(other_web) as tools:
        settled = tools.post("/query_memory", json=question).json()
    assert settled["facts_pending_vector"] == 0
    assert settled["facts"] and all("vector" in fact["matched"] for fact in settled["facts"])
