"""Every request leaves one JSON line with its request id; no line holds a key or a fact.

In process, through a handler configured as ECHO_MEMORY_LOG_FORMAT=json configures the
console; then a real `echo-memory serve` with two workers, whose whole output is read.
"""

from __future__ import annotations

import io
import json
import logging
import re
import signal
import subprocess

import httpx
import pytest

from echomem.logs import JsonFormatter, PathsAsRoutes, RequestFields
from tests.cli.conftest import ECHO_MEMORY, cli_env, run_cli
from tests.harness import free_port
from tests.mcp.test_tools import episode

KEY = re.compile(r"API key:\s+(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})")
# Text no log line may ever contain: it is only ever sent as a fact, a name or a query.
SECRET_FACT = "Zanzibar-quokka ledger 7731 lives in the blue vault"
SECRET_NAME = "Quokka Vault 7731"


def distinctive_episode(index: int) -> dict:
    return {"scope": "shared", "session_id": f"s{index}", "assume_new": True,
            "entities": [{"name": f"{SECRET_NAME} {index}", "type": "place"},
                         {"name": "Ledger", "type": "thing"}],
            "facts": [{"source": f"{SECRET_NAME} {index}", "target": "Ledger",
                       "relation_type": f"holds_{index}", "fact": f"{SECRET_FACT} ({index})",
                       "confidence": "extracted"}]}


