"""Every page the URL resolver knows, in Chromium: no sideways scroll at 390, 768 and 1280 px,
no serious or critical axe-core finding (no rule turned off) in the light and the dark theme,
and a full-page screenshot at 390 px, each page seen empty (a new account with nothing in it)
and with long content (long names, descriptions, facts, emails and session ids, and lists
long enough to page).

The URL names come from the resolver itself: each is either walked (PAGES says how to reach
it, with which sample arguments) or listed in NOT_PAGES with the reason it is no page. A new
URL name in neither fails the first test, so a new page cannot go unwalked.

One browser page for the whole walk: each page is loaded once and resized in place (the
theme changed by emulating the system's setting, which theme.js follows), and the signed-in
worlds share their sessions by cookie, not by signing in. The default form runs axe on both
variants of each page at 390 and 1280 px; ECHO_E2E_FULL=1 runs the whole matrix: axe at all
three widths, every guide of the docs, and screenshots at 768 px too (docs/testing.md).

The theme switch and the skip link, which the walk does not exercise, are the last two tests.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.contrib.auth.tokens import default_token_generator
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from playwright.sync_api import Page, expect

from tests.factories import Engine, fact, note, session_for, signed_in_elsewhere, signed_up

FULL = os.environ.get("ECHO_E2E_FULL") == "1"
# ECHO_E2E_ONLY=web:dashboard,web:team walks only those URL names (while fixing a page).
ONLY = set(filter(None, os.environ.get("ECHO_E2E_ONLY", "").split(",")))
WIDTHS = (390, 768, 1280)
AXE_WIDTHS = WIDTHS if FULL else (390, 1280)
SHOT_WIDTHS = (390, 768) if FULL else (390,)
THEMES = ("light", "dark")
BLOCKING = {"serious", "critical"}
EMPTY, LONG = "empty", "long"
# Who is signed in: nobody, the world's owner, or a person with an authenticator app whose
# session has not yet passed it (the only way to the second-factor page).
ANON, OWNER, HALF = "anonymous", "owner", "second factor pending"

# axe-core as axe-playwright-python ships it (offline): injected once per loaded page, run
# per width and theme (its own Axe.run would inject the 500 kB script on every call).
AXE_SCRIPT = Axe().axe_script

# Long content: unbroken strings (an address, an id) where a layout is likeliest to give.
LONG_WORD = "x" * 12 + "-unbroken-" + "0123456789abcdef" * 4
LONG_EMAIL = ("grace.long-mailbox-name-for-layout-tests-0123456789@"
              "an-extremely-long-department-subdomain.example-organisation.example.com")
LONG_MEMORY = "incident-postmortems-for-the-checkout-platform-and-payments-2026"  # 64
LONG_SESSION = "session-" + "4f3a9c2e7b1d" * 8
LONG_SENTENCE = ("The full disk on db-2 caused the checkout outage because the write-ahead log "
                 "was never rotated after the upgrade; see https://runbooks.example.com/"
                 "databases/postgres/write-ahead-log/rotation-after-major-upgrade?section="
                 "disk-full-recovery for the steps we followed, and " + LONG_WORD + ". ") * 2


@dataclass
class World:
    """One signed-up account and what the walk needs of it: sample arguments for the
    pages that take them (None where this world has no such thing)."""

    name: str
    sessions: dict[str, str] = field(default_factory=dict)  # who -> session cookie
    memory: str = "default"
    entity_id: str | None = None
    episode_id: str | None = None
    fact_id: str | None = None
    note_id: str | None = None
    key_id: int | None = None
    member_id: int | None = None
    invitation_id: int | None = None
    invitation_token: str | None = None
    connection_id: int | None = None
    reset_path: str | None = None
    recovery_codes: str | None = None
    authorize_query: str | None = None


@dataclass(frozen=True)
class Walked:
    """How to reach a page: who is signed in, its path in a world (None: this world has
    nothing to show there), the status it answers with, and whether it differs between the
    worlds (a page that does not is walked in the empty world only)."""

    who: str
    path: Callable[[World], str | None]
    status: int = 200
    differs: bool = True
    redirects: bool = False


def at(path: str, who: str = OWNER, *, differs: bool = True) -> Walked:
    return Walked(who, lambda world: path, differs=differs)


def mem(suffix: str = "") -> Callable[[World], str]:
    return lambda world: f"/memories/{world.memory}/{suffix}"


def needs(attribute: str, template: str) -> Callable[[World], str | None]:
    def path(world: World) -> str | None:
        value = getattr(world, attribute)
        return None if value is None else template.format(memory=world.memory, value=value)
    return path


PAGES: dict[str, Walked] = {
    "home": at("/", ANON, differs=False),
    "web:signup": at("/signup/", ANON, differs=False),
    "web:signup_sent": at("/signup/sent/", ANON, differs=False),
    "web:login": at("/login/", ANON, differs=False),
    "web:second_factor": at("/login/second-factor/", HALF),  # only the long world has one
    "web:password_reset": at("/password-reset/", ANON, differs=False),
    "web:password_reset_sent": at("/password-reset/sent/", ANON, differs=False),
    # Django's view puts the token in the session and redirects to its set-password page.
    "web:password_reset_confirm": Walked(ANON, lambda world: world.reset_path, redirects=True),
    # A link that is no longer good: its page (a good one redirects to the dashboard).
    "web:verify_email": Walked(ANON, lambda world: "/verify-email/not-a-token/", status=404,
                               differs=False),
    "web:invitation_accept": Walked(ANON, needs("invitation_token", "/invitations/{value}/")),
    "web:docs": at("/docs/", ANON, differs=False),
    # The guide with the most code blocks and tables; the long form walks every guide.
    "web:docs_page": at("/docs/agents/", ANON, differs=False),
    "oauth2_provider:authorize": Walked(
        OWNER, needs("authorize_query", "/oauth/authorize?{value}")),
    "web:reauth": at("/confirm/"),
    "web:sessions": at("/account/sessions/"),
    "web:password_change": at("/account/password/"),
    "web:dashboard": at("/dashboard/"),
    "web:key_new": at("/keys/new/"),
    "web:key_created": Walked(OWNER, needs("key_id", "/keys/{value}/created/")),
    "web:key_revoke": Walked(OWNER, needs("key_id", "/keys/{value}/revoke/")),
    "web:key_rotate": Walked(OWNER, needs("key_id", "/keys/{value}/rotate/")),
    "web:memory_new": at("/memories/new/"),
    "web:memory_delete": Walked(OWNER, mem("delete/")),
    "web:memory_rename": Walked(OWNER, mem("rename/")),
    "web:memory_import": Walked(OWNER, mem("import/")),
    "web:memory_explorer": Walked(OWNER, mem()),
    "web:explorer_entity": Walked(OWNER,
                                  needs("entity_id", "/memories/{memory}/entities/{value}/")),
    "web:explorer_episode": Walked(OWNER,
                                   needs("episode_id", "/memories/{memory}/episodes/{value}/")),
    "web:explorer_fact": Walked(OWNER, needs("fact_id", "/memories/{memory}/facts/{value}/")),
    "web:explorer_cause": Walked(OWNER, mem("cause/")),
    "web:explorer_notes": Walked(OWNER, mem("notes/")),
    "web:explorer_note": Walked(OWNER, needs("note_id", "/memories/{memory}/notes/{value}/")),
    "web:connected_apps": at("/apps/"),
    "web:connected_app_revoke": Walked(OWNER, needs("connection_id", "/apps/{value}/revoke/")),
    "web:account_delete": at("/account/delete/"),
    "web:account_settings": at("/account/"),
    "web:preferences": at("/account/preferences/", differs=False),
    "web:account_security": at("/account/security/"),
    "web:totp_setup": at("/account/security/app/"),
    # Shown once, after codes are made (the long world's session holds a set).
    "web:recovery_codes": Walked(OWNER, needs("recovery_codes", "/account/security/"
                                                                "recovery-codes/")),
    "web:audit_log": at("/audit/"),
    "web:team": at("/team/"),
    "web:redaction_settings": at("/account/redaction/"),
    "web:account_leave": at("/team/leave/"),
    "web:member_role": Walked(OWNER, needs("member_id", "/team/members/{value}/role/")),
    "web:member_remove": Walked(OWNER, needs("member_id", "/team/members/{value}/remove/")),
    "web:invitation_revoke": Walked(OWNER,
                                    needs("invitation_id", "/team/invitations/{value}/revoke/")),
    "web:account_new": at("/accounts/new/"),
    "web:billing": at("/billing"),
}

POST_ONLY = "a POST-only action: its page is the form that posts to it"
NOT_PAGES: dict[str, str] = {
    "web:verify_resend": POST_ONLY,
    "web:logout": POST_ONLY,
    "web:session_sign_out": POST_ONLY,
    "web:sessions_sign_out_others": POST_ONLY,
    "web:memory_default": POST_ONLY,
    "web:totp_remove": POST_ONLY,
    "web:passkey_name": POST_ONLY,
    "web:passkey_remove": POST_ONLY,
    "web:factor_requirement": POST_ONLY,
    "web:audit_verify": POST_ONLY,
    "web:account_switch": POST_ONLY,
    "web:first_run": "the dashboard's checklist as its polling fetches it (an htmx fragment, "
                     "walked inside the dashboard)",
    "web:explorer_cause_suggest": "the cause view's suggestions as you type (an htmx fragment, "
                                  "walked in tests/e2e/test_explorer_keyboard.py)",
    "web:billing_checkout": "POST-only: redirects to Stripe's checkout",
    "web:billing_portal": "POST-only: redirects to Stripe's customer portal",
    "web:memory_export": "a download (the memory as a JSON file), no page",
    "web:account_export": "a download (the account as a JSON file), no page",
    "web:audit_export_csv": "a download (CSV)",
    "web:audit_export_jsonl": "a download (JSON lines)",
    "billing/": "a redirect to /billing",
    "favicon.ico": "a redirect to the static icon",
    "healthz": "a machine endpoint (load balancer's liveness probe, plain text)",
    "readyz": "a machine endpoint (readiness probe, plain text)",
    "metrics": "a machine endpoint (Prometheus text)",
    "mcp_gateway:mcp": "the MCP endpoint (JSON-RPC for agents)",
    "billing:stripe_webhook": "Stripe's webhook (POST, JSON)",
    "^api(/.*)?$": "the REST API's JSON 404 for every other /api path",
    "oauth2_provider:oauth-resource-metadata": "OAuth discovery (JSON)",
    "oauth2_provider:oauth-resource-metadata-mcp": "OAuth discovery (JSON)",
    "oauth2_provider:oauth-server-metadata": "OAuth discovery (JSON)",
    "oauth2_provider:openid-configuration": "OAuth discovery (JSON)",
    "oauth2_provider:token": "OAuth token endpoint (POST, JSON)",
    "oauth2_provider:revoke-token": "OAuth revocation endpoint (POST)",
    "oauth2_provider:dcr-register": "OAuth dynamic client registration (POST, JSON)",
    "oauth2_provider:dcr-register-management": "OAuth client management (JSON)",
}
# Whole namespaces and prefixes that hold no page of this site's.
NOT_PAGE_GROUPS: dict[str, str] = {
    "api:": "the REST API (JSON); its /docs and /redoc are drf-spectacular's own viewers",
    "otp_webauthn:": "passkeys' browser ceremonies (JSON for its script)",
    "admin:": "Django's admin site: the operator's tool, Django's own templates",
    "admin/": "Django's admin site (its unnamed routes)",
    "api/v1/": "the REST API's root",
}


def url_names(resolver: URLResolver | None = None, namespace: str = "",
              prefix: str = "") -> Iterator[str]:
    """Every route's full name (`namespace:name`), or its pattern where it has no name."""
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = (f"{namespace}{entry.namespace}:" if entry.namespace else namespace)
            yield from url_names(entry, inner, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield f"{namespace}{entry.name}" if entry.name else prefix + str(entry.pattern)


def not_a_page(name: str) -> bool:
    return name in NOT_PAGES or any(name.startswith(group) for group in NOT_PAGE_GROUPS)


def test_every_url_name_is_walked_or_said_to_be_no_page():
    names = set(url_names())
    unknown = sorted(name for name in names if name not in PAGES and not not_a_page(name))
    assert unknown == [], (
        "URL names neither walked nor excused: add each to PAGES in "
        f"tests/e2e/test_every_page.py (how to reach it) or to NOT_PAGES (why it is no page): "
        f"{unknown}")
    assert not set(PAGES) & set(NOT_PAGES)
    gone = sorted(set(PAGES) - names) + sorted(set(NOT_PAGES) - names)
    assert gone == [], f"no longer routes, drop them from the tables: {gone}"


# --- the worlds -------------------------------------------------------------------------


def _empty_world() -> World:
    from web.services import sign_up

    user, _ = sign_up(email="new@example.com", password="a long passphrase 42")
    return World(EMPTY, sessions={OWNER: session_for(user)})


def _long_world(live_server) -> World:
    from django.conf import settings
    from django.contrib.sessions.backends.db import SessionStore
    from django_otp.plugins.otp_totp.models import TOTPDevice
    from oauth2_provider.models import get_application_model

    from accounts import team
    from accounts.connections import connect
    from accounts.models import Account, Membership
    from accounts.services import api_key_create
    from memories.graph.services import memory_create
    from memories.models import Memory
    from tests.factories import make_email_user
    from tests.oauth.conftest import pkce_pair
    from web import shown_once
    from web.account_security import CODES

    owner = signed_up(LONG_EMAIL, key="a key with a long name for the " + LONG_WORD[:40])
    account = owner.account
    Account.objects.filter(pk=account.pk).update(
        name="The checkout platform and payments reliability team's shared account")
    world = World(LONG, memory=LONG_MEMORY)
    described = ("Postmortems, runbooks and decisions of the checkout platform team, kept "
                 "for every agent that works on it: " + LONG_WORD)
    memory = memory_create(account_id=account.pk, name=LONG_MEMORY, description=described)
    for i in range(26):  # more than a page of the dashboard's list (25)
        memory_create(account_id=account.pk, name=f"{LONG_MEMORY[:58]}-{i:03d}",
                      description=described)
    soon = timezone.now() + timedelta(days=3)
    for i in range(26):
        api_key_create(account=account, holder=owner.user, name=f"support bot {i} {LONG_WORD[:80]}",
                       tool="a-tool-with-a-rather-long-name-0123456789", default_memory=memory,
                       read_only=i % 2 == 0, memories=[memory] if i % 3 == 0 else None,
                       expires_at=soon if i % 4 == 0 else None)
    world.key_id = owner.key.pk

    engine = Engine(owner.principal)
    entities = [{"name": f"Checkout outage of the payments platform {LONG_WORD}",
                 "type": "event"},
                {"name": "Disk full on db-2 (the primary of the orders cluster in eu-west-1)",
                 "type": "event"}]
    written = engine.write(
        memory=LONG_MEMORY, assume_new=True, session_id=LONG_SESSION, entities=entities,
        facts=[fact(entities[1]["name"], entities[0]["name"], "caused", LONG_SENTENCE,
                    causal_hint="led_to")]
        + [fact(entities[1]["name"], entities[0]["name"], f"relation_{i}",
                f"Fact {i}: {LONG_SENTENCE[:300]}") for i in range(12)])
    world.episode_id = str(written["episode_id"])
    world.fact_id = str(written["edges_created"][0]["fact_id"])
    world.entity_id = next(entity["id"] for entity in written["entities"]
                           if entity["name"] == entities[0]["name"])
    saved = engine._run("memory_save", note(
        memory=LONG_MEMORY, title="Rotate the write-ahead log after every major upgrade",
        what=LONG_SENTENCE, why=LONG_SENTENCE, impact=LONG_SENTENCE,
        related_files=["src/" + "very/deep/" * 8 + "rotation_after_major_upgrade.py"],
        details=LONG_SENTENCE, project="checkout-" + LONG_WORD[:40]))
    world.note_id = saved["id"]

    member = make_email_user("ops." + LONG_EMAIL)
    world.member_id = Membership.objects.create(user=member, account=account,
                                                role=Membership.Role.ADMIN).pk
    tokens = []
    for i in range(3):
        invited = team.invite(principal=owner.principal, actor_role=Membership.Role.OWNER,
                              email=f"invitee{i}.{LONG_EMAIL}", role=Membership.Role.MEMBER,
                              link_for=lambda token: tokens.append(token) or token)
        world.invitation_id = invited.pk
    world.invitation_token = tokens[-1]

    application = get_application_model().objects.create(
        name="A connector with a long name for " + LONG_WORD,
        client_id="https://connectors.example.com/" + LONG_WORD + "/client.json",
        client_type="public", redirect_uris="http://127.0.0.1:33418/callback",
        authorization_grant_type="authorization-code")
    world.connection_id = connect(
        user=owner.user, account_id=account.pk, application=application, read_only=True,
        memories=list(Memory.objects.filter(account=account)[:5]), default_memory=memory).pk
    _, challenge = pkce_pair()
    world.authorize_query = urlencode({
        "response_type": "code", "client_id": application.client_id,
        "redirect_uri": "http://127.0.0.1:33418/callback", "state": "st-walk",
        "code_challenge": challenge, "code_challenge_method": "S256",
        "scope": "memory:read memory:write", "resource": f"{live_server.url}/mcp"})

    for i in range(4):
        signed_in_elsewhere(owner.user, {"REMOTE_ADDR": f"198.51.100.{i + 7}",
                                         "HTTP_USER_AGENT": "Mozilla/5.0 " + LONG_WORD * 3})
    uid = urlsafe_base64_encode(force_bytes(owner.user.pk))
    world.reset_path = (f"/password-reset/{uid}/"
                        f"{default_token_generator.make_token(owner.user)}/")

    own = session_for(owner.user)
    world.sessions[OWNER] = own
    # The secrets a POST leaves for the next page, as the key and recovery-code forms do.
    store = SessionStore(session_key=own)
    store[shown_once.PREFIX + "api_key"] = {"id": owner.key.pk, "secret": owner.plaintext}
    world.recovery_codes = "held"
    store[shown_once.PREFIX + CODES] = {"id": 0, "secret": " ".join(
        f"code{i:04d}-{LONG_WORD[:8]}" for i in range(10))}
    store.save()

    halfway = make_email_user("halfway." + LONG_EMAIL)
    TOTPDevice.objects.create(user=halfway, name="phone", confirmed=True)
    Membership.objects.create(user=halfway, account=account, role=Membership.Role.MEMBER)
    world.sessions[HALF] = session_for(halfway)
    assert settings.STRIPE_SECRET_KEY  # the billing page is on (the test's settings)
    return world


# --- the walk ---------------------------------------------------------------------------

# The innermost elements that stick out past the viewport, outside any box that scrolls or
# clips them: what to fix when a page scrolls sideways.
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  // Its content may overflow it (nowrap text) unless it scrolls or clips.
  const right = (el) => {
    const box = el.getBoundingClientRect();
    return getComputedStyle(el).overflowX === 'visible'
      ? Math.max(box.right, box.left + el.scrollWidth) : box.right;
  };
  const sticksOut = (el) => {
    if (right(el) <= width + 0.5) return false;
    // An absolutely placed element escapes a scrolling box that is not positioned.
    const placed = ['absolute', 'fixed'].includes(getComputedStyle(el).position);
    for (let up = el.parentElement; up && up !== document.body && !placed;
         up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== 'visible') return false;
    }
    return true;
  };
  const out = [...document.body.querySelectorAll('*')].filter(sticksOut);
  return out.filter((el) => !out.some((other) => other !== el && el.contains(other)))
    .slice(0, 3).map((el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      [...el.classList].slice(0, 3).map((c) => '.' + c).join('') + ' (' +
      Math.round(right(el) - width) + ' px)');
}"""


def blocking_violations(page: Page, rules: list[str] | None = None) -> list[str]:
    """axe's serious and critical findings on the page as it is now, one line per node:
    every rule, or only `rules`."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    options = {"resultTypes": ["violations"]}
    if rules is not None:
        options["runOnly"] = {"type": "rule", "values": rules}
    found = page.evaluate("options => axe.run(document, options)", options)["violations"]
    return [f"{violation['id']} ({violation['impact']}): {node['target']} "
            f"{node.get('failureSummary', '').splitlines()[-1:]}"
            for violation in found if violation["impact"] in BLOCKING
            for node in violation["nodes"]]


