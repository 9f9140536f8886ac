"""The answers for a request that ends in an error before or outside a view's own reply:
400, 403 (and a refused CSRF token), 404 and 500.

Each door answers in its own shape: /mcp a JSON-RPC error, /api the API's error object;
a browser gets a page in the site's layout that says what happened and where to go from
there. The 500 page is drawn without the request's context (no session, no database):
whatever failed may be what those need.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.urls import Resolver404

from mcp_gateway.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, error_body

TEMPLATE = "error.html"

# status: (code in the API's errors, title, what it means and what to do)
PAGES: dict[int, tuple[str, str, str]] = {
    400: ("invalid_request", "This request could not be read",
          "Something in the address or the form was not something this site accepts. Go back "
          "and try again from a link on the site."),
    403: ("forbidden", "You cannot do this here",
          "Your role in this account does not allow it, or the page belongs to another "
          "account. An owner or admin of the account can do it, or change your role."),
    404: ("not_found", "Page not found",
          "There is nothing at this address: the link may be mistyped, or what it pointed to "
          "was deleted or belongs to an account you are not in."),
    500: ("internal_error", "Something went wrong on our side",
          "The server failed while answering. It is logged for the server's operator; what "
          "you sent was not the cause. Try the page again in a moment."),
}
CSRF = ("This form has expired",
        "The page was open too long, or this browser did not send the site's cookie with the "
        "form. Go back, reload the page and send the form again; if it keeps happening, allow "
        "cookies for this site.")


def door(request: HttpRequest) -> str:
    """Which door the request came to: "mcp", "api" or "web"."""
    path = request.path
    for prefix in ("mcp", "api"):
        if path == f"/{prefix}" or path.startswith(f"/{prefix}/"):
            return prefix
    return "web"


def answer(request: HttpRequest, status: int, *, message: str = "", field: str = "request",
           title: str = "", explanation: str = "", shown: bool = True) -> HttpResponse:
    """The error `status` in the shape of the request's door; `message` is what a client is
    told, and the page shows it under the title too unless `shown` is False."""
    code, default_title, default_explanation = PAGES[status]
    which = door(request)
    if which == "mcp":
        rpc = INTERNAL_ERROR if status >= 500 else INVALID_REQUEST
        return JsonResponse(error_body(None, rpc, message or default_title.lower(),
                                       {"field": field}), status=status)
    if which == "api":
        return JsonResponse({"error": {"code": code, "field": field,
                                       "message": message or default_title.lower()}},
                            status=status)
    context: dict[str, Any] = {"status": status, "title": title or default_title,
                               "explanation": explanation or default_explanation,
                               "detail": message.rstrip(".") if shown else ""}
    if status >= 500:  # nothing that needs the session or the database
        return HttpResponse(loader.get_template(TEMPLATE).render(context), status=status)
    return render(request, TEMPLATE, context, status=status)


def _said(exception: Exception | None) -> str:
    """The refusal's own sentence when a view wrote one for people (NotFound, Forbidden);
    not the URL resolver's list of patterns tried, nor an empty default."""
    if exception is None or isinstance(exception, Resolver404):
        return ""
    said = exception.args[0] if exception.args else ""
    return said if isinstance(said, str) else ""


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return answer(request, 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return answer(request, 403, message=_said(exception))


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    said = _said(exception) if isinstance(exception, Http404) else ""
    return answer(request, 404, message=said, field="path")


def server_error(request: HttpRequest) -> HttpResponse:
    return answer(request, 500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a form sent without a valid token (an old page, cookies blocked)."""
    title, explanation = CSRF
    return answer(request, 403, message="the form's CSRF token is missing or out of date",
                  field="csrfmiddlewaretoken", title=title, explanation=explanation,
                  shown=False)
