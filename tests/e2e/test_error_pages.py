"""Error pages in Chromium: a missing page, a refused role, an expired form and a server
fault each show the site's layout (styled, with the nav) and a way on that works."""

from __future__ import annotations

import pytest

from accounts.models import Membership
from tests.factories import make_email_user
from web.services import sign_up


def _sign_in(visits, page, url: str, email: str) -> None:
    visits.goto(f"{url}/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill("a long passphrase 42")
    visits.click("button", "Sign in")


def _in_the_layout(page, heading: str) -> None:
    assert page.get_by_role("heading", level=1, name=heading).is_visible()
    assert page.get_by_role("link", name="Echo Memory").first.is_visible()  # the nav's brand
    # Bootstrap's stylesheet applied: the primary button is filled, not a bare link.
    button = page.locator("main a.btn-primary").first
    assert button.evaluate("b => getComputedStyle(b).backgroundColor") != "rgba(0, 0, 0, 0)"


@pytest.mark.django_db(transaction=True)
def test_missing_refused_and_expired_pages_are_in_the_layout_with_a_way_on(live_server, page,
                                                                          visits):
    url = live_server.url
    visits.goto(f"{url}/no-such-page/", status=404)
    _in_the_layout(page, "Page not found")
    visits.click("link", "Go to the start page")
    assert page.url == f"{url}/"

    _, account = sign_up(email="ada@example.com", password="a long passphrase 42")
    bea = make_email_user("bea@example.com")
    Membership.objects.create(user=bea, account=account, role=Membership.Role.MEMBER)
    _sign_in(visits, page, url, "bea@example.com")
    visits.goto(f"{url}/memories/default/delete/", status=403)
    _in_the_layout(page, "You cannot do this here")
    assert "Only an owner or an admin of the account may delete a memory" in page.content()
    visits.goto(f"{url}/memories/nothing-here/", status=404)
    _in_the_layout(page, "Page not found")
    visits.click("link", "Go to the dashboard")
    assert page.url.endswith("/dashboard/")

    # A form whose page outlived its CSRF cookie (cleared here, as an expired one would be).
    visits.click("link", "New memory")
    page.context.clear_cookies(name="csrftoken")
    page.get_by_label("Name").fill("late")
    visits.click("button", "Create memory", status=403)
    _in_the_layout(page, "This form has expired")
    assert "reload the page" in page.content()


@pytest.mark.urls("tests.web.error_urls")
@pytest.mark.injects_server_fault
@pytest.mark.django_db(transaction=True)
def test_a_server_fault_is_a_styled_page_with_a_way_home(live_server, page, visits):
    visits.goto(f"{live_server.url}/boom/", status=500)
    _in_the_layout(page, "Something went wrong on our side")
    visits.click("link", "Go to the start page")
    assert page.url == f"{live_server.url}/"
