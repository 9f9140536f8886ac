"""GET /api/v1/memories/<name>/export and POST /api/v1/memories/<name>/import: a whole
memory as the export format (docs/export-format.md), streamed out and read in line by line.
Thin: the engine's portability services do the work and decide who may."""

from __future__ import annotations

from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from pydantic import BaseModel, Field
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from api.schema import ERROR_RESPONSES
from echomem.errors import PayloadTooLarge, ValidationFailed
from memories.portability.export import export_memory
from memories.portability.import_ import import_memory
from memories.portability.reading import bounded_lines

NDJSON = "application/x-ndjson"
READ_AS_NDJSON = {NDJSON, "application/jsonl", "application/x-jsonlines"}
FLAGS = {"true": True, "1": True, "false": False, "0": False}


def flag(request: Request, name: str) -> bool:
    given = request.query_params.get(name, "false")
    if given.lower() not in FLAGS:
        raise ValidationFailed(f"{name}={given[:40]!r} is not true or false", field=name,
                               fix=f"send {name}=true or {name}=false (or leave it out)")
    return FLAGS[given.lower()]


def attachment(name: str) -> str:
    return f'attachment; filename="{name}.echo-memory.jsonl"'


@extend_schema(
    operation_id="export_memory", summary="Export a whole memory (JSON Lines, streamed)",
    tags=["memories"],
    parameters=[OpenApiParameter("vectors", bool, description="Include each fact's and "
                                 "entity's vector (about 3 KB a record).")],
    responses={(200, NDJSON): OpenApiTypes.STR, **ERROR_RESPONSES})
@api_view(["GET"])
def export_view(request: Request, name: str):
    """The memory's episodes, entities, facts (with their history), notes and recall saves
    that the key's holder sees, one JSON object a line: the format of docs/export-format.md.
    A file without its trailer line was cut short."""
    lines = export_memory(principal=request.auth, memory=name,
                          include_vectors=flag(request, "vectors"))
    response = StreamingHttpResponse((line.encode() for line in lines), content_type=NDJSON)
    response["Content-Disposition"] = attachment(name)
    response["Cache-Control"] = "no-store"
    return response


class KindCountsOut(BaseModel):
    created: int
    already_present: int
    skipped: int


class ImportOut(BaseModel):
    memory: str
    dry_run: bool = Field(description="True: nothing was written; the counts say what an "
                                      "import would do.")
    changed: bool
    source_box: str
    source_memory: str
    same_box: bool
    vectors: str = Field(description="Whether the file's vectors were stored or the facts "
                                     "embedded again.")
    history_links: int
    units: int
    counts: dict[str, KindCountsOut] = Field(description="Per kind: episode, entity, fact, "
                                                         "note, recall_save.")
    skipped_reasons: list[str]


@extend_schema(
    operation_id="import_memory", summary="Import an export file into a memory",
    tags=["memories"], request={NDJSON: OpenApiTypes.STR},
    parameters=[OpenApiParameter("dry_run", bool, description="Report what would change; "
                                 "write nothing.")],
    responses={200: ImportOut, **ERROR_RESPONSES})
@api_view(["POST"])
def import_view(request: Request, name: str) -> Response:
    """Read the body (an export file) into the memory: all of it or, on any bad line, none
    of it (the error names the line and the field). Importing a file again changes nothing.
    The key's holder must be an owner or admin of the account."""
    media = (request.content_type or "").split(";")[0].strip().lower()
    if media not in READ_AS_NDJSON:
        raise ValidationFailed(f"Content-Type {media[:60]!r} is not an export file",
                               field="Content-Type", fix=f"send the file as {NDJSON}")
    dry_run = flag(request, "dry_run")
    _refuse_long_chunked(request)
    report = import_memory(principal=request.auth, memory=name, dry_run=dry_run,
                           lines=bounded_lines(request._request))
    return Response(ImportOut.model_validate(report.as_dict()).model_dump())


def _refuse_long_chunked(request: Request) -> None:
    """A chunked body is read only up to the server's body limit (echomem/wsgi.py), which
    would look like a file cut short: say what happened instead."""
    chunked = "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
    if chunked and int(request.META.get("CONTENT_LENGTH") or 0) > settings.MAX_BODY_BYTES:
        raise PayloadTooLarge(
            f"a chunked body is read up to {settings.MAX_BODY_BYTES} bytes "
            "(ECHO_MEMORY_MAX_BODY_BYTES); this file is longer", field="body",
            fix="send the file with a Content-Length (curl --data-binary @FILE does), or "
                "run `echo-memory import` on the box")
