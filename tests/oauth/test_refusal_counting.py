"""Where a refused request at /mcp counts (echomem/admission.py): a request with no
credential, or an access token (emat_) we never issued, guesses nothing, and a connector
relays many people's first requests from one address, so those count in a far larger
window; a bad em_ key (or any other text) is a guess and counts against its address; a
known connection's stale token counts against that connection alone."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from tests.mcp.conftest import fake_clock  # noqa: F401
from tests.oauth.conftest import register
from tests.oauth.test_refused_tokens import _stored

BAD_KEY = "em_000000000000_" + "x" * 43
PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'


def knock(token: str | None = None, address: str = "192.0.2.10"):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client().post("/mcp", data=PING, content_type="application/json",
                         headers=headers, REMOTE_ADDR=address).status_code


@pytest.fixture
def small_limits(settings, fake_clock):  # noqa: F811
    settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE = 3
    settings.CHALLENGE_RATE_LIMIT_PER_MINUTE = 1000
    return fake_clock


def test_requests_without_a_credential_are_not_held_to_the_key_guessing_limit(
        db, small_limits):
    assert [knock() for _ in range(10)] == [401] * 10
    assert [knock("emat_" + "x" * 43) for _ in range(10)] == [401] * 10  # not one we issued
    # ... but bad keys (and text that is no credential of ours) from the same address
    # are, after three.
    assert [knock(BAD_KEY) for _ in range(2)] + [knock("random-text")] + [knock(BAD_KEY)] \
        == [401, 401, 401, 429]


def test_the_challenge_window_has_its_own_limit(db, settings, small_limits):
    settings.CHALLENGE_RATE_LIMIT_PER_MINUTE = 2
    assert [knock() for _ in range(3)] == [401, 401, 429]
    assert knock(address="192.0.2.11") == 401
    small_limits.advance(60)
    assert knock() == 401


def test_a_connections_expired_token_counts_in_the_connections_own_window(
        flow, signed_in, small_limits):
    token = flow.tokens()["access_token"]
    _stored(token).update(expires=timezone.now())
    assert [knock(token) for _ in range(4)] == [401, 401, 401, 429]
    # The address it came from is not charged: a bad key from there is still answered.
    assert knock(BAD_KEY) == 401
    # Nor is the person's connection with another app.
    other = register(signed_in).tokens()["access_token"]
    _stored(other).update(expires=timezone.now())
    assert knock(other) == 401
    small_limits.advance(60)
    assert knock(token) == 401
