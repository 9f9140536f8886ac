"""Every route of the OAuth server (and the connected-apps pages) walked with values no
client should send: NUL bytes, overlong values, wrong JSON types, bodies that are not JSON,
another account's connection. Never a 500; a refusal is in the route's shape (JSON for
software, a page for people) and names what was wrong; a refused request writes nothing."""

from __future__ import annotations

import json

import pytest
from django.db import transaction
from django.test import Client

from accounts.models import Connection, Membership
from echomem import oauth_addresses
from tests.oauth.conftest import CALLBACK, form_fields, pkce_pair, register, written

NUL, LONG = "x\x00y", "a" * 10_000
HOSTILE = (NUL, LONG, "")
JSON_TYPES = (None, 1, True, [], {}, [1], [{"a": 1}], [NUL], NUL, LONG)


class _Undone(Exception):
    pass


def sent(call):
    """One request, its writes undone, so each case starts from the same state."""
    answer = None
    try:
        with transaction.atomic():
            answer = call()
            raise _Undone
    except _Undone:
        pass
    assert answer.status_code < 500, answer.content[:500]
    return answer


def oauth_error(response, status: int, *words: str) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["error"], body
    for word in words:
        assert word in body.get("error_description", ""), body
    return body


# -- registration (RFC 7591) -------------------------------------------------------------------

REGISTRATION = {"client_name": "T", "redirect_uris": [CALLBACK],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": "none"}
CHECKED = ("redirect_uris", "client_name", "client_uri", "logo_uri", "scope", "grant_types",
           "token_endpoint_auth_method")


def _register(client, body):
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    return client.post("/oauth/register", data=data, content_type="application/json")


@pytest.mark.parametrize("field", CHECKED)
def test_registration_refuses_each_field_of_the_wrong_type_by_name(client, db, field):
    for value in JSON_TYPES:
        answer = sent(lambda value=value: _register(client, {**REGISTRATION, field: value}))
        if answer.status_code == 201:
            assert value is None, (field, value)  # a null is the field left out
            continue
        body = oauth_error(answer, 400)
        assert field.rstrip("s") in body["error_description"].replace("redirect URI",
                                                                      "redirect_uri"), body


def test_a_null_client_name_is_a_name_left_out(client, db):
    """Found here: django-oauth-toolkit stored the null and failed on the column (500)."""
    answer = _register(client, {**REGISTRATION, "client_name": None})
    assert answer.status_code == 201, answer.content


@pytest.mark.parametrize("body", [b"\xff\xfe", "not json", "[]", '"a string"', "null", "1",
                                  "{" * 5000, json.dumps({"x": "a" * 17_000})])
def test_a_registration_that_is_not_a_json_object_is_refused(client, db, body):
    before = written()
    oauth_error(sent(lambda: _register(client, body)), 400)
    assert written() == before


def test_registration_management_refuses_bad_tokens_and_ids(client, db):
    for client_id in ("unknown", NUL, LONG):
        for header in ({}, {"HTTP_AUTHORIZATION": "Bearer " + NUL},
                       {"HTTP_AUTHORIZATION": "Bearer \u00e9t\u00e9"},
                       {"HTTP_AUTHORIZATION": "Basic abc"}):
            for method in (client.get, client.put, client.delete):
                answer = sent(lambda m=method, c=client_id, h=header: m(
                    f"/oauth/register/{c}", **h))
                oauth_error(answer, 401)
    oauth_error(sent(lambda: client.post("/oauth/register/x")), 405)


# -- the consent page (/oauth/authorize) -------------------------------------------------------

def _authorize_query(flow) -> dict[str, str]:
    return {"response_type": "code", "client_id": flow.client_id, "state": "s",
            "redirect_uri": flow.redirect_uri, "code_challenge": pkce_pair()[1],
            "code_challenge_method": "S256", "resource": oauth_addresses.mcp_resource()}


def test_the_consent_page_answers_hostile_query_values_without_a_fault(flow):
    flow.client.raise_request_exception = False
    query = _authorize_query(flow)
    for field in [*query, "scope", "nonce", "prompt", "claims", "account"]:
        for value in HOSTILE:
            answer = sent(lambda f=field, v=value: flow.client.get(
                "/oauth/authorize", {**query, f: v}))
            assert answer.status_code in (200, 302, 400), (field, answer.status_code)


@pytest.mark.parametrize(("field", "width"), [("nonce", 255), ("code_challenge", 128)])
def test_a_value_too_long_to_keep_is_refused_by_name(flow, field, width):
    """Found here: the page accepted them, and the consent then failed on the grant's
    column (500) after the connection was made."""
    query = {**_authorize_query(flow), field: "a" * (width + 1)}
    location = flow.client.get("/oauth/authorize", query)["Location"]
    assert "error=invalid_request" in location and field in location
    page = flow.client.get("/oauth/authorize", _authorize_query(flow))
    fields = {**form_fields(page.content.decode()), "allow": "Authorize",
              field: "a" * (width + 1)}
    before = written()
    location = flow.client.post("/oauth/authorize", fields)["Location"]
    assert "error=invalid_request" in location and field in location
    assert written() == before


def test_the_consent_form_answers_hostile_fields_and_connects_nothing_it_refuses(flow, alice):
    flow.client.raise_request_exception = False
    page = flow.client.get("/oauth/authorize", _authorize_query(flow))
    fields = {**form_fields(page.content.decode()), "allow": "Authorize"}
    for field in [*fields, "memories", "default_memory"]:
        for value in (*HOSTILE, "99999999999999999999", "unknown-client"):
            def post(f=field, v=value):
                answer = flow.client.post("/oauth/authorize", {**fields, f: v})
                issued = "code=" in answer.get("Location", "")
                assert issued or not Connection.objects.exists(), (f, v, answer.status_code)
                return answer
            answer = sent(post)
            assert answer.status_code in (200, 302, 400), (field, value, answer.status_code)


def test_a_consent_for_an_unknown_app_or_callback_makes_no_connection(flow):
    """Found here: the form's hidden client_id and redirect_uri were checked only after
    the connection was made, and an unknown client_id was a 500."""
    page = flow.client.get("/oauth/authorize", _authorize_query(flow))
    fields = {**form_fields(page.content.decode()), "allow": "Authorize"}
    before = written()
    for tampered in ({"client_id": "unknown-client"}, {"client_id": ""},
                     {"redirect_uri": "https://evil.example/cb"}):
        answer = flow.client.post("/oauth/authorize", {**fields, **tampered})
        assert answer.status_code == 400, (tampered, answer.status_code)
        assert "Location" not in answer
        assert written() == before


# -- the token and revocation endpoints --------------------------------------------------------

def test_the_token_endpoint_answers_hostile_fields_in_json(flow):
    code, verifier = flow.code()
    form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier,
            "redirect_uri": flow.redirect_uri, "client_id": flow.client_id,
            "resource": oauth_addresses.mcp_resource()}
    for field in [*form, "refresh_token", "scope", "client_secret"]:
        for value in HOSTILE:
            answer = sent(lambda f=field, v=value: flow.client.post(
                "/oauth/token", {**form, f: v}))
            if answer.status_code != 200:
                oauth_error(answer, answer.status_code)
    for body, kind in ((json.dumps(form), "application/json"),
                       (b"\xff\xfe\x00", "application/x-www-form-urlencoded")):
        oauth_error(sent(lambda b=body, k=kind: flow.client.post(
            "/oauth/token", b, content_type=k)), 400)


