"""`echo-memory quickstart` and `serve` as a user runs them, on a fresh home."""

from __future__ import annotations

import re
import time

import httpx
import pytest

from tests.cli.conftest import cli_env, run_cli
from tests.harness import free_port

KEY = re.compile(r"API key:\s+(em_[0-9a-f]{12}_[A-Za-z0-9_-]{43})")


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def test_quickstart_serves_on_localhost_and_prints_a_working_key(home, servers, tmp_path):
    port = free_port()
    server = servers(["quickstart", "--port", str(port)], cli_env(home), tmp_path / "qs.log")
    server.wait_healthy(port)
    output = server.output()
    key = KEY.search(output)[1]
    endpoint = f"http://localhost:{port}/mcp"  # a name: a passkey's relying party needs one
    assert f"endpoint:  {endpoint}" in output
    assert (f'claude mcp add --transport http echo-memory {endpoint} '
            f'--header "Authorization: Bearer {key}"') in output
    # `memory` by its path unless that one is first on PATH (EchoVault's may be).
    assert re.search(rf"  export ECHO_MEM_API_KEY={key}\n  (\S*/)?memory setup claude-code\n",
                     output)
    assert_sign_in_link_works(output, port)
    listed = httpx.get(f"http://127.0.0.1:{port}/api/v1/memories",
                       headers={"Authorization": f"Bearer {key}"})
    assert listed.status_code == 200
    assert [m["name"] for m in listed.json()["memories"]] == ["default"]
    assert httpx.get(f"http://127.0.0.1:{port}/api/v1/memories").status_code == 401

    # A second run (here without serving) finds the same account and does not print a key.
    again = run_cli("quickstart", "--no-serve", env=cli_env(home))
    assert again.returncode == 0, again.stderr
    assert "found your existing account" in again.stdout
    assert KEY.search(again.stdout) is None
    assert f"em_{key[3:15]}_…" in again.stdout
    status = run_cli("status", env=cli_env(home))
    assert "accounts:  1, memories: 1, active keys: 1" in status.stdout
    assert f"on 127.0.0.1:{port} (healthy)" in status.stdout

    # --new-key issues another, and it works against the running server.
    fresh = run_cli("quickstart", "--no-serve", "--new-key", env=cli_env(home))
    new_key = KEY.search(fresh.stdout)[1]
    assert new_key != key
    assert httpx.get(f"http://127.0.0.1:{port}/api/v1/memories",
                     headers={"Authorization": f"Bearer {new_key}"}).status_code == 200

    assert server.stop() == 0
    assert "stopped" in run_cli("status", env=cli_env(home)).stdout


SIGN_IN = re.compile(r"^  (http://\S+/password-reset/\S+/\S+/)$", re.MULTILINE)


def assert_sign_in_link_works(output: str, port: int) -> None:
    """The printed link opens a set-password page; setting one lands on the dashboard."""
    link = SIGN_IN.search(output)
    assert link, output
    link = link[1]
    assert link.startswith(f"http://localhost:{port}/password-reset/")
    with httpx.Client(follow_redirects=True) as browser:
        form = browser.get(link)
        assert form.status_code == 200 and "Set a new password" in form.text
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)[1]
        done = browser.post(str(form.url), data={
            "csrfmiddlewaretoken": csrf, "new_password1": "a long owner passphrase 7",
            "new_password2": "a long owner passphrase 7"}, headers={"Referer": str(form.url)})
        assert done.url.path == "/dashboard/" and "default" in done.text
    assert httpx.get(link).status_code == 404  # it worked once


def test_a_second_serve_on_the_same_home_joins_the_running_database(home, servers, tmp_path):
    env = cli_env(home)
    assert run_cli("quickstart", "--no-serve", env=env).returncode == 0
    first_port, second_port = free_port(), free_port()
    first = servers(["serve", "--port", str(first_port)], env, tmp_path / "first.log")
    first.wait_healthy(first_port)
    postmaster = (home / "pgdata" / "postmaster.pid").read_text().splitlines()[0]
    second = servers(["serve", "--port", str(second_port)], env, tmp_path / "second.log")
    second.wait_healthy(second_port)
    assert (home / "pgdata" / "postmaster.pid").read_text().splitlines()[0] == postmaster

    assert first.stop() == 0
    # The database outlives the first server because the second still uses it.
    assert httpx.get(f"http://127.0.0.1:{second_port}/healthz").json() == {"status": "ok"}
    assert second.stop() == 0
    assert not (home / "pgdata" / "postmaster.pid").exists()
    # And the data survived both: a later start sees the same account.
    assert "found your existing account" in run_cli("quickstart", "--no-serve", env=env).stdout


