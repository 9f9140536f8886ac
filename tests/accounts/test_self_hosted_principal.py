from __future__ import annotations

import pytest

from accounts.principal import principal_from_authorization
from echomem.errors import AuthenticationFailed, ConfigurationError


def test_self_hosted_box_takes_the_principal_from_the_environment(alice, settings):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "alice"
    settings.SELF_HOSTED_AGENT_ID = "nightly-job"
    principal = principal_from_authorization(None, client_address="127.0.0.1")
    assert principal.account_id == alice.account.pk
    assert principal.holder_id == alice.user.pk
    assert principal.tool == "nightly-job"
    assert principal.key_id is None


def test_a_key_still_wins_over_the_environment(alice, charlie, settings):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "alice"
    principal = principal_from_authorization(f"Bearer {charlie.plaintext}")
    assert principal.account_id == charlie.account.pk


def test_self_hosted_without_a_user_id_still_requires_a_key(alice, settings):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = ""
    with pytest.raises(AuthenticationFailed):
        principal_from_authorization(None, client_address="127.0.0.1")


def test_hosted_mode_ignores_the_environment_principal(alice, settings):
    settings.SELF_HOSTED = False
    settings.SELF_HOSTED_USER_ID = "alice"
    with pytest.raises(AuthenticationFailed):
        principal_from_authorization(None, client_address="127.0.0.1")


def test_unknown_self_hosted_user_is_a_configuration_error_naming_the_variable(db, settings):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "nobody"
    with pytest.raises(ConfigurationError, match="ECHO_MEMORY_USER_ID=nobody"):
        principal_from_authorization(None, client_address="127.0.0.1")


@pytest.mark.parametrize("address", ["::1", "127.0.0.5"])
def test_keyless_requests_from_this_machine_act_as_the_environment_user(
        alice, settings, address):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "alice"
    assert principal_from_authorization(None, client_address=address).holder_id == alice.user.pk


@pytest.mark.parametrize("address", ["192.168.1.20", "10.0.0.3", "2001:db8::1", "", None])
def test_keyless_requests_from_elsewhere_need_a_key(alice, settings, address):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "alice"
    with pytest.raises(AuthenticationFailed, match="only from this machine") as refused:
        principal_from_authorization(None, client_address=address)
    assert "ECHO_MEMORY_ALLOW_KEYLESS_REMOTE" in refused.value.fix


def test_keyless_remote_requests_are_allowed_only_when_a_setting_says_so(alice, settings):
    settings.SELF_HOSTED = True
    settings.SELF_HOSTED_USER_ID = "alice"
    settings.SELF_HOSTED_KEYLESS_REMOTE = True
    principal = principal_from_authorization(None, client_address="192.168.1.20")
    assert principal.holder_id == alice.user.pk
