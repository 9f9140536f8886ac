"""The dashboard's first-run checklist: each step's rule (memories.catalog.first_run), with
another account's keys, memories and writes never counting, and the partial its htmx
polling asks for (/dashboard/first-run/): members only, GET only, never cached, 204 while
nothing changed, no polling left once every step is done."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from accounts.principal import principal_for_member, principal_from_key
from accounts.services import api_key_create, api_key_revoke
from memories.catalog.first_run import first_run
from memories.graph.services import memory_create
from tests.factories import PASSPHRASE, Engine, fact, make_member, make_user, person
from tests.web.test_security_headers import _connection
from tools.calling import run_validated
from tools.registry import TOOLS
from web.services import sign_up

pytestmark = pytest.mark.django_db
URL = "/dashboard/first-run/"


@pytest.fixture
def newcomer():
    """A person just signed up: the account and its `default` memory, nothing else."""
    user, account = sign_up(email="newcomer@example.com", password=PASSPHRASE)
    return user, account


def _steps(user, account):
    return first_run(principal_for_member(user, account.pk)[0])


def _key(user, account, **extra):
    return api_key_create(account=account, holder=user, name="laptop", tool="claude-code",
                          **extra)


def test_a_new_account_has_every_step_open(newcomer):
    steps = _steps(*newcomer)
    assert (steps.memory, steps.agent, steps.write, steps.done) == (False, False, False, False)
    assert steps.state == "000"


def test_a_second_memory_or_a_key_naming_its_default_picks_a_memory(newcomer):
    user, account = newcomer
    _key(user, account)  # a key on the account's default: no memory picked yet
    assert _steps(user, account).memory is False
    memory_create(account_id=account.pk, name="ops")
    assert _steps(user, account).memory is True


def test_a_live_key_with_its_own_default_memory_picks_it(newcomer):
    user, account = newcomer
    key, _ = _key(user, account, default_memory=account.default_memory)
    assert _steps(user, account).memory is True
    api_key_revoke(key=key, actor_id=user.pk)
    assert _steps(user, account).memory is False


def test_another_accounts_memories_keys_and_writes_do_not_count(newcomer, charlie):
    memory_create(account_id=charlie.account.pk, name="ops")
    Engine(charlie.principal).write(assume_new=True, entities=[person("Ada"), person("Grace")],
                                    facts=[fact("Ada", "Grace", "mentors", "Ada mentors")])
    assert _steps(*newcomer).state == "000"


def test_a_live_key_or_connected_app_is_a_way_in_and_a_revoked_or_expired_key_is_not(
        newcomer):
    user, account = newcomer
    key, _ = _key(user, account)
    assert _steps(user, account).agent is True
    api_key_revoke(key=key, actor_id=user.pk)
    assert _steps(user, account).agent is False
    expired, _ = _key(user, account, expires_at=timezone.now() + timedelta(days=1))
    type(expired).objects.filter(pk=expired.pk).update(expires_at=timezone.now())
    assert _steps(user, account).agent is False
    _connection(SimpleNamespace(user=user, account=account))
    assert _steps(user, account).agent is True


def test_the_first_write_ticks_the_write_and_the_memory_steps(newcomer):
    user, account = newcomer
    _, plaintext = _key(user, account)
    Engine(principal_from_key(plaintext)).write(
        assume_new=True, entities=[person("Ada"), person("Grace")],
        facts=[fact("Ada", "Grace", "mentors", "Ada mentors Grace")])
    assert _steps(user, account).state == "111" and _steps(user, account).done


def test_a_note_is_a_first_write_too(newcomer):
    user, account = newcomer
    _, plaintext = _key(user, account)
    run_validated(principal_from_key(plaintext), TOOLS["memory_save"], {
        "title": "Pool size halved", "what": "Deploy 41 halved the pool", "category": "bug"})
    assert _steps(user, account).write is True


def test_another_members_solo_write_is_not_this_persons_first_write(alice):
    bob = make_member(alice.account, "bob", key="bot", tool="support-bot")
    Engine(bob.principal).write(scope="solo", assume_new=True,
                                entities=[person("Ada"), person("Grace")],
                                facts=[fact("Ada", "Grace", "mentors", "Ada mentors")])
    assert _steps(alice.user, alice.account).write is False
    assert _steps(bob.user, alice.account).write is True


# The partial the dashboard polls.

def test_the_dashboard_shows_the_checklist_and_polls_until_done(client, newcomer):
    user, account = newcomer
    client.force_login(user)
    page = client.get("/dashboard/").content.decode()
    assert 'id="first-run"' in page and f'hx-get="{URL}?seen=000"' in page
    assert 'hx-trigger="every 3s"' in page and 'hx-swap="outerHTML"' in page
    for link in ("/memories/new/", "/keys/new/", "/dashboard/#connect-heading"):
        assert f'href="{link}"' in page

    answer = client.get(URL, {"seen": "000"})
    assert answer.status_code == 204 and answer.content == b""  # nothing changed
    assert "no-store" in answer["Cache-Control"]
    _key(user, account)
    answer = client.get(URL, {"seen": "000"})
    assert answer.status_code == 200 and "no-store" in answer["Cache-Control"]
    partial = answer.content.decode()
    assert partial.lstrip().startswith("<section") and "<html" not in partial
    assert f"{URL}?seen=010" in partial and partial.count("Done:") == 1


def test_when_every_step_is_done_the_answer_stops_the_polling_and_the_list_leaves(
        client, alice):
    Engine(alice.principal).write(assume_new=True, entities=[person("Ada"), person("Grace")],
                                  facts=[fact("Ada", "Grace", "mentors", "Ada mentors")])
    memory_create(account_id=alice.account.pk, name="ops")
    client.force_login(alice.user)
    partial = client.get(URL, {"seen": "010"}).content.decode()
    assert "hx-trigger" not in partial and "hx-get" not in partial
    assert partial.count("Done:") == 3 and "All set" in partial
    assert 'id="first-run"' not in client.get("/dashboard/").content.decode()


@pytest.mark.parametrize("seen", ["", "\x00", "1" * 10_000, "abc", "111"])
def test_any_seen_value_gets_the_list_or_nothing_never_an_error(client, newcomer, seen):
    client.force_login(newcomer[0])
    answer = client.get(URL, {"seen": seen})
    assert answer.status_code == 200 and "To do:" in answer.content.decode()


def test_only_get(client, newcomer):
    client.force_login(newcomer[0])
    for method in ("post", "put", "delete"):
        assert getattr(client, method)(URL).status_code == 405


def test_signed_out_goes_to_sign_in_and_an_htmx_poll_takes_the_whole_page_there(client):
    plain = client.get(URL)
    assert plain.status_code == 302 and plain["Location"].startswith("/login/?next=")
    polled = client.get(URL, HTTP_HX_REQUEST="true")
    assert polled["HX-Redirect"] == "/login/?next=/dashboard/" and polled.content == b""


def test_the_partial_is_the_acting_accounts_and_a_person_in_none_gets_404(
        client, newcomer, charlie):
    Engine(charlie.principal).write(assume_new=True, entities=[person("Ada"), person("Grace")],
                                    facts=[fact("Ada", "Grace", "mentors", "Ada mentors")])
    client.force_login(newcomer[0])
    assert "seen=000" in client.get(URL).content.decode()  # charlie's key and write: not ours
    client.force_login(make_user("nobody"))
    assert client.get(URL).status_code == 404
