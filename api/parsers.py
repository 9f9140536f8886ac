"""The JSON body parser of the REST API: the same size, nesting and constant rules as /mcp."""

from __future__ import annotations

from rest_framework.parsers import BaseParser

from echomem.request_body import parse_json, read_limited


class JsonBodyParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        request = parser_context["request"]
        return parse_json(read_limited(stream, request.META))
