"""The secret redaction page: ada (owner) and her admin change it, her member reads it and
may preview, an outsider only ever sees their own account, and bad patterns are refused
next to their field with the fix, nothing saved."""

from __future__ import annotations

import pytest

from accounts.models import Account, Membership
from audit.models import AuditEvent
from memories.catalog.new_accounts import account_create
from tests.factories import make_email_user

Role = Membership.Role
URL = "/account/redaction/"
SECRET = "sk-proj-Q7vX2mN9pL4kR8tY1wZ5aB3cD6eF0gH2jK4lM7nP9qR"


@pytest.fixture
def cast(db):
    ada = make_email_user("ada@example.com")
    account = account_create(owner=ada, name="Ada's lab")
    grace, bob = make_email_user("grace@example.com"), make_email_user("bob@example.com")
    Membership.objects.create(user=grace, account=account, role=Role.ADMIN)
    Membership.objects.create(user=bob, account=account, role=Role.MEMBER)
    eve = make_email_user("eve@example.com")
    account_create(owner=eve, name="Eve's shop")
    return {"ada": ada, "grace": grace, "bob": bob, "eve": eve, "account": account}


def settings_of(account: Account) -> tuple[bool, list[str]]:
    account.refresh_from_db()
    return account.redact_secrets, account.redaction_patterns


@pytest.mark.parametrize("who", ["ada", "grace"])
def test_owners_and_admins_switch_it_and_keep_patterns_audited(client, cast, who):
    client.force_login(cast[who])
    page = client.get(URL)
    assert page.status_code == 200 and b"Save settings" in page.content
    done = client.post(URL, {"action": "save", "redaction_patterns":
                             "ACME-[0-9]{6}\n\n\\binternal-[a-z]+-key\n"})
    assert done.status_code == 302 and done.url == URL
    assert settings_of(cast["account"]) == (False, ["ACME-[0-9]{6}", r"\binternal-[a-z]+-key"])
    shown = client.get(URL).content.decode()
    assert "secret redaction is off, with 2 patterns of your own" in shown
    event = AuditEvent.objects.get(account=cast["account"], action="account.redaction_changed")
    assert event.after == {"enabled": False, "was_enabled": True, "patterns": 2,
                           "patterns_before": 0}
    assert "ACME" not in str(event.after)  # how many, not what: a pattern may describe a secret


@pytest.mark.parametrize("patterns,named", [
    ("ACME-[0-9]{6}\nACME-([", "line 2 (&#x27;ACME-([&#x27;) is not a valid regular expression"),
    ("(a+)+b", "line 1 (&#x27;(a+)+b&#x27;) could take minutes on one long text"),
    (r"\w+@corp\.com", "begins with an unbounded repeat"),
    ("ok\n\na*", "line 3 (&#x27;a*&#x27;) matches empty text"),
])
def test_a_bad_pattern_is_refused_next_to_its_field_with_the_fix(client, cast, patterns, named):
    client.force_login(cast["ada"])
    page = client.post(URL, {"action": "save", "redact_secrets": "on",
                             "redaction_patterns": patterns})
    html = page.content.decode()
    assert page.status_code == 200 and named in html and "Fix: " in html
    assert html.index("invalid-feedback") > html.index('name="redaction_patterns"')
    assert settings_of(cast["account"]) == (True, [])
    assert not AuditEvent.objects.filter(action="account.redaction_changed").exists()


def test_preview_shows_what_a_sample_becomes_with_unsaved_patterns_and_saves_nothing(
        client, cast):
    client.force_login(cast["ada"])
    page = client.post(URL, {"action": "preview", "redact_secrets": "on",
                             "redaction_patterns": "ACME-[0-9]{6}",
                             "sample": f"key {SECRET} for ticket ACME-123456, commit "
                                       "9f3c2d1e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d"})
    html = page.content.decode()
    assert "key [REDACTED:openai-key] for ticket [REDACTED:custom], commit 9f3c2d1e" in html
    assert "2 secrets redacted." in html and "with unsaved settings" in html
    assert SECRET not in html.split("Would be stored as")[1]
    assert settings_of(cast["account"]) == (True, [])
    off = client.post(URL, {"action": "preview", "sample": SECRET}).content.decode()
    assert "Nothing redacted." in off  # the switch left unticked: previewed as off


def test_a_member_reads_the_settings_may_preview_but_cannot_change_them(client, cast):
    account = cast["account"]
    Account.objects.filter(pk=account.pk).update(redaction_patterns=["ACME-[0-9]{6}"])
    client.force_login(cast["bob"])
    page = client.get(URL).content.decode()
    assert "You are a member of this account" in page and "Save settings" not in page
    assert "ACME-[0-9]{6}" in page and " readonly" in page and " disabled" in page
    preview = client.post(URL, {"action": "preview", "sample": "ACME-123456",
                                "redaction_patterns": ""}).content.decode()
    assert "[REDACTED:custom]" in preview and "with unsaved settings" not in preview
    refused = client.post(URL, {"action": "save", "redaction_patterns": ""})
    assert refused.status_code == 403
    assert settings_of(account) == (True, ["ACME-[0-9]{6}"])


def test_an_outsider_sees_only_their_own_account_and_no_account_is_a_404(client, cast):
    Account.objects.filter(pk=cast["account"].pk).update(redaction_patterns=["ADA-[0-9]+"])
    client.force_login(cast["eve"])
    page = client.get(URL).content.decode()
    assert "Eve&#x27;s shop" in page and "ADA-" not in page
    # Her session names Ada's account: not hers, so she acts in her own, which she changes.
    session = client.session
    session["echo_memory_account_id"] = cast["account"].pk
    session.save()
    client.post(URL, {"action": "save", "redaction_patterns": "EVE-[0-9]+"})
    assert settings_of(cast["account"]) == (True, ["ADA-[0-9]+"])
    assert Account.objects.get(name="Eve's shop").redaction_patterns == ["EVE-[0-9]+"]
    client.force_login(make_email_user("nobody@example.com"))
    assert client.get(URL).status_code == 404
    client.logout()
    assert client.get(URL).status_code == 302  # to the sign-in page
