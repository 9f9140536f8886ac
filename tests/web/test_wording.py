"""The pages speak the product's words, not the code's: no "vector", "partition",
"username" (the site signs people in by email), "principal" or "cosine" in what a person
reads. Every page of the URLconf is read signed in and out (as
test_security_headers walks them), plus the states a plain GET does not reach: a failed
sign-in, search results, and a memory with facts still being indexed. The user docs are
left out: they explain the engine in its own terms; so is the admin."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from memories.models import Fact
from tests.factories import Engine, fact, person
from tests.web.test_security_headers import PAGES, _own

INTERNAL = re.compile(r"\b(vectors?|partitions?|username|principal|cosine|embedding|"
                      r"traceback)\b", re.IGNORECASE)
# The admin is Django's own operator tool, where staff sign in by user name.
NOT_PRODUCT_PAGES = ("docs/", "audit/export.csv", "audit/export.jsonl", "admin/")


def visible_text(page: str) -> str:
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.DOTALL | re.IGNORECASE)
    page = re.sub(r"<code\b.*?</code>", " ", page, flags=re.DOTALL)  # names agents type
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", page))


def _leaks(page: str) -> list[str]:
    text = visible_text(page)
    return [text[max(0, m.start() - 40):m.end() + 40].strip() for m in INTERNAL.finditer(text)]


@pytest.mark.parametrize("signed_in", [False, True], ids=["public", "signed-in"])
def test_no_page_uses_the_codes_words(client, alice, signed_in):
    if signed_in:
        client.force_login(alice.user)
    found = {}
    for route in PAGES:
        if route.startswith(NOT_PRODUCT_PAGES):
            continue
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda p, r=route: _own(r, p[1], alice), route)
        response = client.get(path, follow=True)
        if response["Content-Type"].startswith("text/html"):
            leaks = _leaks(response.content.decode())
            if leaks:
                found[path] = leaks
    assert found == {}


def test_a_failed_sign_in_says_email_not_username(client, alice):
    page = client.post("/login/", {"username": "alice@example.com", "password": "wrong"})
    assert page.status_code == 200
    assert _leaks(page.content.decode()) == []
    assert "That email and password do not match" in page.content.decode()


def test_search_results_and_facts_being_indexed_use_the_products_words(client, alice):
    Engine(alice.principal).write(assume_new=True, entities=[person("Ada"), person("Grace")],
                                  facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    assert Fact.objects.filter(embedding__isnull=True).exists()  # still being indexed
    client.force_login(alice.user)
    dashboard = client.get("/dashboard/").content.decode()
    assert "Being indexed" in dashboard and _leaks(dashboard) == []
    results = client.get("/memories/default/", {"q": "who mentors Grace"}).content.decode()
    assert "Ada mentors Grace" in results and _leaks(results) == []
    refused = client.get("/memories/default/", {"scope": "solo:nobody"}).content.decode()
    assert "not a scope you can read" in refused and _leaks(refused) == []
