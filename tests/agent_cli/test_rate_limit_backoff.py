"""A coding session's bursts meet the server's rate limit (lowered here, on a real server):
`memory` commands and the stdio bridge wait what Retry-After says (saying so on stderr), and
a save that still cannot go through is kept on this machine and sent by the next command or
bridge call, never lost."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from agent_cli import outbox
from memories.models import Note
from tests.agent_cli.conftest import bridge_environment

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def test_a_burst_of_commands_waits_out_the_limit_and_loses_nothing(box, server, settings):
    # Each command is four requests (initialize, initialized, the call, the close): three
    # requests per two seconds makes every command wait, on any machine.
    settings.RATE_LIMIT_PER_MINUTE, settings.RATE_LIMIT_WINDOW_SECONDS = 3, 2
    for n in range(3):
        done = box.run("save", "--title", f"Decision {n}", "--what", f"We chose option {n}.")
        assert done.exit_code == 0, done.output
    found = box.run("search", "which option did we choose")
    context = box.run("context")
    assert found.exit_code == 0 and context.exit_code == 0, found.output + context.output
    waited = done.stderr + found.stderr + context.stderr
    assert "memory: rate limited by the server; waiting" in waited
    assert "(its Retry-After), then sending the request again" in waited
    assert "Decision" not in done.stderr  # the messages go to stderr, results to stdout
    assert Note.objects.count() == 3 and "showing 3 of 3" in context.output


def test_a_save_that_cannot_wait_is_kept_and_sent_by_the_next_command(box, server, alice,
                                                                       settings, monkeypatch):
    settings.RATE_LIMIT_PER_MINUTE, settings.RATE_LIMIT_WINDOW_SECONDS = 2, 60
    monkeypatch.setenv("ECHO_MEM_RATE_WAIT", "1")  # Retry-After will be about a minute
    done = box.run("save", "--title", "Pin Grumbleton to 2.x", "--what", "3.0 dropped streaming.",
                   "--tags", "deps")
    assert done.exit_code == 75, done.output
    assert "rate limited by the server: it takes requests from this key again in" in done.stderr
    assert f"The note is kept in {outbox.path()}" in done.stderr
    assert not Note.objects.exists()
    [kept] = outbox.waiting()
    assert kept["arguments"]["title"] == "Pin Grumbleton to 2.x"
    assert kept["arguments"]["project"] == "shop-api"
    assert alice.plaintext not in outbox.path().read_text()  # the key's hash, never the key
    assert (outbox.path().stat().st_mode & 0o777) == 0o600
    listed = box.run("outbox")
    assert "1 save(s) waiting" in listed.output and "Pin Grumbleton" in listed.output

    settings.RATE_LIMIT_PER_MINUTE = 1000  # the minute passes
    found = box.run("search", "grumbleton streaming")
    assert found.exit_code == 0, found.output
    assert "sent a note kept since" in found.stderr and "Pin Grumbleton" in found.output
    note = Note.objects.get()
    assert (note.title, note.project, note.tags) == ("Pin Grumbleton to 2.x", "shop-api",
                                                     ["deps"])
    assert outbox.waiting() == [] and not outbox.path().exists()


def test_kept_saves_go_only_to_their_own_endpoint_and_key(box, server, settings, monkeypatch,
                                                          bob):
    settings.RATE_LIMIT_PER_MINUTE, settings.RATE_LIMIT_WINDOW_SECONDS = 2, 60
    monkeypatch.setenv("ECHO_MEM_RATE_WAIT", "0")
    assert box.run("save", "--title", "Alice's", "--what", "Kept for alice.").exit_code == 75
    settings.RATE_LIMIT_PER_MINUTE = 1000
    monkeypatch.setenv("ECHO_MEM_API_KEY", bob.plaintext)  # another key on this machine
    assert box.run("context").exit_code == 0
    assert not Note.objects.exists() and len(outbox.waiting()) == 1


def test_a_kept_save_the_server_refuses_stays_and_is_not_sent_again(box, server, settings,
                                                                    monkeypatch):
    settings.RATE_LIMIT_PER_MINUTE, settings.RATE_LIMIT_WINDOW_SECONDS = 2, 60
    monkeypatch.setenv("ECHO_MEM_RATE_WAIT", "0")
    assert box.run("save", "--title", "Bad", "--what", "x", "--memory", "nope").exit_code == 75
    settings.RATE_LIMIT_PER_MINUTE = 1000
    done = box.run("context")
    assert done.exit_code == 0 and "was refused" in done.stderr and "nope" in done.stderr
    [kept] = outbox.waiting()
    assert "nope" in kept["refused"]
    again = box.run("context")
    assert "was refused" not in again.stderr
    assert box.run("outbox", "--drop", input="y\n").exit_code == 0
    assert outbox.waiting() == []


def test_a_wait_setting_that_is_not_seconds_is_named(box, server, monkeypatch):
    monkeypatch.setenv("ECHO_MEM_RATE_WAIT", "soon")
    done = box.run("context")
    assert done.exit_code == 1
    assert "ECHO_MEM_RATE_WAIT='soon' is not a number of seconds" in done.output


def bridge(box, server, alice, **extra: str):
    env = bridge_environment(ECHO_MEM_URL=f"{server.url}/mcp",
                             ECHO_MEM_API_KEY=alice.plaintext, HOME=str(box.home),
                             ECHO_MEMORY_HOME=str(box.server_home), **extra)
    return StdioServerParameters(command=sys.executable, args=["-m", "agent_cli", "mcp"],
                                 env=env, cwd=str(box.project / "src"))


def run_bridge(params, body):
    async def main():
        async with Client(params) as client:
            return await body(client)

    return anyio.run(main)


def test_the_bridge_waits_out_the_limit_during_a_session(box, server, alice, settings):
    settings.RATE_LIMIT_PER_MINUTE, settings.RATE_LIMIT_WINDOW_SECONDS = 3, 2

    async def body(client):
        replies = []
        for n in range(3):  # a search per prompt, a save per decision
            replies.append(await client.call_tool("memory_search", {"query": f"topic {n}"}))
            replies.append(await client.call_tool("memory_save", {
                "title": f"Bridge decision {n}", "what": f"Chose {n}."}))
        return replies

    replies = run_bridge(bridge(box, server, alice), body)
    assert all(reply.is_error is False for reply in replies), [r.content for r in replies]
    assert Note.objects.filter(project="shop-api").count() == 3


def test_the_bridge_keeps_a_save_it_cannot_send_and_sends_it_next_call(box, server, alice,
                                                                      settings):
    settings.RATE_LIMIT_PER_MINUTE, settings.RATE_LIMIT_WINDOW_SECONDS = 3, 60
    params = bridge(box, server, alice, ECHO_MEM_RATE_WAIT="1")

    async def body(client):
        saved = await client.call_tool("memory_save", {"title": "Kept by the bridge",
                                                       "what": "Sent on the next call."})
        settings.RATE_LIMIT_PER_MINUTE = 1000  # the minute passes
        later = await client.call_tool("memory_context", {})
        return saved, later

    saved, later = run_bridge(params, body)
    assert saved.is_error is True
    assert "The bridge kept the note" in saved.content[0].text
    assert "do not save it again" in saved.content[0].text
    assert later.is_error is False
    note = Note.objects.get()
    assert (note.title, note.project) == ("Kept by the bridge", "shop-api")
    listed = later.structured_content["memories"]
    assert [row["title"] for row in listed] == ["Kept by the bridge"]
    assert json.loads(json.dumps(outbox.waiting())) == []
