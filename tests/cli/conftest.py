"""Drive the installed `echo-memory` command as a user would: real processes, real ports."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

ECHO_MEMORY = str(Path(sys.executable).parent / "echo-memory")
# Variables of the test process that must not leak into the product's own processes.
TEST_ONLY = ("DJANGO_SETTINGS_MODULE", "ECHO_MEMORY_EMBEDDED_DATABASE_URL", "SECRET_KEY",
             "DATABASE_URL", "ECHO_MEMORY_HOME", "REDIS_URL", "CELERY_BROKER_URL",
             "ECHO_MEMORY_USER_ID", "ECHO_MEMORY_PORT", "ECHO_MEMORY_HOST")


# A traceback, from its header to the exception line (the first unindented line after it).
TRACEBACK = re.compile(r"^Traceback \(most recent call last\):\n(?:[ \t].*\n|\n)*.*$", re.M)


def server_tracebacks(log: str) -> list[str]:
    """Every traceback in a server's output: each one is a request (or a thread) that raised.
    With ECHO_MEMORY_LOG_FORMAT=json a traceback is the `exc` member of its line."""
    found = TRACEBACK.findall(log)
    for line in log.splitlines():
        if line.startswith("{") and '"exc": ' in line:
            try:
                found.append(json.loads(line)["exc"])
            except (ValueError, KeyError, TypeError):
                continue
    return found


def cli_env(home: Path | str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY}
    env["ECHO_MEMORY_HOME"] = str(home)
    env.update(extra)
    return env


def run_cli(*args: str, env: dict[str, str], timeout: float = 120,
            executable: str = ECHO_MEMORY, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([executable, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


class Server:
    """A background `echo-memory` process whose output is collected to a file."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path, *,
                 executable: str = ECHO_MEMORY, cwd: Path | None = None):
        self.log = log
        self.handle = log.open("w")
        self.process = subprocess.Popen([executable, *args], env=env, stdout=self.handle,
                                        stderr=subprocess.STDOUT, text=True, cwd=cwd)

    def output(self) -> str:
        return self.log.read_text()

    def wait_healthy(self, port: int, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited early:\n{self.output()}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"server not healthy after {timeout}s:\n{self.output()}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.handle.close()
        return self.process.returncode


@pytest.fixture
def servers(request):
    """Start `echo-memory` processes; each is stopped at the end of the test, and the test
    fails if one logged a traceback. A test that injects faults on purpose passes
    `tracebacks_expected=True` for the server it breaks (or is marked
    `injects_server_fault`, as for in-process servers)."""
    started: list[tuple[Server, bool]] = []
    marked = request.node.get_closest_marker("injects_server_fault") is not None

    def start(args: list[str], env: dict[str, str], log: Path, *,
              tracebacks_expected: bool = False, **where: Any) -> Server:
        server = Server(args, env, log, **where)
        started.append((server, tracebacks_expected))
        return server

    yield start
    for server, _ in started:
        server.stop()
    logged = [f"{server.log}:\n" + "\n".join(found) for server, expected in started
              if not (expected or marked) and (found := server_tracebacks(server.output()))]
    assert not logged, ("a server this test started logged a traceback (a test that injects "
                        "faults passes tracebacks_expected=True):\n" + "\n".join(logged))


MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
PROTOCOL = "2025-06-18"


class McpClient:
    """A plain JSON-RPC client of /mcp: one session, the documented headers."""

    def __init__(self, base: str, key: str):
        self.http = httpx.Client(base_url=base, timeout=30,
                                 headers={"Authorization": f"Bearer {key}", **MCP_HEADERS})
        self.ids = iter(range(1, 1_000_000))
        opened = self.rpc("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                         "clientInfo": {"name": "echo-tests", "version": "1"}})
        self.http.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        self.http.headers["MCP-Protocol-Version"] = PROTOCOL
        assert self.rpc("notifications/initialized", {}, notify=True).status_code == 202

    def rpc(self, method: str, params: dict[str, Any], notify: bool = False) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            body["id"] = next(self.ids)
        return self.http.post("/mcp", json=body)

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """The tool's result, or None for a protocol error or a tool error (isError)."""
        reply = self.rpc("tools/call", {"name": tool, "arguments": arguments})
        if reply.status_code != 200 or "result" not in reply.json():
            return None
        result = reply.json()["result"]
        return None if result.get("isError") else result
