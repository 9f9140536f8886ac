"""The official `mcp` Python SDK's OAuth client against the live server, as a connector
meets it: the 401 at /mcp, discovery (protected resource metadata, then the authorization
server's), the client's identity (dynamic registration, or a client ID metadata document
served over https from this machine), a person signing in with a password and allowing it
on the real pages, the code exchanged with PKCE, then tools called with the token."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata, OAuthToken

from tests.oauth.loopback_https import serving_documents
from tests.protocol.oauth_user import MemoryStorage, Person
from tests.protocol.test_sdk_client import NAMES, incident

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
# The connector's loopback callback. Nothing listens there: the person's browser stops at the
# redirect and hands its code and state to the SDK (tests/protocol/oauth_user.py).
CALLBACK = "http://localhost:33419/callback"


def connect(live, storage: MemoryStorage, person: Person, body, *,
            document: str | None = None) -> Any:
    """One SDK session through `OAuthClientProvider`; `body(client, provider)` runs in it."""
    provider = OAuthClientProvider(
        server_url=live.endpoint,
        client_metadata=OAuthClientMetadata(
            client_name="SDK test connector", redirect_uris=[person.callback],
            grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            token_endpoint_auth_method="none"),
        storage=storage, client_metadata_url=document,
        redirect_handler=person.redirect_handler, callback_handler=person.callback_handler)

    async def main():
        async with httpx2.AsyncClient(auth=provider, timeout=60) as http:
            transport = streamable_http_client(live.endpoint, http_client=http)
            async with Client(transport, mode="legacy") as client:
                return await body(client, provider)

    return anyio.run(main)


async def write_and_recall(client: Client, tag: str) -> dict[str, Any]:
    """List, write, recall, and read the audit log, as one connector's first session does."""
    tools = await client.list_tools()
    written = await client.call_tool("write_episode", incident(tag))
    recalled = await client.call_tool("query_memory", {
        "scope": "shared", "query": f"why did the {tag} outage happen", "top_k": 3})
    audit = await client.call_tool("get_audit_log", {"scope": "shared", "limit": 500})
    return {"tools": {t.name for t in tools.tools}, "written": written, "recalled": recalled,
            "audit": audit.structured_content["events"]}


def check_written_and_recalled(out: dict[str, Any], tag: str, client_id: str) -> None:
    assert out["tools"] == NAMES
    assert out["written"].is_error is False, out["written"].content
    assert out["written"].structured_content["stored"] is True
    facts = out["recalled"].structured_content["facts"]
    assert facts[0]["fact"].startswith(f"The {tag} outage"), facts
    mine = [event for event in out["audit"] if event["action"] == "fact.created"
            and tag in json.dumps(event["after"])]
    assert len(mine) == 2, out["audit"]
    assert {event["actor"]["tool"] for event in mine} == {f"oauth:{client_id}"}


def test_sdk_registers_dynamically_signs_in_consents_calls_and_refreshes(oauth_live):
    live = oauth_live
    person = Person(live.login, live.password, CALLBACK)
    storage = MemoryStorage()
    first: list[OAuthToken] = []

    async def body(client: Client, provider: OAuthClientProvider) -> dict[str, Any]:
        out = await write_and_recall(client, "Fir")
        first.append(storage.tokens)
        # An hour later: the access token has expired, and the SDK refreshes it before its
        # next request, asking no one.
        provider.context.token_expiry_time = time.time() - 1
        out["again"] = await client.call_tool("query_memory", {
            "scope": "shared", "query": "why did the Fir outage happen", "top_k": 1})
        return out

    out = connect(live, storage, person, body)
    client_id = storage.client_info.client_id
    assert not client_id.startswith("https://")  # registered (RFC 7591), not a document
    assert person.steps[0].startswith(f"{live.base}/oauth/authorize?")
    assert httpx.URL(person.steps[0]).params["resource"] == live.endpoint
    assert person.steps[1].startswith(f"{live.base}/login/?next=/oauth/authorize%3F")
    assert person.asked == 1
    # RFC 9207: the redirect names the issuer, which the SDK compared with the metadata's.
    assert httpx.URL(person.callback_url).params["iss"] == live.base
    check_written_and_recalled(out, "Fir", client_id)

    assert out["again"].structured_content["facts"][0]["fact"].startswith("The Fir outage")
    assert first[0].refresh_token and first[0].token_type == "Bearer"
    assert storage.tokens.access_token != first[0].access_token
    assert storage.tokens.refresh_token != first[0].refresh_token  # rotated on use
    # The spent refresh token is refused when used again (and revokes its family).
    reused = httpx.post(f"{live.base}/oauth/token", data={
        "grant_type": "refresh_token", "refresh_token": first[0].refresh_token,
        "client_id": client_id, "resource": live.endpoint})
    assert reused.status_code == 400, reused.text
    assert reused.json()["error"] == "invalid_grant"


def client_document(url: str, callback: str) -> bytes:
    return json.dumps({
        "client_id": url, "client_name": "Document-described connector",
        "redirect_uris": [callback], "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"], "token_endpoint_auth_method": "none"}).encode()


def test_sdk_uses_a_client_id_metadata_document_over_https(oauth_live):
    live = oauth_live
    fetched: list[str] = []

    def body(path: str):
        if path != "/connector/client.json":
            return None
        fetched.append(path)
        return [client_document(documents.url(path), CALLBACK)]

    with serving_documents(live.documents, body) as documents:
        url = documents.url("/connector/client.json")
        person = Person(live.login, live.password, CALLBACK)
        storage = MemoryStorage()
        out = connect(live, storage, person,
                      lambda client, _provider: write_and_recall(client, "Larch"), document=url)
    # The SDK chose the document (the server advertises client_id_metadata_document_supported)
    # over registering, and the server fetched it from the test's https server.
    assert storage.client_info.client_id == url
    assert httpx.URL(person.steps[0]).params["client_id"] == url
    assert fetched, "the server never fetched the document"
    check_written_and_recalled(out, "Larch", url)
