"""A live Echo Memory on a real port, shared by the protocol tests of one run.

It is set up the way a user sets one up: `echo-memory quickstart --no-serve` in a
fresh home prints the key, then `echo-memory serve` listens on a free port. Indexing
is inline so a fact is findable by meaning as soon as its write returns, and the
rate limit is raised: these tests open many sessions on one key, and the limit
itself is proven in tests/mcp/test_rate_limit.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest

from tests.cli.conftest import Server, cli_env, run_cli, server_tracebacks
from tests.harness import free_port

KEY = re.compile(r"API key:\s+(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})")


@dataclass
class Live:
    endpoint: str
    key: str
    port: int

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def end_session(self, session_id: str) -> int:
        """End a session server-side, as an expiry or an operator would."""
        return httpx.delete(self.endpoint, headers={**self.auth, "Mcp-Session-Id": session_id}
                            ).status_code


@contextmanager
def serving(tmp_path_factory, **settings: str) -> Iterator[Live]:
    home = tmp_path_factory.mktemp("protocol-home")
    env = cli_env(home, ECHO_MEMORY_INDEXING="inline", ECHO_MEMORY_RATE_LIMIT_PER_MINUTE="100000",
                  **settings)
    setup = run_cli("quickstart", "--no-serve", env=env, timeout=300)
    assert setup.returncode == 0, setup.stderr
    key = KEY.search(setup.stdout)[1]
    port = free_port()
    log = tmp_path_factory.mktemp("protocol-logs") / "serve.log"
    server = Server(["serve", "--port", str(port), "--threads", "16"], env, log)
    try:
        server.wait_healthy(port)
        yield Live(endpoint=f"http://127.0.0.1:{port}/mcp", key=key, port=port)
    finally:
        server.stop()
    logged = server_tracebacks(server.output())
    assert not logged, f"the protocol server logged {len(logged)} traceback(s):\n{logged[0]}"


@pytest.fixture(scope="session")
def live(tmp_path_factory) -> Iterator[Live]:
    with serving(tmp_path_factory) as server:
        yield server


@pytest.fixture(scope="session")
def conformance_live(tmp_path_factory) -> Iterator[Live]:
    """A live server that also serves the conformance suite's diagnostic tools, as only
    the suite's own run should (tests/conformance_settings.py installs them)."""
    with serving(tmp_path_factory, DJANGO_SETTINGS_MODULE="tests.conformance_settings") as server:
        yield server
