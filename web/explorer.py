"""The memory explorer: search and browse a memory's facts, an entity's edges and their
history, an episode's provenance, and trace_cause drawn as a picture.

Thin pages over the tools' handlers (query_memory, trace_cause) and the browse
selectors in memories/; a person reads the shared partition or one of their own tools'
solo partitions (DESIGN, "People in the browser").
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import render
from django.urls import reverse

from accounts.principal import Principal
from echomem.errors import ValidationFailed
from memories.graph.browse import fact_page, scope_choices, scope_value, with_links
from memories.graph.entities import entities_named_like, entity_detail
from memories.graph.episodes import episode_detail
from memories.graph.fact_history import fact_history
from memories.graph.selectors import memory_for
from memories.search.window import Window
from tools import query_memory, trace_cause
from tools.parsing import parse
from web.access import Member, member
from web.cause_diagram import diagram
from web.explorer_forms import CauseForm, FactsForm, SuggestForm
from web.refusals import add_refusal, refusal_text

SEARCH_RESULTS = 20
# What found each result, in the words the page uses (query_memory's `matched`). The page
# shows no score: the order is the fused ranking's, and a cosine beside it would not follow
# that order (a fact the words found ranks above a closer one by meaning).
FOUND_BY = {"vector": "meaning", "text": "words", "digest": "recency"}


def memory_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A read-only page of one of the account's memories. The memory is looked up before
    the method is checked, so any request for another account's memory is a 404."""

    @member
    @wraps(view)
    def page(request: HttpRequest, me: Member, name: str, **kwargs: Any) -> HttpResponse:
        memory = memory_for(me.principal, name)
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        return view(request, me.principal, memory, **kwargs)

    return page


@memory_page
def memory_explorer(request: HttpRequest, principal: Principal, memory) -> HttpResponse:
    form = FactsForm(request.GET, scopes=scope_choices(principal, memory))
    context: dict[str, Any] = {"memory": memory, "form": form}
    if form.is_valid():
        scope = form.chosen_scope()
        clocks = {name: form.cleaned_data[name] for name in ("as_of", "valid_as_of")}
        # The links that page on keep the list's filters (the times as typed).
        kept = {"scope": scope.value, "superseded": "on" if form.cleaned_data["superseded"]
                else ""} | {name: request.GET.get(name, "") for name in clocks}
        context.update(scope=scope, clocks=clocks,
                       kept=urlencode({k: v for k, v in kept.items() if v}))
        query = form.cleaned_data["q"]
        try:
            if query:
                results = query_memory.run(scope.principal(principal), parse(
                    query_memory.QueryMemoryArgs, {
                        "memory": memory.name, "scope": scope.engine_scope, "query": query,
                        "top_k": SEARCH_RESULTS,
                        "include_superseded": form.cleaned_data["superseded"],
                        **{name: when.isoformat() for name, when in clocks.items() if when}}))
                facts = with_links(memory, results["facts"])
                for fact in facts:
                    fact["found_by"] = [FOUND_BY.get(how, how) for how in fact["matched"]]
                context["results"] = results | {"facts": facts}
            else:
                # The Window query_memory reads by, so the list is what it would consider.
                context["page"] = fact_page(memory, scope.partition,
                                            superseded=form.cleaned_data["superseded"],
                                            cursor=form.cleaned_data["after"] or None,
                                            window=Window(form.cleaned_data["superseded"],
                                                          **clocks))
        except ValidationFailed as refused:
            add_refusal(form, refused, "after" if refused.field == "after" else "q")
    return render(request, "web/explorer_memory.html", context)


@memory_page
def entity_page(request: HttpRequest, principal: Principal, memory,
                entity_id: uuid.UUID) -> HttpResponse:
    after, error = request.GET.get("after") or None, None
    try:
        detail = entity_detail(principal, memory.name, entity_id, after=after)
    except ValidationFailed as refused:  # a bad page link: say so, show the first page
        error, after = refusal_text(refused), None
        detail = entity_detail(principal, memory.name, entity_id)
    return render(request, "web/explorer_entity.html", {
        "memory": memory, "detail": detail, "error": error, "after": after or "",
        "scope_value": scope_value(principal, detail["entity"]["partition"])})


@memory_page
def fact_detail(request: HttpRequest, principal: Principal, memory,
                fact_id: uuid.UUID) -> HttpResponse:
    detail = fact_history(principal, memory.name, fact_id)
    return render(request, "web/explorer_fact.html", {
        "memory": memory, "detail": detail, "fact": detail["fact"],
        "scope_value": scope_value(principal, detail["partition"])})


@memory_page
def episode_page(request: HttpRequest, principal: Principal, memory,
                 episode_id: uuid.UUID) -> HttpResponse:
    after, error = request.GET.get("after") or None, None
    if after is not None:
        if after.isdigit() and len(after) < 10:
            after = int(after)
        else:
            after, error = None, ("after must be a fact position from the 'next facts' link; "
                                  "showing the first facts instead")
    detail = episode_detail(principal, memory.name, episode_id, facts_after=after)
    return render(request, "web/explorer_episode.html",
                  {"memory": memory, "detail": detail, "error": error})


@memory_page
def cause_page(request: HttpRequest, principal: Principal, memory) -> HttpResponse:
    form = CauseForm(request.GET or None, scopes=scope_choices(principal, memory),
                     initial={"direction": "both", "max_hops": 3},
                     suggest_url=reverse("web:explorer_cause_suggest", args=[memory.name]))
    context: dict[str, Any] = {"memory": memory, "form": form}
    if form.is_bound and form.is_valid():
        scope = form.chosen_scope()
        try:
            reply = trace_cause.run(scope.principal(principal), parse(trace_cause.TraceCauseArgs, {
                "memory": memory.name, "scope": scope.engine_scope,
                "subject": form.cleaned_data["subject"],
                "direction": form.cleaned_data["direction"] or "both",
                "max_hops": form.cleaned_data["max_hops"] or 3}))
        except ValidationFailed as refused:
            add_refusal(form, refused, otherwise="subject")
        else:
            context.update(reply=reply, diagram=diagram(reply), scope=scope)
    return render(request, "web/explorer_cause.html", context)


@memory_page
def cause_suggest(request: HttpRequest, principal: Principal, memory) -> HttpResponse:
    """The cause view's search-as-you-type: entities whose name holds what was typed, as
    links that open the cause view from each (a fragment htmx swaps in under the field)."""
    form = SuggestForm(request.GET, scopes=scope_choices(principal, memory))
    context: dict[str, Any] = {"memory": memory, "form": form, "suggestions": []}
    if form.is_valid():
        scope = form.chosen_scope()
        context.update(scope=scope, typed=form.cleaned_data["subject"],
                       suggestions=entities_named_like(principal, memory, scope.partition,
                                                       form.cleaned_data["subject"]))
    return render(request, "web/_cause_suggestions.html", context)
