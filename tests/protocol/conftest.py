"""A live Echo Memory on a real port, shared by the protocol tests of one run.

It is set up the way a user sets one up: `echo-memory quickstart --no-serve` in a
fresh home prints the key, then `echo-memory serve` listens on a free port. Indexing
is inline so a fact is findable by meaning as soon as its write returns, and the
rate limit is raised: these tests open many sessions on one key, and the limit
itself is proven in tests/mcp/test_rate_limit.py.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest

from tests.cli.conftest import Server, cli_env, run_cli, server_tracebacks
from tests.harness import free_port
from tests.oauth.loopback_https import TRUSTED_CERTIFICATE, Certificate, self_signed

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
def serving(tmp_path_factory, *, public_on_localhost: bool = False,
            before_serving: Callable[[dict[str, str]], None] | None = None,
            **settings: str) -> Iterator[Live]:
    """`public_on_localhost`: the box's public URL (and so OAuth's issuer) is
    http://localhost:PORT, and the endpoint is dialled there."""
    home = tmp_path_factory.mktemp("protocol-home")
    env = cli_env(home, ECHO_MEMORY_INDEXING="inline", ECHO_MEMORY_RATE_LIMIT_PER_MINUTE="100000",
                  **settings)
    setup = run_cli("quickstart", "--no-serve", env=env, timeout=300)
    assert setup.returncode == 0, setup.stderr
    key = KEY.search(setup.stdout)[1]
    if before_serving:
        before_serving(env)
    port = free_port()
    host = "localhost" if public_on_localhost else "127.0.0.1"
    if public_on_localhost:
        env["ECHO_MEMORY_PUBLIC_URL"] = f"http://localhost:{port}"
    log = tmp_path_factory.mktemp("protocol-logs") / "serve.log"
    server = Server(["serve", "--port", str(port), "--threads", "16"], env, log)
    try:
        server.wait_healthy(port)
        yield Live(endpoint=f"http://{host}:{port}/mcp", key=key, port=port)
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


# Sets the owner's password (quickstart leaves them a sign-in link instead) and says who they are.
SET_PASSWORD = """
from django.contrib.auth import get_user_model
owner = get_user_model().objects.get()
owner.set_password({password!r})
owner.save()
print("OWNER", owner.email or owner.get_username())
"""


@dataclass
class OAuthLive(Live):
    base: str
    login: str
    password: str
    documents: Certificate


@pytest.fixture(scope="session")
def oauth_live(tmp_path_factory) -> Iterator[OAuthLive]:
    """A live server whose issuer is the address its clients dial (http://localhost:PORT:
    an OAuth client takes localhost and 127.0.0.1 for different origins), whose owner signs
    in with a password, and which trusts the test's own certificate for client ID metadata
    documents served from this machine (tests/oauth/live_settings.py, test only)."""
    documents = self_signed(tmp_path_factory.mktemp("documents-tls"))
    password = secrets.token_urlsafe(18)
    owner: list[str] = []

    def set_password(env: dict[str, str]) -> None:
        done = run_cli("manage", "shell", "-c", SET_PASSWORD.format(password=password), env=env)
        assert done.returncode == 0, done.stderr
        owner.append(done.stdout.split("OWNER", 1)[1].strip())

    with serving(tmp_path_factory, public_on_localhost=True, before_serving=set_password,
                 DJANGO_SETTINGS_MODULE="tests.oauth.live_settings",
                 **{TRUSTED_CERTIFICATE: str(documents.cert)}) as server:
        yield OAuthLive(endpoint=server.endpoint, key=server.key, port=server.port,
                        base=server.endpoint.removesuffix("/mcp"), login=owner[0],
                        password=password, documents=documents)
