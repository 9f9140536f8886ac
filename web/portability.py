"""Export and import pages: a memory's export downloads as it is written (streamed), the
account's too; an export file is imported through a form, with a dry run first. Thin: the
engine's portability services decide who may and do the work."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from accounts.team import Role
from echomem.errors import EchoError, Forbidden
from memories.erasure.services import require_owner_or_admin
from memories.graph.selectors import memory_for
from memories.portability.export import export_account, export_memory
from memories.portability.import_ import import_memory
from memories.portability.reading import bounded_lines
from web.access import Member, member
from web.refusals import add_refusal

NDJSON = "application/x-ndjson"


def _download(lines, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse((line.encode() for line in lines), content_type=NDJSON)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _vectors(request: HttpRequest) -> bool:
    return request.GET.get("vectors") == "1"


@never_cache
@member  # any method: another account's memory is a 404 before a method is refused
def memory_export(request: HttpRequest, me: Member, name: str) -> HttpResponse:
    """Anyone who can read the memory may export what they see of it."""
    lines = export_memory(principal=me.principal, memory=name, include_vectors=_vectors(request))
    return _download(lines, f"{name}.echo-memory.jsonl")


def _not_owner_or_admin() -> Forbidden:
    return Forbidden("only an owner or an admin of the account may export all of it",
                     field="account", fix="ask an owner or admin of this account")


@never_cache
@member(methods=["GET"], roles=[Role.OWNER, Role.ADMIN], refusal=_not_owner_or_admin)
def account_export(request: HttpRequest, me: Member) -> HttpResponse:
    """Every memory of the account, one memory's lines after another."""
    lines = export_account(principal=me.principal, include_vectors=_vectors(request))
    return _download(lines, f"account-{me.principal.account_id}.echo-memory.jsonl")


class ImportForm(forms.Form):
    file = forms.FileField(label="Export file", help_text="A file written by Export (or "
                           "`echo-memory export`), from this box or another.",
                           error_messages={"required": "Choose the export file to import."})
    dry_run = forms.BooleanField(label="Dry run: only say what would change", required=False,
                                 initial=True)


@member(methods=["GET", "POST"])
def memory_import(request: HttpRequest, me: Member, name: str) -> HttpResponse:
    memory = memory_for(me.principal, name)
    require_owner_or_admin(me.role, doing="import into a memory")
    form = ImportForm(request.POST, request.FILES) if request.method == "POST" else ImportForm()
    report = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            report = import_memory(principal=me.principal, memory=memory.name,
                                   lines=bounded_lines(upload.file),
                                   dry_run=form.cleaned_data["dry_run"])
        except EchoError as refused:
            add_refusal(form, refused, "file")
    return render(request, "web/memory_import.html", {"memory": memory, "form": form,
                                                      "report": report})
