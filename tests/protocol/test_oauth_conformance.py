"""The official conformance suite's authorization-server scenarios (pinned in
tests/protocol/node/package.json) against the live server's OAuth side, with no proxy adding
a key: its metadata (RFC 8414, with PKCE S256 and client ID metadata documents advertised)
and an authorization code grant. The suite prints the authorize URL and waits for its
callback on 127.0.0.1; here a person (tests/protocol/oauth_user.py) signs in and allows it
on the real pages, and the browser's last step is the suite's own callback."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import httpx

from tests.harness import free_port
from tests.protocol.oauth_user import Person

NODE = Path(__file__).resolve().parent / "node"
VERSION = "2026-07-28"
# The suite's checks, each of which must pass (a WARNING, say for CIMD, is a failure here).
CHECKS = {"authorization-server-metadata", "authorization-server-metadata-cimd",
          "authorization-code-grant"}


def register(live, callback: str) -> str:
    """A public client with the suite's callback, registered as any connector registers."""
    answer = httpx.post(f"{live.base}/oauth/register", json={
        "client_name": "MCP conformance suite", "redirect_uris": [callback],
        "grant_types": ["authorization_code"], "response_types": ["code"],
        "token_endpoint_auth_method": "none"})
    assert answer.status_code == 201, answer.text
    return answer.json()["client_id"]


def deliver(callback_url: str) -> None:
    """The browser's last step: the redirect to the suite's callback server, which it starts
    listening as it prints the URL (so it may still be on its way)."""
    for _ in range(50):
        try:
            delivered = httpx.get(callback_url)
            break
        except httpx.ConnectError:
            time.sleep(0.1)
    else:
        raise AssertionError(f"the suite's callback server never listened: {callback_url}")
    assert delivered.status_code == 200, delivered.text


def test_conformance_authorization_server_scenarios_pass(oauth_live, tmp_path):
    live = oauth_live
    port = free_port()
    callback = f"http://127.0.0.1:{port}/callback"
    client_id = register(live, callback)
    command = (f"source ./install.sh && exec node node_modules/.bin/conformance authorization"
               f" --url {live.base} --client-id {client_id} --resource {live.endpoint}"
               f" -p {port} -o {tmp_path} --spec-version {VERSION}")
    suite = subprocess.Popen(["bash", "-c", command], cwd=NODE, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    killer = threading.Timer(120, suite.kill)
    killer.start()
    printed: list[str] = []
    person = Person(live.login, live.password, callback)
    try:
        for line in suite.stdout:
            printed.append(line)
            if line.startswith(f"{live.base}/oauth/authorize?"):
                deliver(person.authorize(line.strip()))
        assert suite.wait() == 0, "".join(printed)
    finally:
        killer.cancel()
        suite.kill()
    output = "".join(printed)
    assert person.callback_url, output
    checks = {check["id"]: check for checks in tmp_path.rglob("checks.json")
              for check in json.loads(checks.read_text())}
    assert set(checks) >= CHECKS, output
    failed = {name: check for name, check in checks.items() if check["status"] != "SUCCESS"}
    assert not failed, json.dumps(failed, indent=1)
    grant = checks["authorization-code-grant"]["details"]
    assert grant["authorizationResponseUrl"].startswith(f"{callback}?")
    assert grant["body"]["token_type"] == "Bearer"
