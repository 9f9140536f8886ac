"""The tools/list check that ends `memory setup`, against a live server: it names the
tools when all is well, and says which problem it is when not (no key, a refused key,
no server)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mcp_gateway.tools import TOOLS
from tests.harness import free_port

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


def test_a_missing_key_is_named_as_such(box, monkeypatch, live_server, alice):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/mcp")
    done = box.run("setup", "codex")
    assert done.exit_code == 1
    assert "check failed: the server wants an API key and none is set" in done.output
    assert "export ECHO_MEM_API_KEY=" in done.output
    assert "The config is written" in done.output
    assert (box.home / ".codex" / "config.toml").exists()


def test_a_refused_key_is_a_401_explained(box, monkeypatch, live_server, alice):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/mcp")
    revoked = alice.plaintext[:-4] + "zzzz"
    monkeypatch.setenv("ECHO_MEM_API_KEY", revoked)
    done = box.run("setup", "opencode")
    assert done.exit_code == 1
    assert "refused the API key from $ECHO_MEM_API_KEY (401" in done.output
    assert revoked not in done.output


def test_a_server_that_is_down_is_named_as_such(box, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    monkeypatch.setenv("ECHO_MEM_URL", url)
    monkeypatch.setenv("ECHO_MEM_API_KEY", "em_0123456789ab_" + "k" * 43)
    done = box.run("setup", "windsurf")
    assert done.exit_code == 1
    assert f"cannot reach {url}" in done.output and "is the server running?" in done.output


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


def test_a_server_without_the_note_tools_fails_the_check_with_exit_1(box, monkeypatch):
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
    assert done.exit_code == 1
    assert "check failed:" in done.output and "without the note tools (memory_save" in done.output
    assert "upgrade the server" in done.output and "--no-check" in done.output


def test_a_url_that_answers_json_but_not_mcp_is_named_as_such(box, monkeypatch, live_server,
                                                               alice):
    monkeypatch.setenv("ECHO_MEM_URL", f"{live_server.url}/api/v1/tools/get_usage")
    monkeypatch.setenv("ECHO_MEM_API_KEY", alice.plaintext)
    done = box.run("setup", "codex")
    assert done.exit_code == 1, done.output
    assert "check failed: the server answered 400" in done.output
    assert "is the URL the MCP endpoint? it ends in /mcp" in done.output