def check_page(page: Page, visits, where: str) -> list[str]:
    """The loaded page at each width (no reload): its overflow, axe in both themes."""
    failures = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        over = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        if over > 0:
            failures.append(f"{where} at {width}px: {over} px of sideways scroll; widest: "
                            f"{', '.join(page.evaluate(OVERFLOWING))}")
        if width in SHOT_WIDTHS and width != WIDTHS[0]:
            visits.shoot()
        if width in AXE_WIDTHS:
            for theme in THEMES:
                page.emulate_media(color_scheme=theme)
                # theme.js hears the change as an event, a moment after it.
                expect(page.locator("html")).to_have_attribute("data-bs-theme", theme)
                # Every rule in both themes: a theme is more than colours (a dark variant of a
                # component may hide or show a part, which other rules then judge).
                failures += [f"{where} at {width}px, {theme}: {line}"
                             for line in blocking_violations(page)]
            page.emulate_media(color_scheme="light")
    return failures


def walk_world(page: Page, visits, base: str, world: World, walked: list[str]) -> list[str]:
    failures = []
    order = (ANON, HALF, OWNER)
    for who in order:
        page.context.clear_cookies()
        if who != ANON:
            if who not in world.sessions:
                continue
            page.context.add_cookies([{"name": "sessionid", "value": world.sessions[who],
                                       "url": base}])
        for name, how in PAGES.items():
            if how.who != who or (world.name == LONG and not how.differs) or \
                    (ONLY and name not in ONLY):
                continue
            paths = [how.path(world)]
            if name == "web:docs_page" and FULL:
                from web.user_docs import GUIDES
                paths = [f"/docs/{guide.slug}/" for guide in GUIDES]
            for path in filter(None, paths):
                page.set_viewport_size({"width": WIDTHS[0], "height": 900})
                response = visits.goto(base + path,
                                       status=how.status if how.status != 200 else None)
                assert response is not None
                if how.status == 200 and response.status != 200:
                    failures.append(f"{name} ({world.name}) {path}: HTTP {response.status}")
                    continue
                landed = page.url.removeprefix(base)
                if landed != path and not how.redirects:
                    failures.append(f"{name} ({world.name}) {path}: redirected to {landed}")
                    continue
                walked.append(f"{name} ({world.name})")
                failures += check_page(page, visits, f"{path} ({name}, {world.name})")
    return failures


