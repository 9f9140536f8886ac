"""The consent page (GET and POST /oauth/authorize): after sign-in, and after the second
factor and a recent identity check where those apply (consent is a sign-in), the person
sees which app asks, where it will send them back, and picks the account, the memories and
whether it may write. Allowing makes or changes their connection (accounts/connections.py)
and hands django-oauth-toolkit the scopes it grants; the code goes to the registered
callback, which the page's CSP lets the form redirect to."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import get_application_model
from oauth2_provider.views import AuthorizationView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from accounts import connections
from accounts.principal import principal_for_member
from accounts.reauth import identity_checked_recently
from accounts.team import accounts_of
from accounts.where_from import network_of
from echomem import oauth_addresses
from echomem.errors import EchoError
from memories.catalog.selectors import account_memories
from oauth.consent_forms import READ, WRITE, ConsentForm, overlong
from web.access import CURRENT_ACCOUNT
from web.reauth import ask_to_confirm
from web.refusals import add_refusal
from web.verification import is_unverified

PKCE_METHOD = "S256"


def resource_accepted(values: list[str]) -> bool:
    """One resource, this server's /mcp (a trailing slash forgiven): tokens are bound to it."""
    return len(values) == 1 and values[0].rstrip("/") == oauth_addresses.mcp_resource()


def with_issuer(redirect_to: str) -> str:
    """An error sent back to the app names the issuer too (RFC 9207 2: every authorization
    response; django-oauth-toolkit adds it to the code's alone)."""
    parts = urlsplit(redirect_to)
    query = parse_qsl(parts.query, keep_blank_values=True)
    names = {name for name, _ in query}
    if "error" not in names or "iss" in names:
        return redirect_to
    query.append(("iss", oauth_addresses.issuer()))
    return urlunsplit(parts._replace(query=urlencode(query)))


def callback_source(redirect_uri: str | None) -> str | None:
    """The CSP source the consent form's redirect goes to (Chrome applies form-action to it)."""
    if not redirect_uri:
        return None
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:" if parts.scheme else None


