"""Two `echo-memory serve` processes, one PostgreSQL, one Redis: the web tier as a fleet.

Each process is started as an operator would start it in production (DATABASE_URL,
REDIS_URL, SECRET_KEY; the database is the test session's embedded PostgreSQL, reached
over its socket as an external server), on its own port. The tests show that nothing a
client relies on lives in one process: a session, the rate window, the month's units
and, when one process is stopped, the request it was serving.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import psycopg
import pytest
import redis

from echomem.runtime import EMBEDDED_URL_VARIABLE
from tests.cli.conftest import Server, cli_env, run_cli, server_tracebacks
from tests.harness import free_port

PROTOCOL = "2025-11-25"
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
RATE_LIMIT = 240  # the free plan's requests a minute per key
# Units left on the metered account's month before the allowance test spends them.
HEADROOM = 21
# Generous on purpose: the shutdown test holds a row lock that one write waits on while it
# checks the other process, and a loaded box must not turn that wait into a refusal.
LONG_WAIT_MS = "120000"
GRACEFUL_TIMEOUT = "120"

CAST = f"""
import json
from django.contrib.auth import get_user_model
from accounts.services import api_key_create
from billing.models import UsagePeriod
from billing.plans import default_plan, month_of
from memories.catalog.new_accounts import account_create

def actor(name, keys):
    user = get_user_model().objects.create_user(username=name, password="pw-" + name)
    account = account_create(owner=user, name=name + "'s team")
    return account, {{k: api_key_create(account=account, holder=user, name=k,
                                       tool="fleet")[1] for k in keys}}

alice, alice_keys = actor("alice", ["session", "rate", "shutdown"])
dora, dora_keys = actor("dora", ["metered"])
allowed = default_plan().monthly_units
UsagePeriod.objects.create(account_id=dora.pk, month=month_of(), units=allowed - {HEADROOM})
print(json.dumps({{"alice": alice.pk, "dora": dora.pk, "allowed": allowed,
                  **alice_keys, **dora_keys}}))
"""


@dataclass
class WebFleet:
    database_url: str
    processes: list[Server]
    ports: list[int]
    cast: dict[str, Any]
    redis_prefix: str

    def url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.ports[index]}"

    def sql(self, query: str, params: list[Any] | None = None) -> list[tuple]:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            return conn.execute(query, params or []).fetchall()


@pytest.fixture(scope="module")
def fleet_database() -> str:
    """A database of its own on the session's embedded PostgreSQL, as an external server."""
    embedded = urlsplit(os.environ[EMBEDDED_URL_VARIABLE])
    socket_dir = parse_qs(embedded.query)["host"][0]
    name = f"fleet_{secrets.token_hex(4)}"
    admin = f"postgresql://postgres@/postgres?host={socket_dir}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"postgresql://postgres@/{name}?host={socket_dir}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def web_fleet(fleet_database: str, tmp_path_factory) -> WebFleet:
    """Migrate, create the cast, start two web processes; stop them and check their logs."""
    root = tmp_path_factory.mktemp("web-fleet")
    prefix = f"echo-fleet:{secrets.token_hex(4)}:rl:"
    settings = {
        "DATABASE_URL": fleet_database, "REDIS_URL": os.environ["REDIS_URL"],
        "SECRET_KEY": "fleet-only-" + "k" * 64, "ECHO_MEMORY_RATE_LIMIT_PREFIX": prefix,
        # Each web process embeds its own writes: no Celery worker in this test.
        "ECHO_MEMORY_INDEXING": "thread",
        "ECHO_MEMORY_GRACEFUL_TIMEOUT": GRACEFUL_TIMEOUT,
        "ECHO_MEMORY_LOCK_TIMEOUT_MS": LONG_WAIT_MS,
        "ECHO_MEMORY_STATEMENT_TIMEOUT_MS": LONG_WAIT_MS,
    }
    setup_env = cli_env(root / "setup", **settings)
    migrated = run_cli("migrate", env=setup_env, timeout=300)
    assert migrated.returncode == 0, migrated.stderr
    made = run_cli("manage", "shell", "-c", CAST, env=setup_env)
    assert made.returncode == 0, made.stderr
    cast = json.loads(made.stdout.strip().splitlines()[-1])

    processes, ports = [], []
    for index in range(2):
        port = free_port()
        process = Server(["serve", "--port", str(port)], cli_env(root / f"web{index}", **settings),
                         root / f"web{index}.log")
        processes.append(process)
        ports.append(port)
    fleet = WebFleet(fleet_database, processes, ports, cast, prefix)
    try:
        for process, port in zip(processes, ports, strict=True):
            process.wait_healthy(port, timeout=180)
        yield fleet
    finally:
        for process in processes:
            process.stop()
        client = redis.Redis.from_url(os.environ["REDIS_URL"])
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)
    logged = [f"{p.log}:\n" + "\n".join(found) for p in processes
              if (found := server_tracebacks(p.output()))]
    assert not logged, "a web process logged a traceback:\n" + "\n".join(logged)