@pytest.mark.django_db(transaction=True)
def test_every_page_fits_every_width_and_passes_axe_in_both_themes(
        live_server, page, visits, settings):
    settings.STRIPE_SECRET_KEY = "sk_test_walk"  # the billing page; Stripe is not called
    from echomem.oauth_settings import oauth_provider
    settings.OAUTH2_PROVIDER = oauth_provider(live_server.url)
    # Bootstrap's colour transitions would have axe measure colours half-way through a
    # change of theme; a person who asks for reduced motion gets none, so the test asks.
    page.emulate_media(reduced_motion="reduce", color_scheme="light")
    empty, full = _empty_world(), _long_world(live_server)
    walked: list[str] = []
    failures = walk_world(page, visits, live_server.url, empty, walked)
    failures += walk_world(page, visits, live_server.url, full, walked)
    seen = {entry.split(" (")[0] for entry in walked}
    failures += [f"{name}: not walked" for name in sorted((ONLY or set(PAGES)) - seen)]
    assert failures == [], f"{len(failures)} problems:\n" + "\n".join(failures)


# --- what the walk does not exercise ----------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_theme_follows_the_system_and_the_switch_remembers_a_choice(
        live_server, page, visits):
    theme = page.locator("html")
    switch = page.get_by_role("button", name="Dark mode")
    page.emulate_media(color_scheme="light")
    visits.goto(f"{live_server.url}/login/")
    expect(theme).to_have_attribute("data-bs-theme", "light")
    expect(switch).to_have_attribute("aria-pressed", "false")

    switch.click()  # a choice unlike the system's: kept
    expect(theme).to_have_attribute("data-bs-theme", "dark")
    expect(switch).to_have_attribute("aria-pressed", "true")
    visits.goto(f"{live_server.url}/signup/")
    expect(theme).to_have_attribute("data-bs-theme", "dark")
    page.emulate_media(color_scheme="dark")
    page.emulate_media(color_scheme="light")  # the system changing does not undo a choice
    expect(theme).to_have_attribute("data-bs-theme", "dark")

    switch.click()  # back to the system's theme: the page follows the system again
    expect(theme).to_have_attribute("data-bs-theme", "light")
    page.emulate_media(color_scheme="dark")
    expect(theme).to_have_attribute("data-bs-theme", "dark")
    expect(switch).to_have_attribute("aria-pressed", "true")
    visits.goto(f"{live_server.url}/login/")
    expect(theme).to_have_attribute("data-bs-theme", "dark")


