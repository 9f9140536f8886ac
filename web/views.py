"""Pages. Each one acts as a member of the person's account (web.access.member) and asks
the services, which check roles and the account, for every object it shows or changes."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.cache import never_cache

from accounts.key_views import keys_expiring_soon, keys_with_limits
from accounts.selectors import listed_keys, own_live_key
from accounts.services import api_key_create, api_key_revoke, revocable_key
from accounts.team import Role
from echomem.admission import key_rates
from echomem.agent_clients import export_line
from echomem.errors import Forbidden, NotFound, ValidationFailed
from memories.catalog.audit_log import AuditFilter, audit_page
from memories.catalog.first_run import first_run
from memories.catalog.selectors import (
    account_memories,
    memory_count,
    memory_overview,
    other_memory_names,
)
from memories.catalog.services import (
    keys_following_the_account_default,
    memory_make_default,
    memory_rename,
)
from memories.erasure.services import (
    MAY_DELETE,
    account_delete,
    keys_defaulting_to,
    memory_delete,
    require_owner_or_admin,
)
from memories.graph.recall_saves import recall_saves_this_month
from memories.graph.selectors import memory_for
from memories.graph.services import memory_create
from web import shown_once
from web.access import Member, member
from web.audit_links import audit_entry
from web.connect import connect_context
from web.forms import (
    DeleteAccountForm,
    DeleteMemoryForm,
    NewKeyForm,
    NewMemoryForm,
    RenameMemoryForm,
)
from web.reauth import sensitive
from web.refusals import add_refusal
from web.verification import is_unverified

RECENT_CHANGES = 5
LIST_PAGE = 25


def _no_account(request: HttpRequest) -> HttpResponse:
    # Signed in but in no account (a removed member, a staff user): say what to do.
    return render(request, "web/no_account.html")


@member(outsider=_no_account)
def dashboard(request: HttpRequest, me: Member) -> HttpResponse:
    principal, role = me.principal, me.role
    memory_page = Paginator(account_memories(principal.account_id), LIST_PAGE).get_page(
        request.GET.get("memories"))
    key_page = Paginator(listed_keys(principal, role), LIST_PAGE).get_page(
        request.GET.get("keys"))
    page_keys = list(key_page.object_list)
    # Each key's window as it stands: read, not counted (one round trip for the page).
    rates = key_rates(principal.account_id, page_keys)
    keys = [(row, rates[row.key.pk]) for row in keys_with_limits(principal, page_keys)]
    steps = first_run(principal)
    return render(request, "web/dashboard.html", {
        # Shown until a visit finds every step done (it then ticks live to the end).
        "first_run": None if steps.done else steps,
        "account": me.account, "role": role,
        "may_delete": role in MAY_DELETE,
        "is_owner": me.is_owner,
        "memories": memory_overview(principal, memory_page.object_list),
        "memory_page": memory_page, "key_page": key_page,
        "recent": audit_page(principal, role, AuditFilter(), size=RECENT_CHANGES).rows,
        "saves": recall_saves_this_month(principal),
        "keys": keys, "keys_expiring": keys_expiring_soon(listed_keys(principal, role)),
        **connect_context(request),
    })


@never_cache  # the page that shows a key's secret must not be kept by any cache
@member(methods=["GET", "POST"])
@sensitive
def key_new(request: HttpRequest, me: Member) -> HttpResponse:
    if is_unverified(request.user):
        return render(request, "web/verify_first.html", status=403)
    form = NewKeyForm(request.POST or None, memories=account_memories(me.principal.account_id),
                      initial=_default_memory_picked(me, request.GET.get("memory", "")))
    if request.method == "POST" and form.is_valid():
        try:
            key, plaintext = api_key_create(
                account=me.account, holder=request.user,
                name=form.cleaned_data["name"], tool=form.cleaned_data["tool"],
                default_memory=form.cleaned_data["default_memory"], **form.limits())
        except ValidationFailed as refused:
            add_refusal(form, refused)
        else:
            shown_once.keep(request, "api_key", key.pk, plaintext)
            return redirect("web:key_created", key_id=key.pk)
    return render(request, "web/key_new.html", {"form": form})


def _default_memory_picked(me: Member, name: str) -> dict[str, int]:
    """`?memory=<name>`, the onward link from a new memory, picks it as the key's default; a
    name that is not one of the account's memories picks nothing, as no name does."""
    if not name:
        return {}
    try:
        return {"default_memory": memory_for(me.principal, name).pk}
    except NotFound:
        return {}


@never_cache  # the page that shows a key's secret must not be kept by any cache
@member
def key_created(request: HttpRequest, me: Member, key_id: int) -> HttpResponse:
    """The new key's secret, on the first GET after its creation only: a reload says it was
    shown and what to do if it was not copied."""
    key = own_live_key(me.principal, key_id)
    if key is None:
        raise NotFound("there is no such API key of yours in this account", field="key",
                       fix="create a key from the dashboard")
    if request.method not in ("GET", "HEAD"):  # looked up first: another's key is a 404
        return HttpResponseNotAllowed(["GET", "HEAD"])
    held = shown_once.take(request, "api_key", key.pk)
    plaintext = held[1] if held else None
    return render(request, "web/key_created.html", {
        "key": key, "plaintext": plaintext,
        "export_line": export_line(key=plaintext) if plaintext else "",
        **connect_context(request)})


