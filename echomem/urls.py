from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from accounts.admin_site import SecondFactorAdminSite
from accounts.user_admin import own_password_change
from api.errors import not_found as api_not_found
from echomem import views
from web.limits import SIGN_IN, limited

handler400 = "echomem.views.bad_request"
# The admin follows the site's sign-in rules: a second factor where the person has one.
admin.site.__class__ = SecondFactorAdminSite
admin.site.site_header = "Echo Memory administration"
admin.site.site_title = "Echo Memory"

urlpatterns = [
    # First: Django tries patterns in order, and /mcp and /api/v1 are the hot paths (an
    # agent's every call); no page route begins with either.
    path("", include("mcp_gateway.urls")),
    path("api/v1/", include("api.urls")),
    # The OAuth server for MCP connectors: discovery at the well-known paths, then /oauth/.
    path("", include("oauth.urls")),
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("metrics", views.metrics, name="metrics"),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin's).
    path("favicon.ico", RedirectView.as_view(url=static("echomem/favicon.svg"), permanent=True)),
    # The admin's sign-in guards the superuser: the site's sign-in limits, in the same
    # windows (per address and per sign-in name), ahead of the admin's own route.
    path("admin/login/", limited(*SIGN_IN)(admin.site.login)),
    # The operator's own new password signs out their other sessions (accounts/passwords.py).
    path("admin/password_change/", admin.site.admin_view(own_password_change)),
    path("admin/", admin.site.urls),
    path("billing/stripe/", include("billing.urls")),
    # Passkeys' browser ceremonies (django-otp-webauthn's views; JSON, for its script).
    path("account/security/webauthn/", include("web.passkey_urls")),
    path("", include("web.urls")),
    # Everything else under /api answers in the API's shape, not with an HTML page (and
    # not with Django's redirect to an added slash).
    re_path(r"^api(/.*)?$", api_not_found),
]

# Errors outside a view's own reply: JSON at /mcp and /api, a page in the site's layout with
# a way on for a browser (echomem/error_pages.py); CSRF_FAILURE_VIEW in settings likewise.
handler403 = "echomem.error_pages.permission_denied"
handler404 = "echomem.error_pages.page_not_found"
handler500 = "echomem.error_pages.server_error"
