"""Browser tests: Playwright drives the system Chromium, headless, against a live server.

Every page a test visits is saved as a screenshot under
`$ECHO_E2E_SCREENSHOTS/<test name>/` (default `.e2e-screenshots/` in the checkout),
numbered in visiting order, so a person can look at what the test saw. A console
error or an uncaught page error fails the test.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Response, sync_playwright

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("ECHO_E2E_SCREENSHOTS", REPO / ".e2e-screenshots"))


def chromium_path() -> str:
    found = (os.environ.get("ECHO_CHROMIUM") or shutil.which("chromium")
             or shutil.which("chromium-browser"))
    if not found:
        pytest.fail("the browser tests need Chromium: `./dev test` installs it with apt-get "
                    "where it can; otherwise install it, or set ECHO_CHROMIUM=/path/to/it")
    return found


# Per module, not per session: while Playwright's sync API is open it keeps an asyncio
# loop running on this thread, which other suites' own event loops (anyio) refuse.
# That loop also makes Django take the tests' own ORM calls (and the database fixtures')
# for async code; they are not, so the check is off while the module runs, and only then.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        launched = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        yield launched
        launched.close()


class Visits:
    """Screenshots of every page loaded in the test, and every console or page error.

    Pages are loaded through `goto` or `click`, which take the
    screenshot in the test's own flow (a load handler would race the next navigation);
    a load that happened any other way fails the test, so no page goes unseen.
    """

    def __init__(self, page: Page, folder: Path):
        self.page, self.folder, self.count = page, folder, 0
        self.errors: list[str] = []
        self.loads = 0
        # A page the test expects to answer with an error status (a 404 for a used link,
        # a 429): Chromium reports that load as a console error, which is then no fault.
        self.expected_status: int | None = None
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        page.on("load", self._loaded)

    def _console(self, message) -> None:
        if message.type == "error":
            if self.expected_status is not None and message.text.endswith(
                    f"the server responded with a status of {self.expected_status} "
                    f"({HTTPStatus(self.expected_status).phrase})"):
                return
            where = message.location.get("url") or self.page.url
            self.errors.append(f"console error on {self.page.url} ({where}): {message.text}")

    def _loaded(self, loaded: Page) -> None:
        self.loads += 1

    def goto(self, url: str, *, status: int | None = None, **options) -> Response | None:
        """Load url and screenshot it; `status` is the error status the test expects."""
        self.expected_status = status
        response = self.page.goto(url, **options)
        self.shoot()
        if status is not None:
            assert response is not None and response.status == status, url
        return response

    def click(self, role: str, name: str, *, status: int | None = None) -> None:
        """Click the link or button that loads the next page, then screenshot that page."""
        self.expected_status = status
        with self.page.expect_navigation() as navigation:
            self.page.get_by_role(role, name=name).click()
        self.shoot()
        if status is not None:
            assert navigation.value is not None and navigation.value.status == status

    def shoot(self) -> Path:
        self.page.wait_for_load_state()
        self.expected_status = None
        self.count += 1
        slug = re.sub(r"[^a-z0-9]+", "-", self.page.url.split("://", 1)[-1].split("/", 1)[-1]
                      .lower()).strip("-") or "home"
        path = self.folder / f"{self.count:02d}-{slug[:60]}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def visits(browser: Browser, request) -> Iterator[Visits]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    seen = Visits(page, SCREENSHOTS / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name))
    yield seen
    context.close()
    assert seen.errors == [], "\n".join(seen.errors)
    assert seen.count > 0, "the test visited no page"
    assert seen.loads <= seen.count, (
        f"{seen.loads} pages loaded but {seen.count} screenshots: load pages with "
        "visits.goto(...) or visits.click(...)")


@pytest.fixture
def page(visits: Visits) -> Page:
    return visits.page