@member(methods=["GET", "POST"])
def key_revoke(request: HttpRequest, me: Member, key_id: int) -> HttpResponse:
    key = revocable_key(principal=me.principal, role=me.role, key_id=key_id)
    if request.method == "POST":
        api_key_revoke(key=key, actor_id=request.user.pk)
        messages.success(request, format_html(
            "Key {} is revoked; agents using it are refused from now. {}", key,
            audit_entry("key.revoked")))
        return redirect("web:dashboard")
    return render(request, "web/key_revoke.html", {"key": key})


@member(methods=["GET", "POST"])
def memory_new(request: HttpRequest, me: Member) -> HttpResponse:
    form = NewMemoryForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            memory = memory_create(account_id=me.principal.account_id,
                                   actor_id=request.user.pk, **form.cleaned_data)
        except ValidationFailed as refused:
            add_refusal(form, refused, refused.field or None)
        else:
            messages.success(request, format_html(
                'Memory {} is ready for your agents. <a href="{}?{}">Connect a client to '
                "it</a> (a key with it as the default), or connect an app below.",
                memory.name, reverse("web:key_new"), urlencode({"memory": memory.name})))
            return redirect("web:dashboard")
    return render(request, "web/memory_new.html", {"form": form})


@member(methods=["GET", "POST"])
@sensitive
def memory_remove(request: HttpRequest, me: Member, name: str) -> HttpResponse:
    memory = memory_for(me.principal, name)
    require_owner_or_admin(me.role)
    keys = list(keys_defaulting_to(memory))
    others = other_memory_names(memory)
    form = DeleteMemoryForm(request.POST or None, keys=keys, others=others)
    if request.method == "POST" and form.is_valid():
        try:
            gone = memory_delete(me.principal, name, confirm=form.cleaned_data["confirm"],
                                 keys=form.keys_decision())
        except ValidationFailed as refused:
            if refused.field == "keys":
                # A key took this memory as its default since the page was loaded: list
                # the keys as they are now and ask again.
                keys = list(keys_defaulting_to(memory))
                again = request.POST.copy()
                again["keys_to"], again["shown_keys"] = "", ",".join(str(k.pk) for k in keys)
                form = DeleteMemoryForm(again, keys=keys, others=others)
                form.is_valid()
            field = {"keys": None, "move_to": "keys_to"}.get(refused.field or "", "confirm")
            add_refusal(form, refused, field)
        else:
            messages.success(request, format_html(
                "Memory {} is deleted: {} facts and {} entities, and their text in the audit "
                "log.{} {}", name, gone["facts"], gone["entities"], _keys_fate(gone),
                audit_entry("memory.deleted")))
            return redirect("web:dashboard")
    return render(request, "web/memory_delete.html", {"memory": memory, "form": form,
                                                      "keys": keys})


def _keys_fate(gone: dict[str, Any]) -> str:
    if gone.get("keys_revoked"):
        return f" {len(gone['keys_revoked'])} key(s) that used it by default are revoked."
    if gone.get("keys_moved"):
        return (f" {len(gone['keys_moved'])} key(s) that used it by default now use "
                f"{gone['keys_moved_to']}.")
    return ""


@member(methods=["GET", "POST"])
def memory_rename_page(request: HttpRequest, me: Member, name: str) -> HttpResponse:
    memory = memory_for(me.principal, name)
    require_owner_or_admin(me.role, doing="rename a memory")
    form = RenameMemoryForm(request.POST or None, initial={"new_name": memory.name})
    if request.method == "POST" and form.is_valid():
        try:
            memory = memory_rename(me.principal, name, new_name=form.cleaned_data["new_name"])
        except ValidationFailed as refused:
            add_refusal(form, refused, "new_name")
        else:
            messages.success(request, f"Memory {name} is now {memory.name}.")
            return redirect("web:dashboard")
    return render(request, "web/memory_rename.html", {"memory": memory, "form": form})


@member(methods=["POST"])
def memory_default(request: HttpRequest, me: Member, name: str) -> HttpResponse:
    memory = memory_make_default(me.principal, name)
    following = keys_following_the_account_default(me.principal.account_id)
    messages.success(request, f"Memory {memory.name} is now the account's default: calls that "
                              f"name no memory go there, from {following} key(s) without a "
                              "default memory of their own too.")
    return redirect("web:dashboard")


def _not_an_owner() -> Forbidden:
    return Forbidden("only an owner of the account may delete it", field="account",
                     fix="ask an owner of this account")


@member(methods=["GET", "POST"], roles=[Role.OWNER], refusal=_not_an_owner)
@sensitive
def account_remove(request: HttpRequest, me: Member) -> HttpResponse:
    account = me.account
    form = DeleteAccountForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            gone = account_delete(me.principal, confirm=form.cleaned_data["confirm"])
        except ValidationFailed as refused:
            add_refusal(form, refused, "confirm")
        else:
            messages.success(request, f"Account {gone['deleted']} is deleted, with its "
                                      f"{gone['memories']} memories and {gone['facts']} facts.")
            return redirect("web:dashboard")
    return render(request, "web/account_delete.html", {"account": account, "form": form,
                                                       "memories": memory_count(account.pk)})
