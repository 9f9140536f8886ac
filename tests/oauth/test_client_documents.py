"""Client ID metadata documents the server must refuse, served for real over https from this
machine: production's fetcher will not reach a loopback address at all, and a document
over the size limit is dropped after the limit's worth, not read to its end. Either way
the authorize request finds no client and nothing is registered."""

from __future__ import annotations

import itertools
import logging
import time

import pytest
from django.conf import settings
from django.test import override_settings
from oauth2_provider.models import get_application_model

from tests.oauth.conftest import CALLBACK, pkce_pair
from tests.oauth.loopback_https import TRUSTED_CERTIFICATE, self_signed, serving_documents

PATH = "/connector/client.json"
CHUNK = b" " * 65536
FIFTY_MB = 50 * 1024 * 1024


@pytest.fixture
def certificate(tmp_path):
    return self_signed(tmp_path)


def authorize(client, client_id: str):
    _verifier, challenge = pkce_pair()
    return client.get("/oauth/authorize", {
        "response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK,
        "state": "st-1", "code_challenge": challenge, "code_challenge_method": "S256"})


def refused_without_a_client(response, client_id: str) -> None:
    # An unknown client is answered on the page, never by a redirect to a callback it names.
    assert response.status_code == 400, response.status_code
    assert "Location" not in response
    assert not get_application_model().objects.filter(client_id=client_id).exists()


def test_production_fetcher_refuses_a_document_on_this_machine(signed_in, certificate, caplog):
    assert settings.OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"] == \
        "oauth.client_documents.CheckedFetcher"
    requests: list[str] = []

    def body(path: str):
        requests.append(path)
        return [b'{"client_id": "never read"}']

    with serving_documents(certificate, body) as served, \
            caplog.at_level(logging.INFO, logger="oauth2_provider.cimd"):
        client_id = served.url(PATH)
        response = authorize(signed_in, client_id)
    refused_without_a_client(response, client_id)
    assert "non-public address (127.0.0.1)" in caplog.text
    assert requests == []  # refused on the address, before any connection


def test_a_document_over_the_size_limit_is_dropped_without_reading_it_all(
        signed_in, certificate, caplog, monkeypatch):
    # Production's reading of the response (django-oauth-toolkit's _read_document and its
    # CIMD_MAX_DOCUMENT_SIZE), over the test-only connection that may reach this machine.
    monkeypatch.setenv(TRUSTED_CERTIFICATE, str(certificate.cert))
    provider = {**settings.OAUTH2_PROVIDER,
                "CIMD_METADATA_FETCHER": "tests.oauth.loopback_fetcher.LoopbackFetcher"}

    def body(path: str):
        # 50 MB, and more behind it if the reader kept going.
        return itertools.chain([b'{"client_id": "'], itertools.repeat(CHUNK))

    with serving_documents(certificate, body) as served, override_settings(
            OAUTH2_PROVIDER=provider), caplog.at_level(logging.INFO, logger="oauth2_provider.cimd"):
        client_id = served.url(PATH)
        started = time.monotonic()
        response = authorize(signed_in, client_id)
        took = time.monotonic() - started
    refused_without_a_client(response, client_id)
    assert "exceeds the maximum allowed size" in caplog.text
    assert took < 3, f"{took:.1f}s: the limit should end the read at once"
    # What left the server before the fetcher hung up: the limit plus what the sockets'
    # buffers took, far from the whole.
    assert served.sent and served.sent[0] < FIFTY_MB // 10, served.sent