def test_the_token_endpoint_refuses_what_it_does_not_offer(flow):
    for grant in ("password", "client_credentials", "implicit",
                  "urn:ietf:params:oauth:grant-type:device_code",
                  "urn:ietf:params:oauth:grant-type:token-exchange"):
        answer = flow.token(grant_type=grant)
        assert answer.status_code in (400, 401), answer.content
        assert answer.json()["error"] in ("unsupported_grant_type", "invalid_client",
                                          "invalid_request", "unauthorized_client"), grant
    oauth_error(flow.client.get("/oauth/token"), 405, "POST")


def test_a_basic_header_that_is_not_ascii_is_invalid_client(flow):
    """Found here: django-oauth-toolkit failed decoding it (500)."""
    for endpoint in ("/oauth/token", "/oauth/revoke"):
        answer = Client().post(endpoint, {"grant_type": "authorization_code", "token": "t"},
                               HTTP_AUTHORIZATION="Basic \u00e9\u00ff")
        oauth_error(answer, 401, "ASCII")


def test_the_revocation_endpoint_answers_hostile_fields_in_json(flow):
    for field in ("token", "client_id", "token_type_hint"):
        for value in HOSTILE:
            answer = sent(lambda f=field, v=value: flow.client.post(
                "/oauth/revoke", {"token": "t", "client_id": flow.client_id, f: v}))
            if answer.status_code != 200:
                oauth_error(answer, answer.status_code)
    oauth_error(flow.client.post("/oauth/revoke", {}), 400, "token")
    oauth_error(flow.client.get("/oauth/revoke"), 405, "POST")


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource",
                                  "/.well-known/oauth-protected-resource/mcp",
                                  "/.well-known/oauth-authorization-server",
                                  "/.well-known/openid-configuration"])
def test_the_discovery_documents_ignore_hostile_queries(client, db, path):
    assert client.get(path, {"x": NUL, "y": LONG}).status_code == 200
    oauth_error(client.post(path, b"\xff", content_type="application/json"), 405, "GET")


# -- connected apps ----------------------------------------------------------------------------

def test_another_accounts_connection_cannot_be_seen_or_revoked(flow, alice, charlie):
    flow.tokens()
    mine = Connection.objects.get(user=alice.user)
    browser = Client()
    browser.force_login(charlie.user)
    charlies = register(browser)
    charlies.tokens()
    theirs = Connection.objects.get(user=charlie.user)
    listed = flow.client.get("/apps/").content.decode()
    assert f"/apps/{mine.pk}/revoke/" in listed
    assert f"/apps/{theirs.pk}/revoke/" not in listed
    for path in (f"/apps/{theirs.pk}/revoke/", "/apps/99999999999999999999/revoke/",
                 "/apps/0/revoke/"):
        assert flow.client.get(path).status_code == 404
        assert flow.client.post(path).status_code == 404
    assert Connection.objects.filter(revoked_at__isnull=True).count() == 2
    assert mine.pk != theirs.pk


def test_a_member_cannot_revoke_another_members_connection(flow, alice, bob):
    flow.tokens()
    alices = Connection.objects.get(user=alice.user)
    browser = Client()
    browser.force_login(bob.user)
    assert browser.post(f"/apps/{alices.pk}/revoke/").status_code == 404
    assert Connection.objects.get(pk=alices.pk).revoked_at is None


def test_a_person_in_no_account_is_told_so_and_the_app_is_denied(flow, alice):
    """Found by the URL walk: the form was built for the person's first account, and one
    in none (an operator, someone removed from every team) was a 500."""
    Membership.objects.filter(user=alice.user).delete()
    before = written()
    answer = flow.client.get("/oauth/authorize", _authorize_query(flow))
    location = answer["Location"]
    assert "error=access_denied" in location and "not+a+member" in location, location
    posted = flow.client.post("/oauth/authorize", {**_authorize_query(flow), "allow": "1"})
    assert "error=access_denied" in posted["Location"]
    assert written() == before
