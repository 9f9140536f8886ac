"""Every free-text argument of every tool is redacted where tool calls enter, through either
door, before anything is stored, audited, embedded or read back.

The corpus is taken from the registry: each tool's inputSchema is walked for its string
fields (not choices, ids or times), so a field or tool added later is covered without a
line here. One write per tool carries every kind of secret (tests/notes/secret_corpus.py),
then every way the text comes back is read: the tools' replies, every table, the vectors,
the audit page, its CSV and JSONL exports, and the explorer's pages.
"""

from __future__ import annotations

import html
import json
import uuid
from typing import Any

import numpy as np
import pytest
from django.db import connection

from accounts.redaction_settings import redaction_settings_save
from memories.models import Note
from memories.search import indexing
from memories.search.embeddings import get_embedder
from redaction.redactor import Redactor, redactor_with
from tests.engine.conftest import database_text
from tests.notes.conftest import rest
from tests.notes.secret_corpus import CUSTOM_PATTERN, EVERY_KIND, secret_of
from tests.tool_arguments import base_arguments
from tools import free_text
from tools.parsing import parse
from tools.registry import TOOLS

Path = tuple[str, ...]
SECRETS = [secret_of(entry) for entry in EVERY_KIND]
# The only string arguments passed on as sent: they name something that exists.
IDENTIFIERS: dict[str, set[Path]] = {
    "write_episode": {("memory",), ("entity_resolutions", "{}")},
    "memory_context": {("memory",), ("cursor",)},
    "memory_details": {("memory",), ("id",)},
    "get_audit_log": {("memory",), ("cursor",)},
    "forget": {("memory",), ("notes", "[]")},
    **{name: {("memory",)} for name in ("query_memory", "trace_cause", "get_episode",
                                         "record_recall_save", "memory_save",
                                         "memory_search")},
}
# Identifiers whose own validation leaves no room for a secret ("new" or an entity id).
NO_ROOM = {("entity_resolutions", "{}")}


def string_paths(schema: dict[str, Any], path: Path = ()) -> dict[Path, int | None]:
    """Every string leaf of a JSON Schema that is text (no enum, const or format), with its
    maxLength; `[]` is a list item, `{key}` a dict key, `{}` a dict value."""
    found: dict[Path, int | None] = {}
    for branch in schema.get("anyOf", []):
        found |= string_paths(branch, path)
    kind = schema.get("type")
    if kind == "object":
        for name, sub in schema.get("properties", {}).items():
            found |= string_paths(sub, (*path, name))
        if isinstance(schema.get("additionalProperties"), dict):
            found[(*path, "{key}")] = None
            found |= string_paths(schema["additionalProperties"], (*path, "{}"))
    elif kind == "array":
        found |= string_paths(schema.get("items", {}), (*path, "[]"))
    elif kind == "string" and not {"enum", "const", "format"} & set(schema):
        found[path] = schema.get("maxLength")
    return found


def with_secrets(name: str, base: dict[str, Any], *, identifiers_too: bool) -> dict[str, Any]:
    """`base` with a secret in every text field of the tool's schema (missing optional
    ones added). Equal texts get the same secrets (a name and the facts that name it), sized
    to the shortest field they stand in; a field without a limit gets every kind."""
    paths = string_paths(TOOLS[name].input_schema())
    skipped = NO_ROOM if identifiers_too else IDENTIFIERS.get(name, set())
    texts = {path: limit for path, limit in paths.items() if path not in skipped}
    arguments = json.loads(json.dumps(base))
    for path in texts:  # optional text fields the base leaves out
        if len(path) == 1 and path[0] not in arguments:
            arguments[path[0]] = "x"
        elif len(path) == 2 and path[1] == "[]" and path[0] not in arguments:
            arguments[path[0]] = ["x"]
    shortest: dict[str, int | None] = {}
    for path, text in _leaves(arguments):
        if _pattern_of(path) in texts:
            limit, known = texts[_pattern_of(path)], shortest.get(text)
            shortest[text] = limit if known is None else known if limit is None else min(
                known, limit)

    def variant(text: str) -> str:
        room = shortest[text]
        if room is None:
            return text + " " + " ; ".join(entry[1] for entry in EVERY_KIND)
        start = sum(map(ord, text)) % len(EVERY_KIND)
        out = text
        for entry in EVERY_KIND[start:] + EVERY_KIND[:start]:
            if len(out) + 1 + len(entry[1]) <= room:
                out += " " + entry[1]
        assert out != text, f"no secret fits in {text!r} (at most {room} characters)"
        return out

    return _rewrite(arguments, (), lambda path, text: variant(text)
                    if _pattern_of(path) in texts else text)


