"""On the single box, a served write is embedded by the worker's own indexer thread."""

from __future__ import annotations

import re
import time

import httpx

from tests.cli.conftest import cli_env, run_cli
from tests.harness import free_port

KEY = re.compile(r"API key:\s+(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})")


def test_a_served_write_is_found_by_meaning_soon_after(tmp_path, servers):
    env = cli_env(tmp_path / "home", ECHO_MEMORY_INDEXING="thread")
    key = KEY.search(run_cli("quickstart", "--no-serve", env=env).stdout)[1]
    port = free_port()
    servers(["serve", "--port", str(port)], env, tmp_path / "serve.log").wait_healthy(port)
    base = f"http://127.0.0.1:{port}/api/v1/tools"
    headers = {"Authorization": f"Bearer {key}"}
    written = httpx.post(f"{base}/write_episode", headers=headers, timeout=30, json={
        "scope": "shared", "assume_new": True,
        "entities": [{"name": "Ines", "type": "person"}, {"name": "Lisbon", "type": "city"}],
        "facts": [{"source": "Ines", "target": "Lisbon", "relation_type": "moved_to",
                   "fact": "Ines relocated to Lisbon for a new job in March",
                   "confidence": "extracted"}],
    })
    assert written.status_code == 200, written.text
    fact_id = written.json()["edges_created"][0]["fact_id"]
    # Found by meaning (no shared word), with a cosine score: the vector exists.
    deadline = time.monotonic() + 60
    while True:
        found = httpx.post(f"{base}/query_memory", headers=headers, timeout=30, json={
            "scope": "shared", "query": "Who changed cities for work?"}).json()["facts"]
        hit = next((f for f in found if f["fact_id"] == fact_id), None)
        if hit and "vector" in hit["matched"]:
            break
        assert time.monotonic() < deadline, found
        time.sleep(0.5)
    assert hit["score"] > 0.2
