"""Credentials plug in from above: an app registers how its Bearer tokens become a
Principal, and accounts resolves them without importing that app (the way OAuth access
tokens will come in). API keys are resolved exactly as before."""

from __future__ import annotations

import pytest

from accounts.principal import (
    BearerResolver,
    Principal,
    principal_from_authorization,
    register_bearer_resolver,
    unregister_bearer_resolver,
)
from echomem.errors import AuthenticationFailed

TOKEN = "grant_0123456789abcdef"


@pytest.fixture
def grants(alice):
    """A resolver for a made-up kind of token that acts as alice through a tool of its own."""
    seen: list[str] = []

    def resolve(token: str) -> Principal:
        seen.append(token)
        if token != TOKEN:
            raise AuthenticationFailed("the grant is not valid", field="Authorization",
                                       fix="sign in again")
        return Principal(account_id=alice.account.pk, holder_id=alice.user.pk,
                         tool="connector")

    register_bearer_resolver(BearerResolver(
        name="grants", claims=lambda token: token.startswith("grant_"), resolve=resolve))
    yield seen
    unregister_bearer_resolver("grants")


def test_a_registered_kind_of_token_becomes_its_principal(grants, alice):
    principal = principal_from_authorization(f"Bearer {TOKEN}")
    assert (principal.account_id, principal.holder_id, principal.tool) == (
        alice.account.pk, alice.user.pk, "connector")
    assert grants == [TOKEN]


def test_the_resolver_refuses_its_own_bad_tokens_with_its_own_reason(grants):
    with pytest.raises(AuthenticationFailed, match="the grant is not valid"):
        principal_from_authorization("Bearer grant_forged")


def test_api_keys_never_reach_another_apps_resolver(grants, alice):
    principal = principal_from_authorization(f"Bearer {alice.plaintext}")
    assert principal.key_id == alice.key.pk
    assert grants == []


def test_a_token_nobody_claims_is_a_malformed_key_as_before(grants):
    with pytest.raises(AuthenticationFailed, match="the API key is malformed"):
        principal_from_authorization("Bearer something_else")


def test_registering_a_name_again_replaces_it(alice):
    first = BearerResolver(name="grants", claims=lambda token: True,
                           resolve=lambda token: pytest.fail("replaced resolver called"))
    second = BearerResolver(
        name="grants", claims=lambda token: token.startswith("grant_"),
        resolve=lambda token: Principal(account_id=alice.account.pk,
                                        holder_id=alice.user.pk, tool="connector"))
    register_bearer_resolver(first)
    register_bearer_resolver(second)
    try:
        assert principal_from_authorization(f"Bearer {TOKEN}").tool == "connector"
        assert principal_from_authorization(f"Bearer {alice.plaintext}").key_id == alice.key.pk
    finally:
        unregister_bearer_resolver("grants")


def test_the_shared_admission_takes_a_registered_token_at_the_rest_door(grants, client, alice):
    response = client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert [memory["name"] for memory in response.json()["memories"]] == ["default"]
    refused = client.get("/api/v1/memories", HTTP_AUTHORIZATION="Bearer grant_forged")
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"].startswith("Bearer")