@method_decorator(never_cache, name="dispatch")
class Consent(AuthorizationView):
    template_name = "oauth/consent.html"
    form_class = ConsentForm

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            if not identity_checked_recently(request.session):
                return ask_to_confirm(request)
            if is_unverified(request.user):
                # A connection is a credential, as a key is, and keys wait for a confirmed
                # address too; this page is where the person comes back to (a reload).
                return render(request, "oauth/confirm_email_first.html", status=403)
        response = super().dispatch(request, *args, **kwargs)
        source = callback_source(self.oauth2_data.get("redirect_uri")
                                 or request.POST.get("redirect_uri"))
        if source:
            response._csp_update = {"form-action": ["'self'", source]}
        return response

    def redirect(self, redirect_to, application):
        return super().redirect(with_issuer(redirect_to), application)

    def get(self, request, *args, **kwargs):
        refused = self._refusal(request.GET.getlist("resource"))
        return refused or super().get(request, *args, **kwargs)

    def _refusal(self, resources: list[str]):
        """The error answer for a request this server will not serve, before the page is
        shown and again when it is posted (its hidden fields come back from the browser,
        and django-oauth-toolkit checks them only after the connection would be made)."""
        try:
            _scopes, credentials = self.validate_authorization_request(self.request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)
        asked = (credentials["client_id"], credentials["redirect_uri"], credentials.get("state"))
        if (not credentials.get("code_challenge")
                or credentials.get("code_challenge_method") != PKCE_METHOD):
            # django-oauth-toolkit refuses plain (and an empty challenge) only when it makes
            # the code.
            return self._refused(*asked, "invalid_request",
                                 f"send a code_challenge with code_challenge_method={PKCE_METHOD}"
                                 " (PKCE is required; RFC 9700 2.1.1: plain is not accepted)")
        data = self.request.POST if self.request.method == "POST" else self.request.GET
        problem = overlong(data)
        if problem:
            return self._refused(*asked, "invalid_request", problem)
        if not accounts_of(self.request.user).exists():
            return self._refused(*asked, "access_denied",
                                 "the person signed in is not a member of any account, so "
                                 "there is nothing to connect the app to")
        if not resource_accepted(resources):
            return self._refused(*asked, "invalid_target",
                                 f"resource is required and must be "
                                 f"{oauth_addresses.mcp_resource()}, the MCP endpoint tokens are "
                                 "issued for (RFC 8707)")
        return None

    def _refused(self, client_id, redirect_uri, state, code: str, description: str):
        application = get_application_model().objects.get(client_id=client_id)
        error = OAuthToolkitError(error=CustomOAuth2Error(
            error=code, state=state, description=description), redirect_uri=redirect_uri)
        return self.error_response(error, application)

    # -- the form -----------------------------------------------------------------------

    def _account_id(self) -> int | None:
        """The account the page is about: the one asked for (a switch link, or the form),
        else the one the person works in, else their first."""
        data = self.request.POST if self.request.method == "POST" else self.request.GET
        for chosen in (data.get("account"), self.request.session.get(CURRENT_ACCOUNT)):
            try:
                return principal_for_member(self.request.user, int(chosen))[0].account_id
            except (TypeError, ValueError, EchoError):
                continue
        try:
            return principal_for_member(self.request.user)[0].account_id
        except EchoError:
            return None  # in no account at all: _refusal answers the app

    def _requested_scopes(self) -> set[str]:
        source = self.request.POST if self.request.method == "POST" else self.request.GET
        asked = set((source.get("scope") or "").split())
        return asked or {settings.READ_SCOPE, settings.WRITE_SCOPE}

    def get_form_kwargs(self):
        self.account_id = self._account_id()  # before the initial values are read
        kwargs = super().get_form_kwargs()
        kwargs["memories"] = account_memories(self.account_id)
        kwargs["may_write"] = settings.WRITE_SCOPE in self._requested_scopes()
        return kwargs

    def get_initial(self):
        return {**super().get_initial(), "account": getattr(self, "account_id", None)}

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        application = context.get("application")
        redirect_uri = context.get("redirect_uri") or ""
        context.update({
            "memberships": list(accounts_of(self.request.user)),
            "account_id": getattr(self, "account_id", None),
            "callback_host": urlsplit(redirect_uri).netloc or redirect_uri,
            "by_document": bool(application and application.client_id.startswith("https://")),
            "switch_query": self.request.GET.urlencode() if self.request.method == "GET" else "",
        })
        return context

    def form_valid(self, form):
        data = form.cleaned_data
        refused = self._refusal((data.get("resource") or "").split())
        if refused:
            return refused
        if not data.get("allow"):
            return super().form_valid(form)
        data["resource"] = oauth_addresses.mcp_resource()
        application = get_application_model().objects.get(client_id=data["client_id"])
        may_write = data["access"] == WRITE and settings.WRITE_SCOPE in self._requested_scopes()
        data["scope"] = " ".join([settings.READ_SCOPE] + ([settings.WRITE_SCOPE] if may_write
                                                           else []))
        try:
            connections.connect(
                user=self.request.user, account_id=data["account"], application=application,
                read_only=data["access"] == READ or not may_write,
                memories=list(data["memories"]) or None, default_memory=data["default_memory"],
                network=network_of(self.request.META))
        except EchoError as refusal:
            add_refusal(form, refusal)  # next to the field it names, else above the form
            return self.form_invalid(form)
        return super().form_valid(form)

    def form_invalid(self, form):
        # A request that is itself refused (no such app, a callback not registered) gets
        # the OAuth error; else the page again, with its own values (the app, its callback).
        refused = self._refusal((form.data.get("resource") or "").split())
        if refused:
            return refused
        self.oauth2_data = {key: form.data.get(key) for key in
                            ("client_id", "redirect_uri", "state", "scope", "resource")}
        application = (get_application_model().objects
                       .filter(client_id=form.data.get("client_id")).first())
        return self.render_to_response(self.get_context_data(
            form=form, application=application, redirect_uri=form.data.get("redirect_uri")))


__all__ = ["READ", "WRITE", "Consent"]
