from django.contrib import admin
from django.urls import include, path

from echomem import views

admin.site.site_header = "Echo Memory administration"
admin.site.site_title = "Echo Memory"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("", include("mcp_gateway.urls")),
]
