"""OAuth in process: a client registered dynamically, a signed-in person who consents, and
the token exchange with PKCE, over Django's test client (the live flows with the official
SDK are in tests/protocol)."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from accounts.models import Connection
from echomem import oauth_addresses
from memories.models import Fact
from tests.mcp.conftest import Mcp

CALLBACK = "http://127.0.0.1:33418/callback"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


def form_fields(html: str) -> dict[str, str]:
    """The consent form's hidden fields and the defaults of its visible ones."""
    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        kind = re.search(r'type="([^"]+)"', tag)
        if not name or (kind and kind[1] in ("radio", "checkbox") and "checked" not in tag):
            continue
        fields[name[1]] = unescape(value[1]) if value else ""
    return fields


@dataclass
class Flow:
    client: object
    client_id: str
    redirect_uri: str = CALLBACK

    def register(self, **metadata) -> dict:
        body = {"client_name": "Test connector", "redirect_uris": [self.redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": "none", **metadata}
        return self.client.post("/oauth/register", data=body, content_type="application/json")

    def authorize_url(self, challenge: str, *, state: str = "st-1", scope: str | None = None,
                      resource: str | None = "default", **extra) -> str:
        query = {"response_type": "code", "client_id": self.client_id,
                 "redirect_uri": self.redirect_uri, "state": state,
                 "code_challenge": challenge, "code_challenge_method": "S256", **extra}
        if scope:
            query["scope"] = scope
        if resource == "default":
            query["resource"] = oauth_addresses.mcp_resource()
        elif resource is not None:
            query["resource"] = resource
        return "/oauth/authorize?" + urlencode(query)

    def consent(self, challenge: str, *, choices: dict | None = None, **query):
        page = self.client.get(self.authorize_url(challenge, **query))
        assert page.status_code == 200, page.content[:2000]
        fields = form_fields(page.content.decode())
        fields.update(choices or {})
        fields["allow"] = "Authorize"
        return self.client.post("/oauth/authorize", data=fields)

    def code_from(self, response) -> dict[str, str]:
        assert response.status_code == 302, response.content[:2000]
        location = response["Location"]
        assert location.startswith(self.redirect_uri), location
        return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}

    def authorize(self, challenge: str, **query):
        """The consent page's GET, as the browser sends it."""
        return self.client.get(self.authorize_url(challenge, **query))

    def token(self, **data):
        return self.client.post("/oauth/token", data={"client_id": self.client_id, **data})

    def exchange(self, code: str, verifier: str, **data):
        """The code for tokens (RFC 6749 4.1.3), with PKCE's verifier and RFC 8707's resource."""
        return self.token(**{"grant_type": "authorization_code", "code": code,
                             "redirect_uri": self.redirect_uri, "code_verifier": verifier,
                             "resource": oauth_addresses.mcp_resource(), **data})

    def code(self, choices: dict | None = None, **query) -> tuple[str, str]:
        """A fresh code after consent, and the verifier that redeems it."""
        verifier, challenge = pkce_pair()
        return self.code_from(self.consent(challenge, choices=choices, **query))["code"], verifier

    def tokens(self, choices: dict | None = None, **query) -> dict:
        response = self.exchange(*self.code(choices, **query))
        assert response.status_code == 200, response.content
        return response.json()

    def refresh(self, refresh_token: str, **data):
        return self.token(grant_type="refresh_token", refresh_token=refresh_token, **data)

    def revoke(self, token: str, **data):
        """RFC 7009 revocation, as this (public) client."""
        return self.client.post("/oauth/revoke",
                                data={"client_id": self.client_id, "token": token, **data})

    def mcp(self, access_token: str, *, initialize: bool = True) -> Mcp:
        """An MCP client holding the token, with no cookies of the signed-in browser."""
        session = Mcp(Client(), access_token)
        if initialize:
            session.initialize()
        return session


def redirected_error(response) -> dict[str, str]:
    """The error an authorization request sent back to the client's callback (RFC 6749
    4.1.2.1)."""
    assert response.status_code == 302, response.content[:2000]
    return {k: v[0] for k, v in parse_qs(urlsplit(response["Location"]).query).items()}


def page_error(response, error: str, status: int = 400) -> str:
    """An error the consent page shows instead of redirecting (the callback is not trusted)."""
    assert response.status_code == status, (response.status_code, response.content[:2000])
    text = unescape(response.content.decode())
    assert error in text, text[:3000]
    return text


def token_error(response, error: str, status: int = 400) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"] == error, body
    return body


def written() -> dict[str, int]:
    """What a refused request must leave as it was."""
    return {"connections": Connection.objects.count(),
            "access tokens": get_access_token_model().objects.count(),
            "refresh tokens": get_refresh_token_model().objects.count(),
            "facts": Fact.objects.count()}


def register(client, *, redirect_uri: str = CALLBACK, **metadata) -> Flow:
    """Another client registered dynamically (an app of its own), in the same browser."""
    registered = Flow(client, client_id="", redirect_uri=redirect_uri).register(**metadata)
    assert registered.status_code == 201, registered.content
    return Flow(client, client_id=registered.json()["client_id"], redirect_uri=redirect_uri)


@pytest.fixture
def signed_in(client, alice):
    client.force_login(alice.user)
    return client


@pytest.fixture
def flow(signed_in) -> Flow:
    return register(signed_in)
