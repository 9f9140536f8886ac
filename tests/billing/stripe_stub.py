"""A stand-in for the Stripe pages and endpoints localstripe lacks (Checkout, portal).

`StripeStub(localstripe_url=..., webhook_url=..., webhook_secret=...)` is a local HTTP
server: point settings.STRIPE_API_BASE at `stub.url`. It records every request
(`stub.requests`), serves POST /v1/checkout/sessions and /v1/billing_portal/sessions
itself, and forwards every other /v1/ request to localstripe. Its Checkout page
(GET /checkout/<id>) has a "Pay" button; paying (POST /checkout/<id>/pay) gives the
session's customer a card and subscribes it in localstripe to the session's price (the
id of a localstripe plan), which makes localstripe deliver customer.subscription.created,
then POSTs a signed checkout.session.completed to the webhook URL itself, and finally
redirects (303) to the session's success_url, `{CHECKOUT_SESSION_ID}` replaced by the
session's id, as Stripe does. `stub.create_price(...)`
makes the price a Plan's stripe_price_id must name. localstripe delivers its own events
only where `LocalStripe.deliver_webhooks(url, secret)` (tests/billing/localstripe_server.py)
told it to; tests/billing/test_stripe_stub.py shows the whole setup.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import itertools
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.billing.localstripe_server import free_port


def stripe_signature(payload: bytes, secret: str, *, at: int | None = None) -> str:
    """The Stripe-Signature header Stripe sends: t=<unix time>,v1=HMAC-SHA256(secret, t.body)."""
    at = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{at}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={at},v1={digest}"


@dataclass
class Recorded:
    method: str
    path: str
    form: dict[str, str]  # the form-encoded body (or query), keys as sent: line_items[0][price]
    stripe_version: str | None
    authorization: str | None


class StripeStub:
    def __init__(self, *, localstripe_url: str, webhook_url: str = "",
                 webhook_secret: str = "") -> None:
        self.localstripe_url = localstripe_url.rstrip("/")
        self.webhook_url = webhook_url
        self.webhook_secret = webhook_secret
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.requests: list[Recorded] = []
        self.sessions: dict[str, dict] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> StripeStub:
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def requests_to(self, method: str, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path == path]

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_stub{next(self._ids)}"

    # What the stub answers itself.

    def create_checkout_session(self, form: dict[str, str]) -> dict:
        session_id = self._new_id("cs_test")
        session = {
            "id": session_id, "object": "checkout.session", "mode": form.get("mode"),
            "customer": form.get("customer"), "client_reference_id":
                form.get("client_reference_id"),
            "metadata": _nested(form, "metadata"), "success_url": form.get("success_url"),
            "cancel_url": form.get("cancel_url"), "status": "open", "payment_status": "unpaid",
            "subscription": None, "url": f"{self.url}/checkout/{session_id}",
            "_price": form.get("line_items[0][price]"), "_authorization": None,
        }
        self.sessions[session_id] = session
        return session

    def create_portal_session(self, form: dict[str, str]) -> dict:
        session_id = self._new_id("bps")
        back = urllib.parse.quote(form.get("return_url") or "", safe="")
        return {"id": session_id, "object": "billing_portal.session",
                "customer": form.get("customer"), "return_url": form.get("return_url"),
                "url": f"{self.url}/portal/{session_id}?return={back}"}

    def create_price(self, *, name: str, amount_cents: int,
                     api_key: str = "sk_test_stub") -> str:
        """A monthly price in localstripe (a legacy Plan there): set it as a Plan's
        stripe_price_id so Checkout on this stub can sell that plan."""
        created = self.localstripe("POST", "/v1/plans", f"Bearer {api_key}", {
            "amount": str(amount_cents), "currency": "usd", "interval": "month",
            "product[name]": name})
        return created["id"]

    def pay(self, session_id: str) -> str:
        """Subscribe the session's customer in localstripe; returns the subscription id."""
        session = self.sessions[session_id]
        auth = session["_authorization"]
        customer = session["customer"]
        card = self.localstripe("POST", "/v1/payment_methods", auth, {
            "type": "card", "card[number]": "4242424242424242", "card[exp_month]": "12",
            "card[exp_year]": "2035", "card[cvc]": "123"})
        self.localstripe("POST", f"/v1/payment_methods/{card['id']}/attach", auth,
                         {"customer": customer})
        self.localstripe("POST", f"/v1/customers/{customer}", auth,
                         {"invoice_settings[default_payment_method]": card["id"]})
        metadata = {f"metadata[{k}]": v for k, v in (session["metadata"] or {}).items()}
        subscription = self.localstripe("POST", "/v1/subscriptions", auth, {
            "customer": customer, "items[0][plan]": session["_price"], **metadata})
        session.update(status="complete", payment_status="paid",
                       subscription=subscription["id"])
        if self.webhook_url:
            self.send_event("checkout.session.completed", _public(session))
        return subscription["id"]

    def send_event(self, event_type: str, obj: dict) -> int:
        """POST a signed event to the webhook URL, as Stripe would; returns the status."""
        created = int(time.time())
        event = {"id": self._new_id("evt"), "object": "event", "type": event_type,
                 "created": created, "livemode": False, "data": {"object": obj},
                 "api_version": "2026-10-28.endive"}
        payload = json.dumps(event).encode()
        request = urllib.request.Request(self.webhook_url, data=payload, method="POST", headers={
            "Content-Type": "application/json",
            "Stripe-Signature": stripe_signature(payload, self.webhook_secret, at=created)})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status
        except urllib.error.HTTPError as refused:
            return refused.code

    def localstripe(self, method: str, path: str, authorization: str | None,
                    form: dict[str, str] | None = None) -> dict:
        status, body = self.forward(method, path, "", authorization, None,
                                    urllib.parse.urlencode(form or {}).encode())
        if status >= 400:
            raise RuntimeError(f"localstripe answered {status} to {method} {path}: {body!r}")
        return json.loads(body)

    def forward(self, method: str, path: str, query: str, authorization: str | None,
                stripe_version: str | None, body: bytes) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if authorization:
            headers["Authorization"] = authorization
        if stripe_version:
            headers["Stripe-Version"] = stripe_version
        url = f"{self.localstripe_url}{path}" + (f"?{query}" if query else "")
        request = urllib.request.Request(url, data=body if method == "POST" else None,
                                         method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read()


def _public(session: dict) -> dict:
    return {k: v for k, v in session.items() if not k.startswith("_")}


def _nested(form: dict[str, str], name: str) -> dict[str, str]:
    prefix = f"{name}["
    return {k[len(prefix):-1]: v for k, v in form.items() if k.startswith(prefix)}


def _handler_for(stub: StripeStub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # the tests' output stays readable
            pass

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

        def _serve(self, method: str) -> None:
            parts = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            form_text = body.decode() if method == "POST" else parts.query
            form = dict(urllib.parse.parse_qsl(form_text, keep_blank_values=True))
            authorization = self.headers.get("Authorization")
            stub.requests.append(Recorded(method, parts.path, form,
                                          self.headers.get("Stripe-Version"), authorization))
            route = parts.path.strip("/").split("/")
            if (method, parts.path) == ("POST", "/v1/checkout/sessions"):
                session = stub.create_checkout_session(form)
                session["_authorization"] = authorization
                return self._json(200, _public(session))
            if (method, parts.path) == ("POST", "/v1/billing_portal/sessions"):
                return self._json(200, stub.create_portal_session(form))
            if (method, route[:3]) == ("GET", ["v1", "checkout", "sessions"]) and len(route) == 4:
                session = stub.sessions.get(route[3])
                return self._json(200, _public(session)) if session else self._missing()
            if route[0] == "checkout" and len(route) >= 2 and route[1] in stub.sessions:
                if method == "GET" and len(route) == 2:
                    return self._checkout_page(stub.sessions[route[1]])
                if method == "POST" and route[2:] == ["pay"]:
                    stub.pay(route[1])
                    # As Stripe does: the session's id where success_url asks for it.
                    return self._redirect(stub.sessions[route[1]]["success_url"].replace(
                        "{CHECKOUT_SESSION_ID}", route[1]))
            if method == "GET" and route[0] == "portal":
                back = dict(urllib.parse.parse_qsl(parts.query)).get("return", "")
                return self._html(f"<h1>Customer portal (stub)</h1><p><a href=\""
                                  f"{html.escape(back)}\">Return</a></p>")
            if route[0] == "v1":
                status, answer = stub.forward(method, parts.path, parts.query, authorization,
                                              self.headers.get("Stripe-Version"), body)
                return self._send(status, answer, "application/json")
            return self._missing()

        def _checkout_page(self, session: dict) -> None:
            self._html(
                "<h1>Checkout (stub)</h1>"
                f"<p>Subscribe to <code>{html.escape(session['_price'] or '')}</code></p>"
                f"<form method=\"post\" action=\"/checkout/{session['id']}/pay\">"
                "<button type=\"submit\">Pay</button></form>"
                f"<p><a href=\"{html.escape(session['cancel_url'] or '')}\">Cancel</a></p>")

        def _json(self, status: int, data: dict) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def _html(self, text: str) -> None:
            # An empty icon: Chromium would otherwise ask for /favicon.ico and log its 404.
            page = ("<!doctype html><html><head><title>Checkout (stub)</title>"
                    "<link rel=\"icon\" href=\"data:,\"></head>"
                    f"<body>{text}</body></html>")
            self._send(200, page.encode(), "text/html; charset=utf-8")

        def _missing(self) -> None:
            self._json(404, {"error": {"type": "invalid_request_error",
                                       "message": f"Unrecognized request URL ({self.path})"}})

        def _redirect(self, location: str) -> None:
            self.send_response(303)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
