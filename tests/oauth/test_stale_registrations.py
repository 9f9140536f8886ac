"""Registrations software made for itself and never used are deleted after a day, in
batches, by beat and by the single box's housekeeping alike; any that someone connected,
or that holds a live token or code, stays."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
)

from accounts import connections
from accounts.models import Connection
from accounts.stale_registrations import delete_stale_registrations
from tests.oauth.conftest import register

Application = get_application_model()


def _registered(client, *, days_ago: float = 2):
    flow = register(client)
    Application.objects.filter(client_id=flow.client_id).update(
        created=timezone.now() - timedelta(days=days_ago))
    return flow


def _left() -> set[str]:
    return set(Application.objects.values_list("client_id", flat=True))


def test_only_old_unused_dynamic_registrations_are_deleted(signed_in, alice):
    unused = _registered(signed_in)
    assert get_access_token_model().objects.filter(  # its registration access token
        application__client_id=unused.client_id).count() == 1
    recent = _registered(signed_in, days_ago=0.5)
    connected = _registered(signed_in)
    connected.tokens()
    revoked = _registered(signed_in)
    revoked.tokens()
    connections.revoke(Connection.objects.get(application__client_id=revoked.client_id),
                       actor_id=alice.user.pk)
    mid_consent = _registered(signed_in)
    mid_consent.code()
    Connection.objects.filter(application__client_id=mid_consent.client_id).delete()
    by_hand = Application.objects.create(
        name="operator's", client_type="public", authorization_grant_type="authorization-code",
        redirect_uris="https://app.example/cb")
    Application.objects.filter(pk=by_hand.pk).update(created=timezone.now() - timedelta(days=9))

    assert delete_stale_registrations() == 1
    assert _left() == {recent.client_id, connected.client_id, revoked.client_id,
                       mid_consent.client_id, by_hand.client_id}
    assert not get_access_token_model().objects.filter(
        application__client_id=unused.client_id).exists()
    # The code expires: then nothing keeps it.
    get_grant_model().objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert delete_stale_registrations() == 1
    assert mid_consent.client_id not in _left()


def test_they_are_deleted_in_batches(signed_in):
    made = {_registered(signed_in).client_id for _ in range(5)}
    assert delete_stale_registrations(batch=2) == 5
    assert not made & _left()


def test_beat_and_the_single_boxs_housekeeping_both_delete_stale_registrations(signed_in):
    from accounts.tasks import delete_stale_oauth_registrations
    from echomem import housekeeping
    from echomem.celery import BEAT_SCHEDULE

    assert (BEAT_SCHEDULE["delete-stale-registrations"]["task"]
            == delete_stale_oauth_registrations.name)
    first = _registered(signed_in).client_id
    housekeeping.run_once()
    assert first not in _left()
    second = _registered(signed_in).client_id
    assert delete_stale_oauth_registrations() == 1
    assert second not in _left()
