"""Where the server says it is: from the configured public URL, never from a Host header or
a proxy's forwarded headers; on a single box, the address `echo-memory serve` names itself
by. Tokens are kept only as digests, and a grant's calls are metered like a key's."""

from __future__ import annotations

import os

import pytest
from django.test import Client
from oauth2_provider.models import AccessToken, RefreshToken

from billing.models import UsagePeriod
from echomem.commands import serve
from echomem.oauth_settings import oauth_provider
from tests.mcp.conftest import Mcp
from tests.mcp.test_tools import episode

DOCUMENTS = ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
             "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


@pytest.mark.parametrize("headers", [
    {}, {"HTTP_HOST": "evil.example"},
    {"HTTP_X_FORWARDED_HOST": "evil.example", "HTTP_X_FORWARDED_PROTO": "http"}])
def test_issuer_and_resource_come_from_the_public_url_only(db, settings, headers):
    settings.ALLOWED_HOSTS = ["*"]
    settings.OAUTH2_PROVIDER = oauth_provider("https://memory.example.com")
    client = Client()
    resource = client.get(DOCUMENTS[1], **headers).json()
    assert resource["resource"] == "https://memory.example.com/mcp"
    assert resource["authorization_servers"] == ["https://memory.example.com"]
    for path in DOCUMENTS[2:]:
        server = client.get(path, **headers).json()
        assert server["issuer"] == "https://memory.example.com"  # no trailing slash
        for endpoint in ("authorization_endpoint", "token_endpoint", "registration_endpoint",
                         "revocation_endpoint"):
            assert server[endpoint].startswith("https://memory.example.com/oauth/"), endpoint
        assert server["response_types_supported"] == ["code"]
        assert "implicit" not in server["grant_types_supported"]
    challenge = client.post("/mcp", data="{}", content_type="application/json",
                            **headers)["WWW-Authenticate"]
    assert ('resource_metadata="https://memory.example.com/.well-known/'
            'oauth-protected-resource/mcp"') in challenge


def test_the_single_box_names_itself_by_the_port_it_serves(monkeypatch):
    monkeypatch.delenv("ECHO_MEMORY_PUBLIC_URL", raising=False)
    monkeypatch.delenv("ECHO_MEMORY_SERVED_AT", raising=False)
    serve._name_the_box("127.0.0.1", 8765)

    assert os.environ["ECHO_MEMORY_SERVED_AT"] == "http://localhost:8765"
    monkeypatch.setenv("ECHO_MEMORY_PUBLIC_URL", "https://memory.example.com")
    monkeypatch.delenv("ECHO_MEMORY_SERVED_AT")
    serve._name_the_box("0.0.0.0", 9000)
    assert "ECHO_MEMORY_SERVED_AT" not in os.environ


def test_tokens_are_stored_as_digests_only(flow):
    tokens = flow.tokens()
    access = AccessToken.objects.get(scope__startswith="memory:")
    refresh = RefreshToken.objects.get()
    assert access.token == "" and refresh.token == ""
    assert len(access.token_checksum) == 64 and tokens["access_token"] not in str(
        AccessToken.objects.values_list().get(pk=access.pk))
    assert tokens["refresh_token"].startswith("emrt_")


def test_a_grants_writes_are_metered_like_a_keys(flow):
    tokens = flow.tokens()
    mcp = Mcp(Client(), tokens["access_token"])
    mcp.initialize()
    before = sum(UsagePeriod.objects.values_list("units", flat=True))
    assert not mcp.call("write_episode", episode())["result"].get("isError")
    after = sum(UsagePeriod.objects.values_list("units", flat=True))
    assert after - before == 2  # one unit per fact written