@pytest.mark.django_db(transaction=True)
def test_the_skip_link_is_the_first_stop_and_moves_focus_to_the_main_content(
        live_server, page, visits):
    visits.goto(f"{live_server.url}/")  # a page with no autofocus field
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to main content")
    assert skip.evaluate("element => element === document.activeElement")
    assert skip.is_visible()  # hidden until focused, then shown
    visits.shoot()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.keyboard.press("Tab")  # the next stop is inside <main>, past the navigation
    assert page.evaluate("document.getElementById('main').contains(document.activeElement)")
    visits.shoot()  # the focus ring of that stop
    for landmark in ("banner", "navigation", "main", "contentinfo"):
        assert page.get_by_role(landmark).count() >= 1, landmark


@pytest.mark.django_db(transaction=True)
def test_the_navigation_folds_behind_a_menu_button_on_a_phone(live_server, page, visits):
    page.set_viewport_size({"width": 390, "height": 800})
    visits.goto(f"{live_server.url}/")
    menu = page.get_by_role("button", name="Menu")
    docs = page.get_by_role("navigation", name="Main").get_by_role("link", name="Docs")
    expect(docs).to_be_hidden()
    menu.click()  # Bootstrap's collapse (its script, under the CSP)
    expect(docs).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "true")
    visits.shoot()
    page.set_viewport_size({"width": 1280, "height": 800})  # wide: no button, links in line
    expect(menu).to_be_hidden()
    expect(docs).to_be_visible()
