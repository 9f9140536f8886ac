"""PENDING until the note tools (memory_save, memory_search, memory_context, memory_details)
are on the server: `memory save/search/context/details` and the stdio bridge against a live
server. These fail on a server without the note tools; nothing here is skipped."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.agent_cli.conftest import bridge_environment

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

DETAILS = ("Context:\nLogins failed for users whose session outlived the key rotation.\n\n"
           "Decision:\nRotate signing keys with a one-day overlap.")


def test_save_search_context_details_from_the_shell(box, server):
    saved = box.run("save", "--title", "Overlap JWT signing keys on rotation",
                    "--what", "Signing keys rotate with a one-day overlap.",
                    "--why", "A hard switch logged everyone out at midnight.",
                    "--impact", "No forced logouts on rotation.", "--category", "decision",
                    "--tags", "auth, jwt", "--related-files", "auth/keys.py",
                    "--details", "-", "--json", input=DETAILS)
    assert saved.exit_code == 0, saved.output
    note_id = json.loads(saved.output)["id"]
    assert len(note_id) >= 32

    human = box.run("search", "why were people logged out at midnight")
    assert human.exit_code == 0, human.output
    assert "[decision] Overlap JWT signing keys on rotation" in human.output
    assert note_id[:8] in human.output and "shop-api" in human.output

    found = json.loads(box.run("search", "jwt rotation", "--project", "--json").output)
    [hit] = [r for r in found["results"] if r["id"] == note_id]
    assert hit["has_details"] is True and hit["project"] == "shop-api"
    assert hit["tags"] == ["auth", "jwt"] and isinstance(hit["score"], float)

    context = box.run("context")
    assert context.exit_code == 0, context.output
    assert context.output.startswith("shop-api: showing 1 of 1 note(s)")
    assert "Overlap JWT signing keys" in context.output and "memory_save" in context.output

    shown = box.run("details", note_id[:8])
    assert shown.exit_code == 0, shown.output
    assert "why: A hard switch logged everyone out at midnight." in shown.output
    assert "Rotate signing keys with a one-day overlap." in shown.output
    assert "files: auth/keys.py" in shown.output

    other = json.loads(box.run("context", "--project", "storefront", "--json").output)
    assert other["total"] == 0


def test_a_bad_category_is_refused_before_any_request(box, server):
    done = box.run("save", "--title", "t", "--what", "w", "--category", "idea")
    assert done.exit_code == 2 and "decision" in done.output


def test_the_bridge_saves_searches_gets_context_and_details(box, server, alice):
    env = bridge_environment(ECHO_MEM_URL=f"{server.url}/mcp", ECHO_MEM_API_KEY=alice.plaintext,
                             HOME=str(box.home), ECHO_MEMORY_HOME=str(box.server_home))
    params = StdioServerParameters(command=sys.executable, args=["-m", "agent_cli", "mcp"],
                                   env=env, cwd=str(box.project / "src"))

    async def body(client):
        names = {t.name for t in (await client.list_tools()).tools}
        saved = await client.call_tool("memory_save", {
            "title": "Retry webhooks with jitter", "category": "bug",
            "what": "Stripe webhooks retried in lockstep and overloaded the worker.",
            "why": "Every retry fired on the same second.", "details": "Added full jitter."})
        note_id = saved.structured_content["id"]
        found = await client.call_tool("memory_search", {"query": "webhook retries"})
        context = await client.call_tool("memory_context", {})
        full = await client.call_tool("memory_details", {"id": note_id})
        return names, note_id, found, context, full

    async def main():
        async with Client(params) as client:
            return await body(client)

    names, note_id, found, context, full = anyio.run(main)
    assert {"memory_save", "memory_search", "memory_context", "memory_details"} <= names
    assert found.structured_content["results"][0]["id"] == note_id
    assert found.structured_content["results"][0]["project"] == "shop-api"
    listed = context.structured_content.get("memories") or context.structured_content["results"]
    assert any(note_id.startswith(m["id"]) for m in listed)
    note = full.structured_content
    note = note.get("note") or (note.get("results") or [note])[0]
    assert note["id"] == note_id and note["details"] == "Added full jitter."


def test_delete_erases_a_note_by_prefix_after_asking(box, server):
    saved = json.loads(box.run("save", "--title", "Pin the Grumbleton client to 2.x",
                               "--what", "Grumbleton 3 dropped streaming.", "--json").output)
    box.run("save", "--title", "Pin the Grumbleton client to 2.x",
            "--what", "Grumbleton 3 dropped streaming; 3.1 restores it.")
    prefix = saved["id"][:8]

    declined = box.run("delete", prefix, input="n\n")
    assert declined.exit_code == 1 and "Erase note" in declined.output
    assert box.run("details", prefix).exit_code == 0

    done = box.run("delete", prefix, input="y\n")
    assert done.exit_code == 0, done.output
    assert f"erased note {prefix} and 1 earlier version(s)" in done.output
    assert "audit event(s)" in done.output
    gone = box.run("details", prefix)
    assert gone.exit_code == 1 and "no note" in gone.output
    again = box.run("delete", saved["id"], "--json")
    assert again.exit_code == 1 and saved["id"] in again.output


def test_delete_json_prints_the_servers_counts(box, server):
    saved = json.loads(box.run("save", "--title", "Flaky test quarantine",
                               "--what", "Quarantine flaky tests for a week.", "--json").output)
    done = box.run("delete", saved["id"], "--json")
    assert done.exit_code == 0, done.output
    reply = json.loads(done.output)
    assert (reply["notes"], reply["note_versions"], reply["units"]) == (1, 0, 0)