def _pattern_of(path: Path) -> Path:
    return tuple("[]" if isinstance(p, int) else p for p in path)


def _leaves(value: Any, path: tuple = ()):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            if _is_map(path):
                yield (*path, "{key}"), key
            yield from _leaves(item, (*path, "{}") if _is_map(path) else (*path, key))


def _is_map(path: tuple) -> bool:
    return path[-1:] == ("entity_resolutions",)


def _rewrite(value: Any, path: tuple, change) -> Any:
    if isinstance(value, str):
        return change(path, value)
    if isinstance(value, list):
        return [_rewrite(item, (*path, i), change) for i, item in enumerate(value)]
    if isinstance(value, dict):
        if _is_map(path):
            return {change((*path, "{key}"), key): _rewrite(item, (*path, "{}"), change)
                    for key, item in value.items()}
        return {key: _rewrite(item, (*path, key), change) for key, item in value.items()}
    return value


def _secrets_in(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_the_walk_knows_every_kind_of_argument_the_registry_declares():
    """The schema walk above sees free text where the models declare it: if a tool took
    text in a shape the walk misses, the corpus below would miss it too."""
    walked = {name: set(string_paths(tool.input_schema())) for name, tool in TOOLS.items()}
    assert ("facts", "[]", "fact") in walked["write_episode"]
    assert ("entity_resolutions", "{key}") in walked["write_episode"]
    assert ("tags", "[]") in walked["memory_save"]
    assert ("note",) in walked["record_recall_save"]
    assert ("session_id",) in walked["record_recall_save"]
    assert not walked["get_usage"]
    assert set(base_arguments({"episode_id": "", "fact_id": "", "note_id": ""})) == set(TOOLS)


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_text_argument_of_every_tool_but_its_identifiers_is_redacted_where_calls_enter(
        name):
    ids = {"episode_id": str(uuid.uuid4()), "fact_id": str(uuid.uuid4()),
           "note_id": str(uuid.uuid4())}
    tool = TOOLS[name]
    arguments = with_secrets(name, base_arguments(ids)[name], identifiers_too=True)
    redactor = redactor_with(enabled=True, patterns=[CUSTOM_PATTERN])

    cleaned, count = free_text.redacted(redactor, parse(tool.args, arguments))

    kept = {_pattern_of(path) for path, text in _leaves(cleaned.model_dump(mode="json"))
            if _secrets_in(text)}
    assert kept == IDENTIFIERS.get(name, set()) - NO_ROOM
    paths = set(string_paths(tool.input_schema()))
    assert count >= (1 if paths - IDENTIFIERS.get(name, set()) else 0)
    assert free_text.redacted(Redactor(enabled=False), parse(tool.args, arguments))[1] == 0


@pytest.fixture
def custom_pattern(alice):
    redaction_settings_save(alice.account.pk, enabled=True, patterns=[CUSTOM_PATTERN])


@pytest.fixture
def call(request, client, alice, mcp_for):
    """One tool call through the door the test names; the tool's output."""
    agent = mcp_for(alice) if request.param == "mcp" else None

    def run(name: str, arguments: dict) -> tuple[dict, str]:
        if agent is not None:
            reply = agent.call(name, arguments)
            assert "error" not in reply and reply["result"]["isError"] is False, reply
            return reply["result"]["structuredContent"], json.dumps(reply)
        response = rest(client, alice, name, arguments)
        assert response.status_code == 200, response.content
        return response.json(), response.content.decode()

    return run


def _vector_of(table: str, pk) -> tuple[str, np.ndarray]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT search_text, embedding::text FROM {table} WHERE id = %s", [pk])
        text, vector = cursor.fetchone()
    return text, np.array(vector.strip("[]").split(","), dtype=np.float32)


@pytest.mark.parametrize("call", ["mcp", "rest"], indirect=True)
def test_one_write_per_tool_with_every_secret_leaves_none_in_any_read_back(
        call, client, alice, custom_pattern):
    replies: list[str] = []

    def tool(name: str, arguments: dict) -> dict:
        output, text = call(name, with_secrets(name, arguments, identifiers_too=False))
        replies.append(text)
        return output

    bases = base_arguments({"episode_id": "", "fact_id": "", "note_id": ""})
    written = tool("write_episode", bases["write_episode"])
    assert written["stored"] is True and written["redacted"] >= len(EVERY_KIND), written
    ids = {"episode_id": written["episode_id"],
           "fact_id": written["edges_created"][0]["fact_id"]}
    saved_fact = tool("record_recall_save", base_arguments({**ids, "note_id": ""})[
        "record_recall_save"])
    assert saved_fact["recorded"] is True and saved_fact["redacted"] >= len(EVERY_KIND)
    note = tool("memory_save", bases["memory_save"])
    assert note["redacted"] >= len(EVERY_KIND)
    ids["note_id"] = note["id"]
    indexing.index_pending()
    reads = base_arguments(ids)
    for name in ("query_memory", "get_episode", "get_audit_log", "memory_search",
                 "memory_context", "memory_details", "get_usage"):
        tool(name, reads[name])
    traced = tool("trace_cause", reads["trace_cause"])
    # A subject is redacted the way the name it looks for was: the entity is found.
    assert traced["anchors"], traced

    # The replies, and every row of every table (audit events, recall saves, episodes,
    # notes and their versions, the texts the vectors are made from, MCP sessions).
    for text in replies:
        assert _secrets_in(text) == [], text[:300]
    stored = database_text()
    assert _secrets_in(stored) == []
    assert "[REDACTED:" in stored
    # The vectors are the model's vectors of the redacted texts.
    embedder = get_embedder()
    for table, pk in (("memories_fact", ids["fact_id"]), ("memories_note", note["id"])):
        text, vector = _vector_of(table, pk)
        assert "[REDACTED:" in text
        assert float(vector @ embedder.embed([text])[0]) == pytest.approx(1.0, abs=2e-3)

    # What people read: the audit page, its exports, the explorer.
    client.force_login(alice.user)
    note_row = Note.objects.get(pk=note["id"])
    pages = ["/audit/", "/audit/export.csv", "/audit/export.jsonl", "/dashboard/",
             "/memories/default/", f"/memories/default/episodes/{ids['episode_id']}/",
             "/memories/default/notes/", f"/memories/default/notes/{note_row.pk}/"]
    entity = next(e["id"] for e in written["entities"] if e["name"].startswith("Vault"))
    pages.append(f"/memories/default/entities/{entity}/")
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        body = (b"".join(response.streaming_content) if response.streaming
                else response.content).decode()
        assert _secrets_in(html.unescape(body)) == [], page
        if page.startswith("/audit/"):
            assert "[REDACTED:" in html.unescape(body), page


@pytest.mark.parametrize("call", ["mcp", "rest"], indirect=True)
def test_a_recall_saves_note_and_session_id_never_reach_the_audit_page_or_its_exports(
        call, client, alice):
    """The line of issue 37 this module started from: record_recall_save stored both as
    written, and the audit page and its exports showed them."""
    written, _ = call("write_episode", base_arguments(dict.fromkeys(
        ("episode_id", "fact_id", "note_id"), ""))["write_episode"])
    secret, session = secret_of(EVERY_KIND[3]), secret_of(EVERY_KIND[-1])
    saved, reply = call("record_recall_save", {
        "scope": "shared", "fact_id": written["edges_created"][0]["fact_id"],
        "note": f"It saved re-typing {EVERY_KIND[3][1]}", "session_id": EVERY_KIND[-1][1]})
    assert secret not in reply and session not in reply
    assert secret not in database_text() and session not in database_text()
    client.force_login(alice.user)
    for page in ("/audit/", "/audit/export.csv", "/audit/export.jsonl"):
        response = client.get(page)
        body = (b"".join(response.streaming_content) if response.streaming
                else response.content).decode()
        assert "recall_save.recorded" in body
        assert secret not in html.unescape(body) and session not in html.unescape(body)
    assert saved["redacted"] == 2


def test_what_a_request_adds_to_the_arguments_is_redacted_too(client, alice, mcp_for):
    """The X-Echo-Project header fills `project` before the entry point, and the MCP
    client's name is stored with its session: neither keeps a secret."""
    token = EVERY_KIND[3]
    response = rest(client, alice, "memory_save", {"title": "Header", "what": "From a header"},
                    **{"X-Echo-Project": f"ops-{token[1]}"})
    assert response.status_code == 200, response.content
    assert response.json()["redacted"] == 1
    agent = mcp_for(alice, initialize=False)
    reply = agent.request("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": f"agent {token[1]}", "version": f"1 {token[1]}"}})
    assert reply.status_code == 200
    assert _secrets_in(database_text()) == []
