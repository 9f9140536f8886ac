"""The audit log pages: the filtered log, its CSV and JSONL exports, and verifying the
chain. What each person sees is decided in memories/catalog/audit_log.py, once for all of them."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from memories.catalog.audit_log import (
    EXPORT_COLUMNS,
    MAY_VERIFY,
    AuditFilter,
    as_json,
    audit_page,
    export_record,
    export_rows,
    filter_choices,
    verify_chain,
)
from web.access import Member, member
from web.audit_filter import AuditFilterForm


@member(methods=["GET"])
def audit_log(request: HttpRequest, me: Member) -> HttpResponse:
    principal, role = me.principal, me.role
    choices = filter_choices(principal, role)
    form = AuditFilterForm(request.GET, choices=choices)
    page = None
    if form.is_valid():
        page = audit_page(principal, role, form.audit_filter(),
                          before=form.cleaned_data["before"], after=form.cleaned_data["after"],
                          keys=choices["keys"])
    return render(request, "web/audit_log.html", {
        "form": form, "page": page, "query": form.query(), "may_verify": role in MAY_VERIFY,
        "empty_log": choices["newest"] is None,
    })


class _Echo:
    """csv.writer writes into this and gets the line back, so each row streams out."""

    def write(self, value: str) -> str:
        return value


def _csv_lines(records: Iterable[dict]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(EXPORT_COLUMNS)
    for record in records:
        yield writer.writerow([
            as_json(record[name]) if name in ("before", "after") and record[name] is not None
            else record[name] for name in EXPORT_COLUMNS])


def _jsonl_lines(records: Iterable[dict]) -> Iterator[str]:
    for record in records:
        yield as_json(record) + "\n"


FORMATS = {"csv": ("text/csv; charset=utf-8", _csv_lines),
           "jsonl": ("application/x-ndjson; charset=utf-8", _jsonl_lines)}


def _export(request: HttpRequest, me: Member, fmt: str) -> HttpResponse:
    principal, role = me.principal, me.role
    form = AuditFilterForm(request.GET, choices=filter_choices(principal, role))
    if not form.is_valid():
        return render(request, "web/audit_log.html", {
            "form": form, "page": None, "query": form.query(),
            "may_verify": role in MAY_VERIFY, "empty_log": False}, status=400)
    wanted: AuditFilter = form.audit_filter()
    content_type, lines = FORMATS[fmt]
    records = (export_record(row) for row in export_rows(principal, role, wanted))
    response = StreamingHttpResponse(lines(records), content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="audit-log-{stamp}.{fmt}"'
    return response


@member(methods=["GET"])
def audit_export_csv(request: HttpRequest, me: Member) -> HttpResponse:
    return _export(request, me, "csv")


@member(methods=["GET"])
def audit_export_jsonl(request: HttpRequest, me: Member) -> HttpResponse:
    return _export(request, me, "jsonl")


@member(methods=["POST"])
def audit_verify_chain(request: HttpRequest, me: Member) -> HttpResponse:
    result = verify_chain(me.principal, me.role)
    if result.ok:
        messages.success(request, f"The audit chain verifies: all {result.events} events are "
                                  "intact and in order.")
    else:
        messages.error(request, f"The audit chain breaks at event #{result.broken_seq}: "
                                "that event, or one before it, was altered or removed.")
    return redirect("web:audit_log")
