"""A key (or MCP session) refused here is refused by every serving process within a second.

Each process keeps the key rows it read for a moment (accounts/key_cache.py), so that a
request's key costs no query. Here two `echo-memory serve` processes share this test's
database (as an external server, over the embedded server's socket); both have just
served the key when this process, a third, revokes it (or deletes its account, or a
memory) through the service the web app calls. Each server is then polled: a request it
accepts must have been sent less than a second after the change. A bound on correctness,
not a measure of speed: a slow machine answers later but does not accept more.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection

from accounts.principal import principal_for_member
from accounts.services import api_key_create, api_key_revoke
from echomem.runtime import EMBEDDED_URL_VARIABLE
from memories.erasure.services import KeysDecision, account_delete, memory_delete
from memories.graph.services import memory_create
from tests.cli.conftest import McpClient, Server, cli_env, server_tracebacks
from tests.harness import free_port

BOUND_SECONDS = 1.0


def _test_database_url() -> str:
    socket_dir = parse_qs(urlsplit(os.environ[EMBEDDED_URL_VARIABLE]).query)["host"][0]
    settings = connection.settings_dict
    return f"postgresql://{settings['USER']}@/{settings['NAME']}?host={socket_dir}"


@pytest.fixture(scope="module")
def bases(tmp_path_factory, django_db_setup, django_db_blocker) -> list[str]:
    """Two serving processes on the test database; their logs must hold no traceback."""
    root: Path = tmp_path_factory.mktemp("two-processes")
    with django_db_blocker.unblock():
        url = _test_database_url()
    started = []
    for index in range(2):
        port = free_port()
        (root / f"home{index}").mkdir()  # serve notes its port there
        env = cli_env(root / f"home{index}", DATABASE_URL=url,
                      SECRET_KEY="revocation-test-" + "k" * 64)
        started.append((Server(["serve", "--port", str(port)], env,
                               root / f"serve{index}.log"), port))
    try:
        for server, port in started:
            server.wait_healthy(port)
        yield [f"http://127.0.0.1:{port}" for _, port in started]
    finally:
        for server, _ in started:
            server.stop()
    logged = [found for server, _ in started if (found := server_tracebacks(server.output()))]
    assert not logged, logged


def _refused_within_bound(client: McpClient, changed_at: float) -> int:
    """Ping until the key is refused (401); fail if a ping sent after the bound was not.
    (Before that a ping may still be answered, or refused otherwise: a deleted account's
    sessions are gone with it, 404.)"""
    while True:
        sent = time.monotonic()
        reply = client.rpc("ping", {})
        if reply.status_code == 401:
            assert reply.headers["WWW-Authenticate"].startswith("Bearer")
            return reply.status_code
        assert reply.status_code in (200, 404), reply.text
        assert sent - changed_at < BOUND_SECONDS, (
            f"{client.http.base_url} answered {reply.status_code}, not 401, to a request sent "
            f"{sent - changed_at:.2f}s after the change")
        time.sleep(0.02)


def _clients(bases: list[str], plaintext: str) -> list[McpClient]:
    clients = [McpClient(base, plaintext) for base in bases]
    for client in clients:  # each process has just read the key: it is in its memory
        assert client.rpc("ping", {}).status_code == 200
    return clients


def test_a_revoked_key_is_refused_by_every_process_within_a_second(
        transactional_db, bases, alice):
    clients = _clients(bases, alice.plaintext)
    api_key_revoke(key=alice.key, actor_id=alice.user.pk)
    changed_at = time.monotonic()
    assert [_refused_within_bound(client, changed_at) for client in clients] == [401, 401]
    # and refused for good, with the reason
    refused = clients[0].rpc("ping", {})
    assert refused.status_code == 401 and "revoked" in refused.json()["error"]["message"]


def test_a_deleted_accounts_key_is_refused_by_every_process_within_a_second(
        transactional_db, bases, alice):
    clients = _clients(bases, alice.plaintext)
    owner, _ = principal_for_member(alice.user, alice.account.pk)
    account_delete(owner, confirm=alice.account.name)
    changed_at = time.monotonic()
    assert [_refused_within_bound(client, changed_at) for client in clients] == [401, 401]


def test_no_process_answers_from_a_deleted_memory(transactional_db, bases, alice):
    """Memories are looked up on every call, so naming a deleted one is refused at once.
    A key whose default it was, moved by the owner to `default` as the deletion asks, may be
    refused for a moment (its kept row still names the memory), then reaches `default`, as
    the key's row now says; it never reaches another memory unasked."""
    memory = memory_create(account_id=alice.account.pk, name="scratch")
    key, plaintext = api_key_create(account=alice.account, holder=alice.user, name="scratch",
                                    tool="claude-code", default_memory=memory)
    clients = _clients(bases, plaintext)
    query = {"scope": "shared", "query": "anything"}
    assert [client.call("query_memory", query)["structuredContent"]["memory"]
            for client in clients] == ["scratch", "scratch"]
    owner, _ = principal_for_member(alice.user, alice.account.pk)
    memory_delete(owner, "scratch", confirm="scratch",
                  keys=KeysDecision(key_ids=frozenset({key.pk}), move_to="default"))
    for client in clients:
        named = client.rpc("tools/call", {"name": "query_memory",
                                          "arguments": {**query, "memory": "scratch"}})
        assert named.json()["result"]["error"]["code"] == "not_found"
        unnamed = client.rpc("tools/call", {"name": "query_memory", "arguments": query})
        result = unnamed.json()["result"]
        assert (result["error"]["code"] == "not_found" if result["isError"]
                else result["structuredContent"]["memory"] == "default"), result


def test_an_ended_session_is_refused_by_every_process_within_a_second(
        transactional_db, bases, alice):
    """Sessions are kept like keys (mcp_gateway/sessions.py): one ended through the first
    process is refused by the second within the bound, and at once by the first."""
    first = McpClient(bases[0], alice.plaintext)
    second = McpClient(bases[1], alice.plaintext)
    second.http.headers["Mcp-Session-Id"] = first.http.headers["Mcp-Session-Id"]
    assert [first.rpc("ping", {}).status_code, second.rpc("ping", {}).status_code] == [200, 200]
    assert first.http.delete("/mcp").status_code in (200, 204)
    changed_at = time.monotonic()
    assert first.rpc("ping", {}).status_code == 404
    while (reply := second.rpc("ping", {})).status_code != 404:
        assert reply.status_code == 200, reply.text
        assert time.monotonic() - changed_at < BOUND_SECONDS, (
            "the second process still answered an ended session after the bound")
        time.sleep(0.02)