def test_every_command_has_help(home):
    commands = ["quickstart", "serve", "migrate", "createsuperuser", "manage", "worker", "beat",
                "index", "status", "audit verify", "repair dates"]
    top = run_cli("--help", env=cli_env(home))
    assert top.returncode == 0
    for command in commands:
        assert command.split()[0] in top.stdout
        result = run_cli(*command.split(), "--help", env=cli_env(home))
        assert result.returncode == 0, (command, result.stderr)
        assert "Usage: echo-memory " + command in result.stdout
    assert not home.exists(), "--help must not create the home or start a database"


def _form_post(browser: httpx.Client, url: str, data: dict[str, str]) -> httpx.Response:
    page = browser.get(url)
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
    return browser.post(str(page.url), data={"csrfmiddlewaretoken": csrf, **data})


def test_a_hosted_box_signs_people_up_and_verifies_their_email(home, servers, tmp_path):
    """ECHO_MEMORY_SELF_HOSTED=0 on the single box: open sign-up, email verification on,
    the mail printed to the server's console (no mail server configured), the Free plan
    metered, and billing pages that say Stripe is not configured instead of failing."""
    port = free_port()
    server = servers(["quickstart", "--port", str(port)],
                     cli_env(home, ECHO_MEMORY_SELF_HOSTED="0"), tmp_path / "hosted.log")
    server.wait_healthy(port)
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(follow_redirects=True) as browser:
        signed_up = _form_post(browser, f"{base}/signup/", {
            "email": "Grace@Example.com", "password": "a long passphrase 42"})
        assert signed_up.url.path == "/signup/sent/" and "Check your email" in signed_up.text
        signed_in = _form_post(browser, f"{base}/login/", {
            "username": "grace@example.com", "password": "a long passphrase 42"})
        assert signed_in.url.path == "/dashboard/" and "Confirm your email" in signed_in.text
        assert browser.get(f"{base}/keys/new/").status_code == 403
        deadline = time.monotonic() + 10
        while not (mailed := VERIFY.search(server.output())) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert mailed, server.output()
        assert "To: grace@example.com" in server.output()
        confirmed = browser.get(mailed[0])
        assert confirmed.url.path == "/dashboard/" and "is confirmed" in confirmed.text
        created = _form_post(browser, f"{base}/keys/new/", {"name": "laptop",
                                                            "tool": "claude-code"})
        assert created.status_code == 200 and KEY_FIELD.search(created.text)
        assert "script-src 'self'" in created.headers["Content-Security-Policy"]
        key = KEY_FIELD.search(created.text)[0]
        # Metered on the Free plan, with billing pages that say Stripe is not set up.
        usage = _tool_call(base, key, "get_usage", {})
        assert (usage["metered"], usage["plan"], usage["allowed"]) == (True, "free", 10_000)
        billing = browser.get(f"{base}/billing")
        assert billing.status_code == 200
        assert "Billing is not configured on this server." in billing.text
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', billing.text)[1]
        upgrade = browser.post(f"{base}/billing/checkout/",
                               data={"csrfmiddlewaretoken": csrf, "plan": "pro"})
        assert upgrade.url.path == "/billing" and "not configured" in upgrade.text
    assert server.stop() == 0


def _tool_call(base: str, key: str, name: str, arguments: dict) -> dict:
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=base, headers=headers) as agent:
        opened = agent.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                          "params": {"protocolVersion": "2025-06-18",
                                                     "capabilities": {},
                                                     "clientInfo": {"name": "t", "version": "1"}}})
        agent.headers["Mcp-Session-Id"] = opened.headers["Mcp-Session-Id"]
        agent.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        called = agent.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                          "params": {"name": name, "arguments": arguments}})
        return called.json()["result"]


VERIFY = re.compile(r"http://127\.0\.0\.1:\d+/verify-email/\S+/")
KEY_FIELD = re.compile(r"em_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")
