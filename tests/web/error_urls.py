"""The site's URLconf plus one page that fails, to see the 500 answers as a request gets
them (the handlers are the site's own)."""

from django.urls import path

from echomem.urls import handler403, handler404, handler500, urlpatterns  # noqa: F401


def fails(request):
    raise RuntimeError("a fault injected by the test")


urlpatterns = [path("boom/", fails), path("api/v1/boom", fails), path("mcp/boom", fails),
               *urlpatterns]
