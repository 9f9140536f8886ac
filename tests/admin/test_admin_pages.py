from __future__ import annotations

import re

import pytest

from accounts import keys
from accounts.models import Account, ApiKey
from accounts.principal import principal_from_key
from billing.models import Plan, StripeEvent, Subscription, UsagePeriod, UsageRecord
from memories.models import Memory


@pytest.mark.parametrize("model", [Account, ApiKey, Memory, Plan, Subscription, UsagePeriod,
                                   UsageRecord, StripeEvent])
def test_every_model_has_an_admin_list(staff_client, model):
    meta = model._meta
    response = staff_client.get(f"/admin/{meta.app_label}/{meta.model_name}/")
    assert response.status_code == 200


def test_key_pages_never_show_the_secret_or_its_hash(staff_client, alice):
    _, secret = keys.parse(alice.plaintext)
    for url in ("/admin/accounts/apikey/", f"/admin/accounts/apikey/{alice.key.pk}/change/"):
        html = staff_client.get(url).content.decode()
        assert alice.key.prefix in html
        assert secret not in html
        assert alice.key.secret_hash not in html


def test_a_key_added_in_the_admin_is_shown_once_and_works(staff_client, alice):
    form = {"account": alice.account.pk, "holder": alice.user.pk, "name": "ci",
            "tool": "github-actions", "default_memory": ""}
    response = staff_client.post("/admin/accounts/apikey/add/", form, follow=True)
    html = response.content.decode()
    plaintext = re.search(r"em_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", html)[0]
    assert principal_from_key(plaintext).tool == "github-actions"
    again = staff_client.get(response.request["PATH_INFO"]).content.decode()
    assert plaintext not in again


def test_admin_refuses_a_key_for_a_non_member(staff_client, alice, charlie):
    form = {"account": alice.account.pk, "holder": charlie.user.pk, "name": "x",
            "tool": "cursor", "default_memory": ""}
    response = staff_client.post("/admin/accounts/apikey/add/", form)
    assert response.status_code == 200
    assert "not a member of this account" in response.content.decode()
    assert not ApiKey.objects.filter(holder=charlie.user, account=alice.account).exists()


def test_revoke_action_revokes_selected_keys(staff_client, alice, bob):
    staff_client.post("/admin/accounts/apikey/", {
        "action": "revoke", "_selected_action": [alice.key.pk, bob.key.pk],
    })
    assert ApiKey.objects.filter(revoked_at__isnull=False).count() == 2