def rpc(method: str, params: dict[str, Any], request_id: int | None = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        body["id"] = request_id
    return body


def initialize(http: httpx.Client, base: str, key: str) -> httpx.Response:
    return http.post(f"{base}/mcp", headers={"Authorization": f"Bearer {key}", **MCP_HEADERS},
                     json=rpc("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                             "clientInfo": {"name": "fleet", "version": "1"}}))


def open_session(http: httpx.Client, base: str, key: str) -> dict[str, str]:
    """initialize at `base`; the headers every later request of the session carries."""
    opened = initialize(http, base, key)
    assert opened.status_code == 200, opened.text
    assert opened.json()["result"]["protocolVersion"] == PROTOCOL
    return {"Authorization": f"Bearer {key}", **MCP_HEADERS,
            "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": PROTOCOL}


def call_tool(http: httpx.Client, base: str, headers: dict[str, str], tool: str,
              arguments: dict[str, Any]) -> dict[str, Any]:
    reply = http.post(f"{base}/mcp", headers=headers,
                      json=rpc("tools/call", {"name": tool, "arguments": arguments}))
    assert reply.status_code == 200, reply.text
    return reply.json()["result"]


def episode(tag: str, facts: int) -> dict[str, Any]:
    """`facts` facts about new entities whose names carry `tag` (so no name is ambiguous)."""
    person = f"{tag} traveller"
    cities = [f"{tag} city {n}" for n in range(facts)]
    return {"scope": "shared", "assume_new": True,
            "entities": [{"name": person, "type": "person"},
                         *({"name": city, "type": "city"} for city in cities)],
            "facts": [{"source": person, "target": city, "relation_type": "visited",
                       "fact": f"{person} visited {city} on trip {n}",
                       "confidence": "extracted"} for n, city in enumerate(cities)]}


def test_a_session_opened_on_one_process_is_served_by_the_other(web_fleet):
    one, other = web_fleet.url(0), web_fleet.url(1)
    with httpx.Client(timeout=60) as http:
        session = open_session(http, one, web_fleet.cast["session"])
        assert http.post(f"{other}/mcp", headers=session,
                         json=rpc("notifications/initialized", {}, None)).status_code == 202
        listed = http.post(f"{other}/mcp", headers=session, json=rpc("tools/list", {}))
        assert listed.status_code == 200, listed.text
        assert "write_episode" in {tool["name"] for tool in listed.json()["result"]["tools"]}

        written = call_tool(http, other, session, "write_episode", episode("Session", 1))
        assert written["stored"] is True
        found = call_tool(http, one, session, "query_memory",
                          {"scope": "shared", "query": "Session traveller visited"})
        assert written["edges_created"][0]["fact_id"] in {f["fact_id"] for f in found["facts"]}

        # Ended on the other process: refused there at once, and on the first one within
        # the half second each process keeps a session it has read (mcp_gateway/sessions.py).
        assert http.delete(f"{other}/mcp", headers=session).status_code == 204
        ended_at = time.monotonic()
        assert http.post(f"{other}/mcp", headers=session,
                         json=rpc("tools/list", {})).status_code == 404
        while (reply := http.post(f"{one}/mcp", headers=session,
                                  json=rpc("tools/list", {}))).status_code != 404:
            assert reply.status_code == 200, reply.text
            assert time.monotonic() - ended_at < 1.0, "an ended session served after 1 s"
            time.sleep(0.02)


def test_one_keys_rate_limit_is_counted_once_across_processes(web_fleet):
    """300 requests of one key, half to each process: 240 answered in all, not 240 each."""
    key, bases = web_fleet.cast["rate"], [web_fleet.url(0), web_fleet.url(1)]
    local = threading.local()

    def post(base: str, headers: dict[str, str], body: dict[str, Any]) -> httpx.Response:
        if not hasattr(local, "http"):
            local.http = httpx.Client(timeout=60)
        return local.http.post(f"{base}/mcp", headers=headers, json=body)

    started = time.monotonic()
    statuses: list[tuple[int, httpx.Response]] = []
    sessions = []
    with httpx.Client(timeout=60) as http:
        # Ten sessions, each opened on one process and confirmed on the other: 20 requests.
        for n in range(10):
            opened = initialize(http, bases[n % 2], key)
            headers = {"Authorization": f"Bearer {key}", **MCP_HEADERS,
                       "Mcp-Session-Id": opened.headers["mcp-session-id"],
                       "MCP-Protocol-Version": PROTOCOL}
            confirmed = http.post(f"{bases[(n + 1) % 2]}/mcp", headers=headers,
                                  json=rpc("notifications/initialized", {}, None))
            statuses += [(n % 2, opened), ((n + 1) % 2, confirmed)]
            sessions.append(headers)
    # 280 more at once, alternating between the processes.
    with ThreadPoolExecutor(8) as pool:
        statuses += pool.map(
            lambda n: (n % 2, post(bases[n % 2], sessions[n % 10], rpc("tools/list", {}, n + 1))),
            range(280))
    assert time.monotonic() - started < 60, "the burst outlasted the one-minute window it tests"

    answered = [(where, r) for where, r in statuses if r.status_code in (200, 202)]
    refused = [(where, r) for where, r in statuses if r.status_code == 429]
    assert len(statuses) == 300
    assert (len(answered), len(refused)) == (RATE_LIMIT, 300 - RATE_LIMIT), \
        sorted({r.status_code for _, r in statuses})
    assert {where for where, _ in answered} == {0, 1}
    for _, reply in refused:
        error = reply.json()["error"]
        assert error["data"]["limit"] == RATE_LIMIT
        assert int(reply.headers["Retry-After"]) == error["data"]["retry_after"] > 0
    # The one window both processes counted in: Redis holds exactly the answered requests
    # (the other keys' windows, from the other tests, hold fewer).
    window = redis.Redis.from_url(os.environ["REDIS_URL"])
    sizes = [window.zcard(k) for k in window.scan_iter(f"{web_fleet.redis_prefix}*")]
    assert max(sizes) == RATE_LIMIT and sizes.count(RATE_LIMIT) == 1, sizes


def test_the_months_units_are_never_overspent_across_processes(web_fleet):
    """21 units left, 16 two-fact writes at once through both processes: 10 are stored (20
    units), the other 6 are refused whole, and the ledger stops one unit short."""
    bases = [web_fleet.url(0), web_fleet.url(1)]
    with httpx.Client(timeout=120) as http:
        session = open_session(http, bases[0], web_fleet.cast["metered"])

        def write(n: int) -> dict[str, Any]:
            with httpx.Client(timeout=120) as own:
                return call_tool(own, bases[n % 2], session, "write_episode",
                                 episode(f"Metered {n}", 2))

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(write, range(16)))
    stored = [r for r in results if not r.get("isError")]
    refused = [r for r in results if r.get("isError")]
    assert len(stored) == 10 and all(len(r["edges_created"]) == 2 for r in stored)
    assert len(refused) == 6
    assert {r["error"]["code"] for r in refused} == {"allowance_exhausted"}

    dora, allowed = web_fleet.cast["dora"], web_fleet.cast["allowed"]
    [(units,)] = web_fleet.sql("SELECT units FROM billing_usageperiod WHERE account_id = %s",
                               [dora])
    assert units == allowed - 1
    [(facts,)] = web_fleet.sql(
        "SELECT count(*) FROM memories_fact f JOIN memories_memory m ON m.id = f.memory_id "
        "WHERE m.account_id = %s", [dora])
    assert facts == 20


def _refuses_connections(base: str) -> bool:
    try:
        httpx.get(f"{base}/healthz", timeout=5)
    except httpx.ConnectError:
        return True
    except httpx.HTTPError:
        return False
    return False


def _wait_for(condition, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.2)


def test_sigterm_lets_the_write_in_flight_finish_whole(web_fleet):
    """SIGTERM while a write_episode is inside its transaction: the write completes and
    answers, its episode is stored whole, the process exits 0, and new connections are
    refused at once (a client or balancer goes to the other process) while it drains.

    The write is held at a known point without any hook in the product: the test locks the
    account's ledger row, which the write charges after inserting its rows and before it
    commits. Runs last: it stops one of the module's two processes.
    """
    doomed, survivor = web_fleet.url(0), web_fleet.url(1)
    account, month_start = web_fleet.cast["alice"], time.strftime("%Y-%m-01", time.gmtime())
    web_fleet.sql("INSERT INTO billing_usageperiod (account_id, month, units) VALUES (%s, %s, 0) "
                  "ON CONFLICT DO NOTHING RETURNING id", [account, month_start])
    with httpx.Client(timeout=60) as http:
        session = open_session(http, survivor, web_fleet.cast["shutdown"])
    facts = 12
    reply: dict[str, Any] = {}

    def write() -> None:
        with httpx.Client(timeout=300) as own:
            reply["result"] = call_tool(own, doomed, session, "write_episode",
                                        episode("Shutdown", facts))

    with psycopg.connect(web_fleet.database_url) as holder:
        holder.execute("SELECT 1 FROM billing_usageperiod WHERE account_id = %s "
                       "AND month = %s FOR UPDATE", [account, month_start])
        writer = threading.Thread(target=write)
        writer.start()
        _wait_for(lambda: web_fleet.sql(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query LIKE %s",
            ["%billing_usageperiod%"]), "the write to wait on the ledger row")
        # Mid-transaction: its rows are in, uncommitted, invisible to everyone else.
        assert web_fleet.sql("SELECT count(*) FROM memories_fact WHERE fact LIKE %s",
                             ["Shutdown traveller%"]) == [(0,)]

        # The cause of the workers' old SIGABRT on SIGTERM: a master that had imported ONNX
        # Runtime before forking them (echomem/readiness.py, model()).
        master = web_fleet.processes[0].process.pid
        assert "onnxruntime" not in Path(f"/proc/{master}/maps").read_text()
        web_fleet.processes[0].process.send_signal(signal.SIGTERM)
        _wait_for(lambda: _refuses_connections(doomed), "the stopping process to refuse")
        assert web_fleet.processes[0].process.poll() is None, "it exited with a write in flight"
        assert httpx.get(f"{survivor}/healthz", timeout=30).status_code == 200
        holder.rollback()  # releases the ledger row: the held write goes on

    writer.join(timeout=300)
    assert reply["result"]["stored"] is True
    assert len(reply["result"]["edges_created"]) == facts
    assert web_fleet.processes[0].process.wait(timeout=int(GRACEFUL_TIMEOUT)) == 0
    episode_id = reply["result"]["episode_id"]
    assert web_fleet.sql("SELECT count(*) FROM memories_fact WHERE episode_id = %s",
                         [episode_id]) == [(facts,)]
    log = web_fleet.processes[0].output()
    assert "Worker exiting" in log
    for crash in ("SIGABRT", "SIGKILL", "terminate called", "was sent"):
        assert crash not in log, log
    # The session lives on with the process that is left, and finds what the other stored.
    with httpx.Client(timeout=60) as http:
        found = call_tool(http, survivor, session, "query_memory",
                          {"scope": "shared", "query": "Shutdown traveller visited"})
    assert {e["fact_id"] for e in reply["result"]["edges_created"]} & \
        {f["fact_id"] for f in found["facts"]}
