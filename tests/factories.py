"""What every suite's tests are made of, built through the product's own services.

Users, accounts, keys and members (an `Actor` is a user holding a key, as an agent does),
the engine's tools called with the plain dicts an agent sends, the entities, facts and
notes those take, and a signed-in browser session. A change to how any of them is made
is one edit here, whichever suite uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model

from accounts.models import Account, ApiKey, Membership
from accounts.principal import Principal, principal_from_key
from accounts.services import api_key_create
from memories.catalog.new_accounts import account_create

# The password of the users who sign in by email in the web tests.
PASSPHRASE = "a long passphrase 42"


@dataclass
class Actor:
    user: object
    account: Account
    key: ApiKey
    plaintext: str

    @property
    def principal(self) -> Principal:
        return principal_from_key(self.plaintext)

    @property
    def auth_header(self) -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.plaintext}"}


def make_user(username: str, *, password: str | None = None, **fields: Any):
    """A user whose password is `pw-<username>` unless given."""
    if password is None:
        password = "pw-" + username
    return get_user_model().objects.create_user(username=username, password=password, **fields)


def make_email_user(email: str, password: str = PASSPHRASE):
    """A user who signs in with an email address, which is also the username."""
    return make_user(email, email=email, password=password)


def make_actor(username: str, *, account: str, key: str, tool: str) -> Actor:
    """A new user owning a new account named `account`, holding a key to it."""
    user = make_user(username)
    owned = account_create(owner=user, name=account)
    made, plaintext = api_key_create(account=owned, holder=user, name=key, tool=tool)
    return Actor(user, owned, made, plaintext)


def make_member(account: Account, username: str, *, key: str, tool: str,
                role: str = Membership.Role.MEMBER) -> Actor:
    """A new user who joins `account` with `role` and holds a key to it."""
    user = make_user(username)
    Membership.objects.create(user=user, account=account, role=role)
    made, plaintext = api_key_create(account=account, holder=user, name=key, tool=tool)
    return Actor(user, account, made, plaintext)


def signed_up(email: str, *, key: str = "laptop", tool: str = "claude-code") -> Actor:
    """Someone who signed up on the web (their account and default memory made as the
    sign-up page makes them) and then made a key for their agent."""
    from web.services import sign_up

    user, account = sign_up(email=email, password=PASSPHRASE)
    made, plaintext = api_key_create(account=account, holder=user, name=key, tool=tool)
    return Actor(user, account, made, plaintext)


def session_for(user) -> str:
    """A signed-in session for `user`, its key for the browser's cookie."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    from accounts.backends import SIGN_IN_BACKEND
    from accounts.reauth import identity_checked

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = SIGN_IN_BACKEND
    session[HASH_SESSION_KEY] = get_user_model().objects.get(pk=user.pk).get_session_auth_hash()
    identity_checked(session)  # as a sign-in does
    session.save()
    return session.session_key


# A browser elsewhere: another network, another device.
ELSEWHERE = {"REMOTE_ADDR": "198.51.100.7",
             "HTTP_USER_AGENT": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) "
                                "AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 "
                                "Mobile/15E148 Safari/604.1"}


def signed_in_elsewhere(user, meta: dict | None = None):
    """Another signed-in session of `user` (a phone on another network), recorded as a
    sign-in records it: its SignedInSession row, whose `session_key` is the cookie."""
    from accounts.sessions import sign_in_recorded

    return sign_in_recorded(user=user, session_key=session_for(user),
                            meta=meta if meta is not None else ELSEWHERE)


class Engine:
    """The five tools, taking the same plain dicts an agent sends (through each tool's
    handler, as tools/call runs it after validation)."""

    # The contract and the engine are imported when first called: the root conftest imports
    # this module, and a suite that never writes a fact should not load them for it.
    def __init__(self, principal):
        self.principal = principal

    def _run(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        from tools.calling import run_validated
        from tools.registry import TOOLS

        arguments.setdefault("scope", "shared")
        return run_validated(self.principal, TOOLS[tool], arguments)

    def write(self, **arguments: Any) -> dict[str, Any]:
        return self._run("write_episode", arguments)

    def query(self, query: str = "", **arguments: Any) -> dict[str, Any]:
        return self._run("query_memory", {"query": query, **arguments})

    def trace(self, subject: str, **arguments: Any) -> dict[str, Any]:
        return self._run("trace_cause", {"subject": subject, **arguments})

    def save(self, **arguments: Any) -> dict[str, Any]:
        return self._run("record_recall_save", arguments)

    def audit(self, **arguments: Any) -> dict[str, Any]:
        return self._run("get_audit_log", arguments)

    @staticmethod
    def index() -> int:
        from memories.search import indexing

        return indexing.index_pending()


def person(name: str) -> dict[str, str]:
    return {"name": name, "type": "person"}


def fact(source: str, target: str, relation: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"source": source, "target": target, "relation_type": relation, "fact": text,
            "confidence": "extracted", **extra}


def write_waiting_facts(actor, count: int, tag: str) -> list[str]:
    """Facts written in process (the test database) that wait for their vectors: a test's
    transaction never commits, so nothing is scheduled."""
    from tools.calling import run_validated
    from tools.registry import TOOLS

    facts = [{"source": f"Pilot {tag} {i}", "target": f"Airfield {tag}",
              "relation_type": "landed_at", "confidence": "extracted",
              "fact": f"Pilot {tag} {i} landed the glider at the airfield in fog"}
             for i in range(count)]
    entities = [{"name": f"Pilot {tag} {i}", "type": "person"} for i in range(count)]
    entities.append({"name": f"Airfield {tag}", "type": "place"})
    reply = run_validated(actor.principal, TOOLS["write_episode"], {
        "scope": "shared", "memory": "default", "assume_new": True,
        "entities": entities, "facts": facts})
    return [edge["fact_id"] for edge in reply["edges_created"]]


def note(**extra) -> dict:
    """memory_save's arguments for one note, with `extra` over them."""
    return {"title": "Switched to JWT auth", "category": "decision",
            "what": "Replaced session cookies with JWT for stateless auth",
            "why": "The mobile API needed stateless auth instead of sticky sessions",
            "impact": "All endpoints now require a Bearer token",
            "tags": ["auth", "jwt"], "related_files": ["src/auth.py"],
            "details": "Options considered: cookies, JWT. Chose JWT.", "project": "api-server",
            **extra}
