"""What only a real server shows (issue 8, reproductions 6 and 7): chunked bodies, headers
longer than gunicorn's default, and gunicorn's own refusals, on `echo-memory serve`."""

from __future__ import annotations

import json
import re
import socket

import httpx
import pytest

from tests.cli.conftest import Server, cli_env, run_cli, server_tracebacks
from tests.harness import free_port

KEY = re.compile(r"API key:\s+(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})")
ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    home = tmp_path_factory.mktemp("hostile")
    env = cli_env(home / "home", ECHO_MEMORY_INDEXING="manual", ECHO_MEMORY_USER_ID="keyless")
    key = KEY.search(run_cli("quickstart", "--no-serve", "--user", "keyless", env=env).stdout)[1]
    port = free_port()
    server = Server(["serve", "--port", str(port)], env, home / "serve.log")
    try:
        server.wait_healthy(port)
        yield {"url": f"http://127.0.0.1:{port}", "port": port, "key": key, "server": server}
    finally:
        server.stop()
    assert not server_tracebacks(server.output()), server.output()


def _headers(box, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {box['key']}", "Accept": ACCEPT,
            "Content-Type": "application/json", **extra}


def _chunks(*parts: bytes):
    yield from parts  # a generator body: httpx sends it with Transfer-Encoding: chunked


@pytest.fixture(scope="module")
def session(box) -> str:
    reply = httpx.post(f"{box['url']}/mcp", headers=_headers(box), json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}}})
    return reply.headers["Mcp-Session-Id"]


def test_a_chunked_request_is_read_whole(box, session):
    ping = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()
    reply = httpx.post(f"{box['url']}/mcp", headers=_headers(box, **{"Mcp-Session-Id": session}),
                       content=_chunks(ping[:10], ping[10:]))
    assert reply.request.headers["Transfer-Encoding"] == "chunked"
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    rest = httpx.post(f"{box['url']}/api/v1/tools/query_memory", headers=_headers(box),
                      content=_chunks(b'{"scope": "shared", ', b'"digest": true}'))
    assert rest.status_code == 200, rest.text
    assert rest.json()["count"] == 0


@pytest.mark.parametrize("path", ["/mcp", "/api/v1/tools/write_episode"])
def test_a_10_mb_chunked_body_is_413_in_the_doors_shape(box, session, path):
    megabyte = b"x" * (1024 * 1024)
    reply = httpx.post(f"{box['url']}{path}",
                       headers=_headers(box, **{"Mcp-Session-Id": session}),
                       content=_chunks(*[megabyte] * 10), timeout=60)
    assert reply.status_code == 413
    assert reply.headers["Content-Type"] == "application/json"
    error = reply.json()["error"]
    if path == "/mcp":
        assert error["code"] == -32600 and error["data"]["field"] == "body"
    else:
        assert error["code"] == "payload_too_large" and error["field"] == "body"


def test_a_10_mb_rest_body_with_a_length_is_413_json(box):
    reply = httpx.post(f"{box['url']}/api/v1/tools/query_memory", headers=_headers(box),
                       content=b"x" * (10 * 1024 * 1024), timeout=60)
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == "payload_too_large"


def test_a_10_kb_session_id_is_an_unknown_session_in_json(box):
    reply = httpx.post(f"{box['url']}/mcp",
                       headers=_headers(box, **{"Mcp-Session-Id": "a" * 10_240}),
                       json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert reply.status_code == 404
    assert reply.json()["error"]["data"]["field"] == "Mcp-Session-Id"


def test_gunicorns_own_refusals_are_json_too(box):
    huge = httpx.post(f"{box['url']}/mcp", headers=_headers(box, **{"X-Padding": "a" * 40_000}),
                      json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert huge.status_code == 431
    assert huge.headers["Content-Type"] == "application/json"
    assert "Header" in huge.json()["error"]["message"]
    long_url = httpx.get(f"{box['url']}/api/v1/{'x' * 9000}", headers=_headers(box))
    assert long_url.status_code == 414
    assert long_url.json()["error"]["code"] == -32600
    just_long = httpx.get(f"{box['url']}/api/v1/{'x' * 5000}", headers=_headers(box))
    assert just_long.status_code == 404  # gunicorn's 4 KB default would have said 414
    assert just_long.json()["error"]["field"] == "path"
    with socket.create_connection(("127.0.0.1", box["port"]), timeout=10) as raw:
        raw.sendall(b"NOT AN HTTP REQUEST\r\n\r\n")
        answer = raw.recv(65536).decode("latin-1")
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 400")
    assert "Content-Type: application/json" in head
    assert json.loads(body)["error"]["code"] == -32600


def test_keyless_requests_work_from_this_machine_and_start_up_says_so(box):
    reply = httpx.post(f"{box['url']}/api/v1/tools/query_memory",
                       headers={"Content-Type": "application/json"},
                       json={"scope": "shared", "digest": True})
    assert reply.status_code == 200, reply.text
    assert "act as user keyless (agent agent) only from this machine" in box["server"].output()
