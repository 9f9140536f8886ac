"""The integration guide's two clients, reproduced verbatim as fixtures, against the live server.

Only ENDPOINT changes (read from ECHO_MEM_ENDPOINT). What they do after the server
ends their session is shown as it is: both surface the 404 to their caller; the Node
client then drops that session and the next call opens a fresh one, while the Python
client keeps the dead session id until the application makes a new client.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture
def guide_python(live, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_ENDPOINT", live.endpoint)
    monkeypatch.setenv("ECHO_MEM_API_KEY", live.key)
    monkeypatch.delenv("ECHO_MEM_MEMORY", raising=False)
    spec = importlib.util.spec_from_file_location("echo_memory_client",
                                                  HERE / "fixtures" / "echo_memory_client.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def story(tag: str) -> tuple[list[dict], list[dict]]:
    cache, outage = f"{tag} cache", f"{tag} outage"
    entities = [{"name": cache, "type": "thing"}, {"name": outage, "type": "thing"}]
    facts = [{"source": outage, "target": cache, "relation_type": "caused_by_cache",
              "fact": f"The {tag} outage was caused by the {tag} cache filling up.",
              "confidence": "extracted", "causal_hint": "caused_by"}]
    return entities, facts


def test_python_client_remember_recall_why_round_trip(guide_python):
    memory = guide_python.EchoMemory()
    stored = memory.remember("py-guide", *story("Python"))
    assert stored["stored"] is True
    assert len(stored["edges_created"]) == 1
    recalled = memory.recall("why did the Python outage happen", top_k=3)
    assert recalled["facts"][0]["fact"] == "The Python outage was caused by the Python cache " \
                                           "filling up."
    assert recalled["facts"][0]["score"] > 0.3
    out = memory.why("Python outage", direction="upstream")
    assert [chain[0]["cause"] for chain in out["causes"]] == ["Python cache"]


def test_python_client_surfaces_a_404_after_its_session_ends_and_a_new_client_recovers(
        guide_python, live):
    memory = guide_python.EchoMemory()
    memory.recall("anything")
    assert live.end_session(memory._session) == 204
    with pytest.raises(httpx.HTTPStatusError) as failure:
        memory.recall("anything")
    assert failure.value.response.status_code == 404
    assert "initialize again" in failure.value.response.json()["error"]["message"]
    # The verbatim client keeps its dead session id, so the application replaces the client.
    assert guide_python.EchoMemory().recall("Python cache", top_k=1)["count"] == 1


def test_node_client_round_trip_pool_concurrency_and_reconnect_after_404(live):
    node = shutil.which("node")
    assert node, "Node.js 18+ must be on PATH (the guide's client targets it)"
    result = subprocess.run(
        [node, str(HERE / "node" / "guide-driver.mjs")], capture_output=True, text=True,
        timeout=300, env={"PATH": str(Path(node).parent), "ECHO_MEM_ENDPOINT": live.endpoint,
                          "ECHO_MEM_API_KEY": live.key},
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])

    trip = summary["roundTrip"]
    assert trip["stored"] is True and trip["edgesCreated"] == 2
    assert trip["topFact"] == "The Nodejs outage was caused by the Nodejs cache filling up."
    assert trip["chain"] == ["The Nodejs outage was caused by the Nodejs cache filling up.",
                             "The Nodejs release shrank the Nodejs cache."]

    pool = summary["concurrency"]
    assert pool["allStored"] is True
    assert [a["subject"] for a in pool["answers"]] == [f"Pool{i:02d} outage" for i in range(16)]
    assert [a["cause"] for a in pool["answers"]] == [f"Pool{i:02d} cache" for i in range(16)]
    assert pool["sessionsOpened"] == 4      # ECHO_MEM_CONCURRENCY's default: one per slot
    assert pool["maxInFlight"] == 4         # the pool, not the server, caps concurrency

    reconnect = summary["reconnect"]
    assert reconnect["ended"] == [204] * 4
    outcomes = [attempt["ok"] for attempt in reconnect["attempts"]]
    # Each dead idle session fails one call with the 404, then is discarded; after that
    # the client opens a fresh session and every call succeeds.
    assert outcomes == [False] * 4 + [True] * 4
    assert all("echo-mem 404" in a["error"] for a in reconnect["attempts"][:4])
    assert reconnect["newSessions"] == 1