@pytest.fixture
def json_lines():
    """The root logger's records as the JSON console handler writes them."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestFields())  # the filters of the console handler (settings)
    handler.addFilter(PathsAsRoutes())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)


def request_lines(lines: list[dict]) -> list[dict]:
    return [line for line in lines if line["logger"] == "echomem.requests"]


def test_each_request_leaves_one_line_with_its_request_id(json_lines, client, mcp_for, alice):
    session = mcp_for(alice)
    reply = session.request("tools/call", {"name": "write_episode", "arguments": episode()},
                            **{"X-Request-ID": "trace-abc.123"})
    assert reply.status_code == 200
    assert reply["X-Request-ID"] == "trace-abc.123"
    health = client.get("/healthz")
    lines = request_lines(json_lines())
    # initialize, notifications/initialized, the call, the probe.
    assert len(lines) == 4
    assert len({line["request_id"] for line in lines}) == 4
    call = next(line for line in lines if line["request_id"] == "trace-abc.123")
    assert call["account"] == alice.account.id
    assert call["key_prefix"] == alice.key.prefix
    assert call["tool"] == "write_episode"
    assert call["method"] == "POST" and call["route"] == "/mcp" and call["status"] == 200
    assert call["door"] == "mcp" and call["duration_ms"] >= 0
    probe = next(line for line in lines if line["request_id"] == health["X-Request-ID"])
    assert probe["route"] == "/healthz" and "account" not in probe


def test_a_request_id_that_is_not_a_plain_short_token_is_replaced(json_lines, client):
    for given in ("has spaces", "x" * 129, "line\nbreak", "emoji-\u2603"):
        response = client.get("/healthz", headers={"X-Request-ID": given})
        returned = response["X-Request-ID"]
        assert returned != given and re.fullmatch(r"[0-9a-f]{32}", returned)
    assert all(line["request_id"] != "has spaces" for line in json_lines())


def test_lines_written_during_a_request_carry_its_fields(json_lines, client, settings, db):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = client.get("/readyz", headers={"X-Request-ID": "probe-1"})
    assert response.status_code == 503
    warning = next(line for line in json_lines() if line["logger"] == "echomem.readiness")
    assert warning["request_id"] == "probe-1"
    assert warning["level"] == "WARNING"


def test_a_refused_link_is_logged_by_its_route_not_its_token(json_lines, client, db):
    token = "invitation-secret-5f1d9c"
    assert client.get(f"/invitations/{token}/").status_code == 404
    lines = json_lines()
    assert token not in json.dumps(lines)
    refused = next(line for line in lines if line["logger"] == "django.request")
    assert refused["message"] == "Not Found: /invitations/<str:token>/"
    assert request_lines(lines)[0]["route"] == "/invitations/<str:token>/"


def test_a_key_in_a_message_is_cut_to_its_prefix(json_lines, alice):
    logging.getLogger("tests.ops").warning("a client sent %s in a path", alice.plaintext)
    (line,) = [line for line in json_lines() if line["logger"] == "tests.ops"]
    assert alice.plaintext not in line["message"]
    assert f"em_{alice.key.prefix}_[redacted]" in line["message"]


def test_a_served_run_logs_json_lines_without_keys_or_fact_text(tmp_path):
    home = tmp_path / "home"
    token = "scrape-token-0123456789abcdef"
    env = cli_env(home, ECHO_MEMORY_INDEXING="inline", ECHO_MEMORY_LOG_FORMAT="json",
                  ECHO_MEMORY_METRICS_TOKEN=token)
    setup = run_cli("quickstart", "--no-serve", env=env, timeout=300)
    assert setup.returncode == 0, setup.stderr
    key = KEY.search(setup.stdout)[1]
    port = free_port()
    stdout, stderr = tmp_path / "serve.out", tmp_path / "serve.err"
    with stdout.open("w") as out, stderr.open("w") as err:
        server = subprocess.Popen([ECHO_MEMORY, "serve", "--port", str(port), "--workers", "2"],
                                  env=env, stdout=out, stderr=err, text=True)
        try:
            sent = _exercise(f"http://127.0.0.1:{port}", key, token,
                             alive=lambda: server.poll() is None)
            # Read before stopping: a worker that loaded ONNX Runtime can abort on its way
            # out, and the C++ runtime prints that on stderr itself (not a log line).
            served = stderr.read_text()
        finally:
            server.send_signal(signal.SIGINT)  # as the other served tests stop theirs
            server.wait(30)
    output = stdout.read_text() + stderr.read_text()
    assert key not in output
    assert key.split("_", 2)[2] not in output  # the secret part alone (it may hold "_")
    assert "Zanzibar" not in output and "Quokka" not in output
    assert "ops-link-token" not in output
    lines = [_json(line) for line in served.splitlines()]  # JSON, every one
    by_id = {}
    for line in lines:
        if line["logger"] == "echomem.requests":
            by_id.setdefault(line["request_id"], []).append(line)
    assert {request_id: len(by_id.get(request_id, [])) for request_id in sent} == \
        dict.fromkeys(sent, 1)
    assert {line["tool"] for line in lines if line.get("tool")} >= {"write_episode",
                                                                  "query_memory"}
    assert [line for line in lines if "exc" in line] == [], "a request failed in the server"


def _json(line: str) -> dict:
    try:
        return json.loads(line)
    except ValueError:
        raise AssertionError(f"not a JSON line: {line!r}") from None


def _exercise(base: str, key: str, token: str, alive) -> list[str]:
    """Wait for the server, write and query facts over MCP and REST, scrape the metrics;
    the request ids of every request sent."""
    sent: list[str] = []
    http = httpx.Client(base_url=base, timeout=60)

    def send(method: str, path: str, **kwargs) -> httpx.Response:
        request_id = f"req-{len(sent)}"
        sent.append(request_id)
        headers = {"X-Request-ID": request_id, **kwargs.pop("headers", {})}
        response = http.request(method, path, headers=headers, **kwargs)
        assert response.headers["X-Request-ID"] == request_id
        return response

    _wait_ready(http, alive)
    auth = {"Authorization": f"Bearer {key}"}
    mcp = {**auth, "Accept": "application/json, text/event-stream"}
    opened = send("POST", "/mcp", headers=mcp, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "ops-test", "version": "1"}}})
    mcp |= {"Mcp-Session-Id": opened.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-06-18"}
    send("POST", "/mcp", headers=mcp,
         json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    before = _tool_calls(send, token)
    calls = 0
    for index in range(4):
        reply = send("POST", "/mcp", headers=mcp, json={
            "jsonrpc": "2.0", "id": 10 + index, "method": "tools/call",
            "params": {"name": "write_episode", "arguments": distinctive_episode(index)}})
        assert reply.json()["result"]["stored"] is True, reply.text
        calls += 1
    found = send("POST", "/api/v1/tools/query_memory", headers=auth,
                 json={"scope": "shared", "query": "Zanzibar quokka ledger"})
    assert SECRET_FACT in found.text
    calls += 1
    # A refused write echoes nothing of its text into the log either.
    refused = send("POST", "/api/v1/tools/write_episode", headers=auth,
                   json={**distinctive_episode(9), "facts": [{"fact": SECRET_FACT}]})
    assert refused.status_code == 400
    calls += 1
    # A refused one-time link: logged by its route, never by the token in its path.
    assert send("GET", "/invitations/ops-link-token-4242/").status_code == 404
    # The two workers each count their own calls; a scrape of either adds them all up.
    after = _tool_calls(send, token)
    assert after - before == calls
    return sent


def _tool_calls(send, token: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    text = send("GET", "/metrics", headers={"Authorization": f"Bearer {token}"}).text
    return sum(sample.value for family in text_string_to_metric_families(text)
               for sample in family.samples if sample.name == "echo_memory_tool_calls_total")


def _wait_ready(http: httpx.Client, alive, timeout: float = 120) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert alive(), "the server exited before it was ready (its output is in tmp_path)"
        try:
            if http.get("/readyz").status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError("the server did not become ready")
