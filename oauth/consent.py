"""The consent page (GET and POST /oauth/authorize): after sign-in, and after the second
factor and a recent identity check where those apply (consent is a sign-in), the person
sees which app asks, where it will send them back, and picks the account, the memories and
whether it may write. Allowing makes or changes their connection (accounts/connections.py)
and hands django-oauth-toolkit the scopes it grants; the code goes to the registered
callback, which the page's CSP lets the form redirect to."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
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
from oauth.consent_forms import READ, WRITE, ConsentForm
from web.access import CURRENT_ACCOUNT
from web.reauth import ask_to_confirm
from web.verification import is_unverified


def resource_accepted(values: list[str]) -> bool:
    """One resource, this server's /mcp (a trailing slash forgiven): tokens are bound to it."""
    return len(values) == 1 and values[0].rstrip("/") == oauth_addresses.mcp_resource()


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
        if request.user.is_authenticated and not identity_checked_recently(request.session):
            return ask_to_confirm(request)
        response = super().dispatch(request, *args, **kwargs)
        source = callback_source(self.oauth2_data.get("redirect_uri")
                                 or request.POST.get("redirect_uri"))
        if source:
            response._csp_update = {"form-action": ["'self'", source]}
        return response

    def get(self, request, *args, **kwargs):
        try:
            _scopes, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)
        if not resource_accepted(request.GET.getlist("resource")):
            return self._wrong_resource(credentials["client_id"], credentials["redirect_uri"],
                                        credentials.get("state"))
        return super().get(request, *args, **kwargs)

    def _wrong_resource(self, client_id, redirect_uri, state):
        application = get_application_model().objects.get(client_id=client_id)
        error = OAuthToolkitError(error=CustomOAuth2Error(
            error="invalid_target", state=state,
            description=f"resource is required and must be {oauth_addresses.mcp_resource()}, "
                        "the MCP endpoint tokens are issued for (RFC 8707)"),
            redirect_uri=redirect_uri)
        return self.error_response(error, application)

    # -- the form -----------------------------------------------------------------------

    def _account_id(self) -> int:
        """The account the page is about: the one asked for (a switch link, or the form),
        else the one the person works in, else their first."""
        data = self.request.POST if self.request.method == "POST" else self.request.GET
        for chosen in (data.get("account"), self.request.session.get(CURRENT_ACCOUNT)):
            try:
                return principal_for_member(self.request.user, int(chosen))[0].account_id
            except (TypeError, ValueError, EchoError):
                continue
        return principal_for_member(self.request.user)[0].account_id

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
            "email_unverified": is_unverified(self.request.user),
            "switch_query": self.request.GET.urlencode() if self.request.method == "GET" else "",
        })
        return context

    def form_valid(self, form):
        if not form.cleaned_data.get("allow"):
            return super().form_valid(form)
        data = form.cleaned_data
        if not resource_accepted((data.get("resource") or "").split()):
            return self._wrong_resource(data["client_id"], data["redirect_uri"], data.get("state"))
        data["resource"] = oauth_addresses.mcp_resource()
        application = get_application_model().objects.get(client_id=data["client_id"])
        may_write = data["access"] == WRITE and settings.WRITE_SCOPE in self._requested_scopes()
        data["scope"] = " ".join([settings.READ_SCOPE] + ([settings.WRITE_SCOPE] if may_write
                                                           else []))
        chosen = list(data["memories"]) or None
        default = data["default_memory"]
        if chosen and (default is None or default.pk not in {m.pk for m in chosen}):
            form.add_error("default_memory", "Pick the default among the ticked memories (calls "
                                             "that name no memory go there).")
            return self.form_invalid(form)
        try:
            connections.connect(
                user=self.request.user, account_id=data["account"], application=application,
                read_only=data["access"] == READ or not may_write,
                memory_ids=[m.pk for m in chosen] if chosen else None,
                default_memory_id=default.pk if default else None,
                network=network_of(self.request.META))
        except EchoError as refusal:
            form.add_error(None, f"{refusal.message}: {refusal.fix}")
            return self.form_invalid(form)
        return super().form_valid(form)

    def form_invalid(self, form):
        # The page again, with the request's own values (the app, its callback) intact.
        self.oauth2_data = {key: form.data.get(key) for key in
                            ("client_id", "redirect_uri", "state", "scope", "resource")}
        application = (get_application_model().objects
                       .filter(client_id=form.data.get("client_id")).first())
        return self.render_to_response(self.get_context_data(
            form=form, application=application, redirect_uri=form.data.get("redirect_uri")))


__all__ = ["READ", "WRITE", "Consent"]
