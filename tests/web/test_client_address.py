"""One client-address key for every per-address limit: the web's sign-in, sign-up and reset
pages and the API's requests without a usable key count the same client under the same
key, IPv4, IPv6 (per /64) and loopback alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from echomem.client_address import client_address, client_key, is_loopback
from tests.mcp.conftest import fake_clock  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]

# (address, the key its limits count under)
KEYS = [
    ("192.0.2.1", "192.0.2.1"),
    ("2001:db8:1:2::10", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
    ("::1", "::1"),  # this machine, not the ::/64 it would round to
    ("::2", "::/64"),
    ("127.0.0.1", "127.0.0.1"),
    ("::ffff:192.0.2.1", "192.0.2.1"),  # an IPv4 client on an IPv6 socket is that client
    ("::ffff:127.0.0.1", "127.0.0.1"),
    ("fe80::1%eth0", "fe80::/64"),
    ("", "unknown"),
]

# Pairs of clients, and whether they are one client to every limit.
PAIRS = [
    ("2001:db8:1:2::10", "2001:db8:1:2:ffff::1", True),
    ("2001:db8:1:2::10", "2001:db8:1:3::10", False),
    ("::1", "::2", False),
    ("::ffff:192.0.2.1", "192.0.2.1", True),
    ("192.0.2.1", "192.0.2.2", False),
]


@pytest.mark.parametrize(("address", "key"), KEYS)
def test_each_address_has_one_key(address, key):
    assert client_key({"REMOTE_ADDR": address}) == key


def test_loopback_is_this_machine_in_every_spelling():
    assert all(is_loopback(a) for a in ("127.0.0.1", "::1", "::ffff:127.0.0.1", "127.8.9.1"))
    assert not any(is_loopback(a) for a in ("192.0.2.1", "::2", "", "not an address", None))


def test_behind_trusted_proxies_the_key_is_the_forwarded_client(settings):
    settings.TRUSTED_PROXY_HOPS = 1
    meta = {"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "spoofed, ::ffff:198.51.100.1"}
    assert client_address(meta) == "198.51.100.1" and client_key(meta) == "198.51.100.1"
    settings.TRUSTED_PROXY_HOPS = 0
    assert client_key(meta) == "10.0.0.1"


def _sign_in(client, address):
    return client.post("/login/", {"username": "a@example.com", "password": "x"},
                       REMOTE_ADDR=address)


def _admin_sign_in(client, address):
    return client.post("/admin/login/", {"username": "root", "password": "x"},
                       REMOTE_ADDR=address)


def _bad_key_api(client, address):
    return client.post("/mcp", data="{}", content_type="application/json",
                       HTTP_AUTHORIZATION="Bearer em_000000000000_" + "x" * 43,
                       REMOTE_ADDR=address)


def _keyless_api(client, address):
    return client.post("/mcp", data="{}", content_type="application/json",
                       REMOTE_ADDR=address)


# A bad key counts in UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE's window, a request with no
# credential in CHALLENGE_RATE_LIMIT_PER_MINUTE's: both under the same client key.
DOORS = {"sign-in": (_sign_in, 200), "admin sign-in": (_admin_sign_in, 200),
         "API with a bad key": (_bad_key_api, 401), "API without a key": (_keyless_api, 401)}


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(("first", "second", "same"), PAIRS)
def test_every_door_counts_a_client_under_the_same_key(client, db, settings, fake_clock,  # noqa: F811
                                                       door, first, second, same):
    settings.WEB_RATE_LIMITS = {**settings.WEB_RATE_LIMITS, "login_ip": "1/m",
                                "login_email": "1000/m"}
    settings.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE = 1
    settings.CHALLENGE_RATE_LIMIT_PER_MINUTE = 1
    knock, answered = DOORS[door]
    assert knock(client, first).status_code == answered
    assert knock(client, second).status_code == (429 if same else answered)


def test_no_module_buckets_addresses_but_the_one_key_function():
    """The /64 rounding (and its loopback exception) is written once."""
    writers = sorted(str(path.relative_to(ROOT)) for folder in
                     ("accounts", "api", "billing", "echomem", "mcp_gateway", "memories", "web")
                     for path in (ROOT / folder).rglob("*.py")
                     if "ip_network(" in path.read_text(encoding="utf-8"))
    assert writers == ["echomem/client_address.py"]
