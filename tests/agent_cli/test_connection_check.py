"""The tools/list check that `memory setup` makes before it writes, against a live server:
it names the tools when all is well; when not, it writes nothing and says in one line which
problem it is (no key, a refused key, no server, a URL that is a web page or not MCP)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.agent_cli.test_setup_round_trip import GLOBAL_FILES
from tests.harness import free_port
from tools.registry import TOOLS

GRAPH_TOOLS = ("write_episode", "query_memory", "trace_cause")


def test_setup_checks_the_connection_with_tools_list(box, monkeypatch, live_server, alice):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/mcp")
    monkeypatch.setenv("ECHO_MEM_API_KEY", alice.plaintext)
    done = box.run("setup", "cursor", "--project")
    assert done.exit_code == 0, done.output
    assert f"check: {live_server.url}/mcp answers tools/list with" in done.output
    assert all(name in done.output for name in GRAPH_TOOLS)
    entry = json.loads((box.project / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert entry["echo-memory"]["headers"]["X-Echo-Project"] == "shop-api"


def refused(box, done, *reasons: str) -> None:
    """Exit 1, one line on stderr saying why, no web page, and nothing written."""
    assert done.exit_code == 1, done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("memory: setup refused, nothing was written: "), lines[0]
    assert all(reason in lines[0] for reason in reasons), lines[0]
    assert "<" not in lines[0] and "html>" not in lines[0].lower()
    assert "check:" not in done.output
    written = [p for p in box.home.rglob("*") if ".local" not in p.parts]
    assert written == [], written
    assert not any(box.project.rglob("*.json")) and not any(box.project.rglob("*.toml"))


def test_a_missing_key_is_named_as_such(box, monkeypatch, live_server, alice):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/mcp")
    done = box.run("setup", "codex")
    refused(box, done, "the server wants an API key and none is set",
            "export ECHO_MEM_API_KEY=")


def test_a_refused_key_is_a_401_explained(box, monkeypatch, live_server, alice):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/mcp")
    revoked = alice.plaintext[:-4] + "zzzz"
    monkeypatch.setenv("ECHO_MEM_API_KEY", revoked)
    done = box.run("setup", "opencode")
    refused(box, done, "refused the API key from $ECHO_MEM_API_KEY (401")
    assert revoked not in done.output


def test_a_server_that_is_down_is_named_as_such(box, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    monkeypatch.setenv("ECHO_MEM_URL", url)
    monkeypatch.setenv("ECHO_MEM_API_KEY", "em_0123456789ab_" + "k" * 43)
    done = box.run("setup", "windsurf")
    refused(box, done, f"cannot reach {url}", "is the server running?")


@pytest.mark.parametrize("client", list(GLOBAL_FILES))
def test_a_web_page_instead_of_the_endpoint_is_refused_for_every_client(
        box, monkeypatch, live_server, alice, client):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/login/")  # the sign-in page
    monkeypatch.setenv("ECHO_MEM_API_KEY", alice.plaintext)
    done = box.run("setup", client)
    refused(box, done, "an HTML page", "ends in /mcp")


@pytest.mark.parametrize(("path", "reasons"), [
    ("/no-such-page", ("is not an MCP endpoint (404, an HTML page", "ends in /mcp")),
    ("/", ("an HTML page", "ends in /mcp")),
    ("/api/v1/tools/get_usage", ("the server answered 400", "it ends in /mcp")),
    ("/dashboard/", ("answered 403: an HTML page ('This form has expired", "ends in /mcp")),
])
def test_every_kind_of_wrong_url_is_refused_in_one_line(box, monkeypatch, live_server, alice,
                                                         path, reasons):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}{path}")
    monkeypatch.setenv("ECHO_MEM_API_KEY", alice.plaintext)
    done = box.run("setup", "cursor")
    refused(box, done, *reasons)


@pytest.mark.parametrize("url", ["127.0.0.1:8000/mcp", "ftp://example.com/mcp", "https:///mcp"])
def test_a_url_that_is_not_http_is_refused_before_any_request(box, monkeypatch, url):
    monkeypatch.setenv("ECHO_MEM_URL", url)
    done = box.run("setup", "claude-code")
    refused(box, done, "is not an http(s) URL")


def test_no_check_writes_without_asking_the_server(box, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_URL", f"http://127.0.0.1:{free_port()}/mcp")
    done = box.run("setup", "cursor", "--no-check")
    assert done.exit_code == 0, done.output
    assert (box.home / ".cursor" / "mcp.json").exists() and "check:" not in done.output


def test_delete_says_plainly_when_the_server_has_no_note_erasure(box, monkeypatch,
                                                                 live_server, alice):
    # An older server: the same endpoint without the forget tool.
    monkeypatch.delitem(TOOLS, "forget")
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/mcp")
    monkeypatch.setenv("ECHO_MEM_API_KEY", alice.plaintext)
    done = box.run("delete", "0123456789abcdef", "--yes")
    assert done.exit_code == 1
    assert "deleting notes is not supported by this server" in done.output


class _GraphOnlyServer(BaseHTTPRequestHandler):
    """An MCP endpoint that lists the graph tools only, as an Echo Memory from before the
    note tools does: setup must not call that a working connection."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in body:
            self.send_response(202)
            self.end_headers()
            return
        result = ({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "old", "version": "1"}}
                  if body["method"] == "initialize" else
                  {"tools": [{"name": name, "inputSchema": {"type": "object"}}
                             for name in GRAPH_TOOLS]})
        reply = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def do_DELETE(self):
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_server_without_the_note_tools_is_refused(box, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GraphOnlyServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
        monkeypatch.setenv("ECHO_MEM_URL", url)
        monkeypatch.setenv("ECHO_MEM_API_KEY", "em_0123456789ab_" + "k" * 43)
        done = box.run("setup", "cursor")
    finally:
        server.shutdown()
    refused(box, done, "without the note tools (memory_save", "upgrade the server",
            "--no-check")


class _Redirect(BaseHTTPRequestHandler):
    """http:// in front of a server that only speaks https, as a load balancer answers."""

    def do_POST(self):
        self.send_response(301)
        self.send_header("Location", "https://memory.example.com/mcp")
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><title>Moved</title><body>moved</body></html>")

    def log_message(self, *args):
        pass


def test_a_redirect_names_where_it_goes(box, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("ECHO_MEM_URL", f"http://127.0.0.1:{server.server_address[1]}/mcp")
        done = box.run("setup", "cursor")
    finally:
        server.shutdown()
    refused(box, done, "redirects (301) to https://memory.example.com/mcp")
