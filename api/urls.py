from csp.decorators import csp
from django.urls import path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny

from api import portability, tools, usage, views
from api.errors import not_found

app_name = "api"
public = {"authentication_classes": [], "permission_classes": [AllowAny]}
# Swagger UI's page: its start-up script is served as a file (the split view), so scripts
# stay 'self'; its template carries one <style> block and the UI sets style attributes,
# so styles (only) may be inline here.
DOCS_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
urlpatterns = [
    path("memories", views.memories, name="memories"),
    path("memories/<str:name>/export", portability.export_view, name="export_memory"),
    path("memories/<str:name>/import", portability.import_view, name="import_memory"),
    path("usage", usage.usage, name="usage"),
    *(path(f"tools/{name}", view, name=name) for name, view in tools.VIEWS.items()),
    path("schema", SpectacularAPIView.as_view(**public), name="schema"),
    path("docs", csp(DOCS_POLICY)(SpectacularSwaggerSplitView.as_view(url_name="api:schema",
                                                                       **public)),
         name="docs"),
    # Redoc's bundle always fetches its logo from cdn.redoc.ly (and its page, Google Fonts):
    # a self-hosted box makes no third-party requests, so the one browsable UI is Swagger.
    path("redoc", RedirectView.as_view(pattern_name="api:docs", permanent=True), name="redoc"),
    re_path(r"", not_found),
]
