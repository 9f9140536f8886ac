"""A person at a browser, for the live OAuth flows: plain httpx with a cookie jar, which
follows the authorize URL an OAuth client hands it through the real sign-in page and the
consent page, and stops at the redirect to the client's loopback callback (nobody listens
there unless the client does), reading the code and state from it."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
from mcp.client.auth import AuthorizationCodeResult
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class MemoryStorage:
    """mcp.client.auth.TokenStorage, in memory, so a test can read and change what the SDK keeps."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class _Forms(HTMLParser):
    """Each <form>'s action and the fields a browser would send by default: inputs (radios
    and checkboxes only when checked) and named submit buttons, kept apart."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action") or "", "fields": {}, "buttons": {}})
        elif self.forms and a.get("name") and tag in ("input", "button"):
            kind = (a.get("type") or ("submit" if tag == "button" else "text")).lower()
            if kind == "submit":
                self.forms[-1]["buttons"][a["name"]] = a.get("value") or ""
            elif kind not in ("radio", "checkbox") or "checked" in a:
                self.forms[-1]["fields"][a["name"]] = a.get("value") or ""


def page_form(html: str, *, having: str) -> dict:
    parser = _Forms()
    parser.feed(html)
    for form in parser.forms:
        if having in form["fields"] or having in form["buttons"]:
            return form
    raise AssertionError(f"no form with {having} on the page:\n{html[:3000]}")


class Person:
    """Signs in with a password and allows the app. `steps` keeps every URL it opened."""

    def __init__(self, login: str, password: str, callback: str) -> None:
        self.login, self.password, self.callback = login, password, callback
        self.steps: list[str] = []
        self.asked = 0
        self.result: AuthorizationCodeResult | None = None
        self.callback_url: str | None = None

    def authorize(self, authorization_url: str) -> str:
        """Everything from the authorize URL to the callback URL the server redirects to."""
        with httpx.Client(follow_redirects=False, timeout=30) as browser:
            response = browser.get(authorization_url)
            self.steps.append(authorization_url)
            for _ in range(12):
                if response.is_redirect:
                    location = urljoin(str(response.url), response.headers["location"])
                    if location.startswith(self.callback):
                        self.callback_url = location
                        return location
                    self.steps.append(location)
                    response = browser.get(location)
                    continue
                assert response.status_code == 200, (response.status_code, response.text[:2000])
                response = self._submit(browser, response)
        raise AssertionError(f"no redirect to the callback after {self.steps}")

    def _submit(self, browser: httpx.Client, page: httpx.Response) -> httpx.Response:
        if 'type="password"' in page.text:
            form = page_form(page.text, having="password")
            data = {**form["fields"], "username": self.login, "password": self.password}
        else:
            form = page_form(page.text, having="allow")
            data = {**form["fields"], "allow": form["buttons"]["allow"]}
        target = urljoin(str(page.url), form["action"] or str(page.url))
        self.steps.append(f"POST {target}")
        return browser.post(target, data=data, headers={"Referer": str(page.url)})

    async def redirect_handler(self, authorization_url: str) -> None:
        self.asked += 1
        location = self.authorize(authorization_url)
        query = parse_qs(urlsplit(location).query)
        assert "error" not in query, query
        self.result = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0],
                                              iss=query.get("iss", [None])[0])

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.result is not None, "the SDK asked for the callback before the redirect"
        return self.result
