"""The authorization step refused (RFC 6749 4.1, RFC 7636, RFC 8252, RFC 8707, RFC 9700):
bad codes, PKCE missing or weakened, the implicit grant, callbacks that were not
registered, and tokens asked for another resource. Each answer carries the spec's error
code, and nothing is issued."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from echomem import oauth_addresses
from tests.oauth.conftest import (
    CALLBACK,
    page_error,
    pkce_pair,
    redirected_error,
    register,
    token_error,
    written,
)

# -- the code ---------------------------------------------------------------------------------

def test_a_wrong_code_is_invalid_grant_and_issues_nothing(flow):
    _code, verifier = flow.code()
    before = written()
    token_error(flow.exchange("not-a-code-we-issued", verifier), "invalid_grant")
    assert written() == before


def test_a_code_used_twice_is_refused_and_revokes_what_it_issued(flow):
    """RFC 6749 4.1.2: a code is single use, and a replay SHOULD revoke the tokens the
    first exchange issued (someone else holds the code). django-oauth-toolkit refuses the
    replay; oauth/validator.py remembers the trade and revokes them."""
    code, verifier = flow.code()
    first = flow.exchange(code, verifier)
    assert first.status_code == 200, first.content
    tokens = first.json()
    session = flow.mcp(tokens["access_token"])
    assert session.request("ping").status_code == 200
    facts = written()["facts"]
    token_error(flow.exchange(code, verifier), "invalid_grant")
    assert written()["facts"] == facts
    assert session.request("ping").status_code == 401
    token_error(flow.refresh(tokens["refresh_token"]), "invalid_grant")


def test_a_wrong_code_verifier_is_invalid_grant(flow):
    code, _verifier = flow.code()
    other_verifier, _challenge = pkce_pair()
    before = written()
    body = token_error(flow.exchange(code, other_verifier), "invalid_grant")
    assert written() == before
    assert body == {"error": "invalid_grant"}  # nothing said that would help a guesser


def test_no_code_verifier_at_the_token_endpoint_is_refused(flow):
    code, _verifier = flow.code()
    before = written()
    response = flow.token(grant_type="authorization_code", code=code,
                          redirect_uri=flow.redirect_uri,
                          resource=oauth_addresses.mcp_resource())
    assert response.status_code == 400 and response.json()["error"] in (
        "invalid_request", "invalid_grant"), response.content
    assert written() == before


# -- PKCE and the response type at the authorization endpoint ----------------------------------

def test_pkce_method_plain_is_refused(flow):
    """RFC 9700 2.1.1 (COMPLIANT_BCP_RFC9700_PKCE_METHOD): S256 only."""
    verifier, _challenge = pkce_pair()
    before = written()
    answer = redirected_error(flow.authorize(verifier, code_challenge_method="plain"))
    assert answer["error"] == "invalid_request", answer
    assert "S256" in answer["error_description"] and answer["state"] == "st-1"
    # No method is plain (RFC 7636 4.3): refused alike.
    url = flow.authorize_url(verifier).replace("&code_challenge_method=S256", "")
    assert redirected_error(flow.client.get(url))["error"] == "invalid_request"
    assert written() == before


def test_pkce_method_plain_slipped_into_the_consent_form_makes_no_connection(flow):
    """django-oauth-toolkit refuses plain only when it makes the code; the consent page
    refuses it before it connects the app."""
    before = written()
    response = flow.consent(pkce_pair()[1], choices={"code_challenge_method": "plain"})
    assert redirected_error(response)["error"] == "invalid_request"
    assert written() == before


def test_an_authorization_request_without_a_code_challenge_is_refused(flow):
    before = written()
    url = flow.authorize_url("x").replace("&code_challenge=x", "").replace(
        "&code_challenge_method=S256", "")
    answer = redirected_error(flow.client.get(url))
    assert answer["error"] == "invalid_request", answer
    assert "challenge" in answer.get("error_description", "").lower(), answer
    assert written() == before


def test_the_implicit_grant_is_refused(flow):
    _verifier, challenge = pkce_pair()
    before = written()
    response = flow.authorize(challenge, response_type="token")
    # RFC 6749 4.1.2.1: a client registered for the code grant is unauthorized_client for
    # any other response type (django-oauth-toolkit's answer; unsupported_response_type is
    # what a client registered for none would get).
    answer = redirected_error(response)
    assert answer["error"] in ("unauthorized_client", "unsupported_response_type"), answer
    assert "access_token" not in response["Location"]
    assert written() == before


# -- callbacks ---------------------------------------------------------------------------------

def _authorize_with_callback(flow, redirect_uri: str):
    _verifier, challenge = pkce_pair()
    query = {"response_type": "code", "client_id": flow.client_id, "redirect_uri": redirect_uri,
             "state": "st-1", "code_challenge": challenge, "code_challenge_method": "S256",
             "resource": oauth_addresses.mcp_resource()}
    return flow.client.get("/oauth/authorize?" + urlencode(query))


@pytest.mark.parametrize("redirect_uri", [
    "https://evil.example/callback",
    CALLBACK + "?extra=1",  # exact matching: DOT 3.4.1 no longer forgives extra parameters
    "http://127.0.0.1:33418/other",
    "http://localhost.evil.example:33418/callback",
])
def test_a_callback_that_was_not_registered_is_refused_on_the_page_not_redirected(
        flow, redirect_uri):
    before = written()
    response = _authorize_with_callback(flow, redirect_uri)
    assert response.status_code == 400, (response.status_code, response.get("Location"))
    page_error(response, "invalid_request")
    assert written() == before


def test_a_loopback_callback_on_another_port_is_accepted(flow):
    """RFC 8252 7.3: a native app's loopback callback may use any port."""
    response = _authorize_with_callback(flow, "http://127.0.0.1:50123/callback")
    assert response.status_code == 200, response.content[:2000]


# -- the resource (RFC 8707) -------------------------------------------------------------------

@pytest.mark.parametrize("resource", [None, "https://other.example/mcp",
                                      "http://localhost:8000/api/v1"])
def test_a_missing_or_other_resource_is_invalid_target(flow, resource):
    _verifier, challenge = pkce_pair()
    before = written()
    answer = redirected_error(flow.authorize(challenge, resource=resource))
    assert answer["error"] == "invalid_target", answer
    assert oauth_addresses.mcp_resource() in answer["error_description"]
    assert answer["state"] == "st-1"
    assert written() == before


def test_two_resources_are_invalid_target(flow):
    _verifier, challenge = pkce_pair()
    url = flow.authorize_url(challenge) + "&" + urlencode({"resource": "https://other.example/"})
    assert redirected_error(flow.client.get(url))["error"] == "invalid_target"


def test_a_resource_changed_in_the_consent_form_is_invalid_target(flow):
    before = written()
    response = flow.consent(pkce_pair()[1], choices={"resource": "https://other.example/mcp"})
    assert redirected_error(response)["error"] == "invalid_target"
    assert written() == before


def test_a_token_asked_for_another_resource_is_refused(flow):
    code, verifier = flow.code()
    before = written()
    response = flow.exchange(code, verifier, resource="https://other.example/mcp")
    assert response["Content-Type"] == "application/json"  # RFC 6749 5.2
    token_error(response, "invalid_target")
    assert written() == before


def test_a_second_client_cannot_redeem_the_first_clients_code(flow, signed_in):
    code, verifier = flow.code()
    other = register(signed_in)
    before = written()
    token_error(other.exchange(code, verifier), "invalid_grant")
    assert written() == before
