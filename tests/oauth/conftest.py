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

from echomem import oauth_addresses

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

    def token(self, **data):
        return self.client.post("/oauth/token", data={"client_id": self.client_id, **data})

    def tokens(self, choices: dict | None = None, **query) -> dict:
        verifier, challenge = pkce_pair()
        answer = self.code_from(self.consent(challenge, choices=choices, **query))
        response = self.token(grant_type="authorization_code", code=answer["code"],
                              redirect_uri=self.redirect_uri, code_verifier=verifier,
                              resource=oauth_addresses.mcp_resource())
        assert response.status_code == 200, response.content
        return response.json()


@pytest.fixture
def signed_in(client, alice):
    client.force_login(alice.user)
    return client


@pytest.fixture
def flow(signed_in) -> Flow:
    registered = Flow(signed_in, client_id="").register()
    assert registered.status_code == 201, registered.content
    return Flow(signed_in, client_id=registered.json()["client_id"])
