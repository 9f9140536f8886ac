"""The user docs at /docs/: an index, and each guide rendered in the site's layout
(web/user_docs.py says where they come from and why they are served here)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from web import user_docs


@require_GET
def docs_index(request: HttpRequest) -> HttpResponse:
    return render(request, "web/docs_index.html", {"guides": user_docs.GUIDES})


def docs_page(request: HttpRequest, page: str) -> HttpResponse:
    found = user_docs.page(page)
    if found is None:
        raise Http404(f"there is no guide named {page!r}; the docs index lists them all")
    if request.method not in ("GET", "HEAD"):  # looked up first, as every page does
        return HttpResponseNotAllowed(["GET", "HEAD"])
    title, html = found
    return render(request, "web/docs_page.html", {
        "guides": user_docs.GUIDES, "current": page, "title": title,
        # Our own docs, rendered with raw HTML off (user_docs): safe to put in the page.
        "html": mark_safe(html)})
