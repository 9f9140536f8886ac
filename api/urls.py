from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from api import tools, views
from api.errors import not_found

app_name = "api"
public = {"authentication_classes": [], "permission_classes": [AllowAny]}
urlpatterns = [
    path("memories", views.memories, name="memories"),
    *(path(f"tools/{name}", view, name=name) for name, view in tools.VIEWS.items()),
    path("schema", SpectacularAPIView.as_view(**public), name="schema"),
    path("docs", SpectacularSwaggerView.as_view(url_name="api:schema", **public), name="docs"),
    path("redoc", SpectacularRedocView.as_view(url_name="api:schema", **public), name="redoc"),
    re_path(r"", not_found),
]
