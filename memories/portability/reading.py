"""Reading an export file line by line: each line checked against its model, each refusal
naming the line number, the field and the fix. Nothing here touches the database.

Refused, each with its line number: a line over the configured limit
(ECHO_MEMORY_IMPORT_LINE_BYTES, 1 MiB by default), a line that is not UTF-8 JSON (a file
cut mid-line ends in one), a line of another format or kind, a header of a newer format
version, a record whose fields do not fit (NUL characters, text longer than its column,
times outside years 1 to 9999), and a file that ends without its trailer or whose trailer
counts other lines than it holds.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import IO, Any

from django.conf import settings
from pydantic import ValidationError

from echomem.errors import ValidationFailed
from memories.portability.lines import FORMAT, RECORDS, VERSION, Header, InPartition, Trailer

DEFAULT_LINE_BYTES = 1024 * 1024
# How a NUL or a lone surrogate can be written in a JSON line (raw, they are not valid JSON
# text or UTF-8): a line without this needs no check of its strings.
_MAY_BE_UNSTORABLE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


class ImportRefused(ValidationFailed):
    """A file the import will not read, with the line at fault (1 = the header)."""

    code = "invalid_import"

    def __init__(self, line: int, message: str, *, field: str, fix: str):
        super().__init__(f"line {line}: {message}", field=field, fix=fix)
        self.line = line

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "line": self.line}


def line_limit() -> int:
    """The longest line accepted, in bytes without its newline."""
    return getattr(settings, "ECHO_MEMORY_IMPORT_LINE_BYTES", DEFAULT_LINE_BYTES)


def bounded_lines(stream: IO[bytes], limit: int | None = None) -> Iterator[bytes]:
    """The lines of a binary stream, never reading more than the limit (and a little) of
    one line into memory: an overlong line is handed on cut, still over the limit, for
    `parse` to refuse."""
    most = (limit or line_limit()) + 2
    while True:
        line = stream.readline(most)
        if not line:
            return
        yield line
        if len(line) >= most and not line.endswith(b"\n"):
            return  # refused by the reader; the rest of that line is never read


class FileReader:
    """Walks the lines: `header` first, then `records()`, which checks the trailer."""

    def __init__(self, lines: Iterable[bytes | str], *, limit: int | None = None):
        self._lines = iter(lines)
        self._limit = limit or line_limit()
        self.number = 0
        self.counts: Counter[str] = Counter()
        self.header = self._header()

    def _next(self) -> tuple[dict[str, Any] | None, bool]:
        """The next line as a JSON object (None at the end) and whether it ended in a newline."""
        data, ended = b"", True
        while not data:  # a blank line (an editor's) holds nothing to refuse
            raw = next(self._lines, None)
            if raw is None:
                return None, True
            self.number += 1
            data = raw.encode() if isinstance(raw, str) else raw
            ended = data.endswith(b"\n")
            data = data.rstrip(b"\r\n")
            if self.number == 1:
                data = data.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark editors add
        if len(data) > self._limit:
            raise ImportRefused(
                self.number, f"the line is {len(data)} bytes or more; this server reads lines "
                f"up to {self._limit} bytes (ECHO_MEMORY_IMPORT_LINE_BYTES)", field="line",
                fix="raise ECHO_MEMORY_IMPORT_LINE_BYTES on this server, or export without "
                    "vectors")
        try:
            text = data.decode("utf-8")
            value = json.loads(text, parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError) as exc:
            cut = "" if ended else " (the file ends inside this line: it was cut short)"
            raise ImportRefused(self.number, f"not a JSON line{cut}: {exc}", field="line",
                                fix="import the complete file the export wrote") from None
        if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
            raise ImportRefused(self.number, "a line of another format: every line is a JSON "
                                "object with a `kind`", field="kind",
                                fix=f"import a file written by `echo-memory export` ({FORMAT})")
        self.check_text = _MAY_BE_UNSTORABLE.search(text) is not None
        return value, ended

    def _header(self) -> Header:
        value, _ = self._next()
        if value is None:
            raise ImportRefused(1, "the file is empty", field="header",
                                fix="import a file written by `echo-memory export`")
        if value.get("kind") != "header" or value.get("format") != FORMAT:
            raise ImportRefused(1, f"not an {FORMAT} file: its first line is no header of "
                                "that format", field="format",
                                fix="import a file written by `echo-memory export`")
        version = value.get("version")
        if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
            raise ImportRefused(
                1, f"this file was written by format version {version}; this server reads "
                f"up to {VERSION}", field="version", fix="upgrade the server, then import it")
        return _validated(Header, value, 1, self.check_text)

    def records(self) -> Iterator[InPartition]:
        """Each record in file order; ends after a trailer that matches what was read."""
        while True:
            value, _ = self._next()
            if value is None:
                raise ImportRefused(
                    self.number, "the file ends without its trailer line: it was cut short",
                    field="trailer", fix="export again, or copy the whole file")
            kind = value["kind"]
            if kind == "trailer":
                self._check_trailer(_validated(Trailer, value, self.number, self.check_text))
                return
            model = RECORDS.get(kind)
            if model is None:
                why = ("a second header: an account export holds several memories; import "
                       "one memory's file at a time") if kind == "header" else \
                    f"unknown kind {kind[:40]!r}"
                raise ImportRefused(self.number, why, field="kind",
                                    fix=f"kinds are {', '.join(RECORDS)}, then one trailer")
            self.counts[kind] += 1
            yield _validated(model, value, self.number, self.check_text)

    def _check_trailer(self, trailer: Trailer) -> None:
        read = sum(self.counts.values())
        counted = {kind: n for kind, n in trailer.counts.items() if n}
        if trailer.records != read or counted != {k: n for k, n in self.counts.items() if n}:
            raise ImportRefused(
                self.number, f"the trailer counts {trailer.records} record(s) "
                f"({counted}) but the file holds {read} ({dict(self.counts)}): lines are "
                "missing or were added", field="trailer",
                fix="export again, or copy the whole file")
        extra, _ = self._next()
        if extra is not None:
            raise ImportRefused(self.number, "a line after the trailer", field="trailer",
                                fix="import one memory's file at a time")


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _validated(model: type, value: dict[str, Any], number: int, check_text: bool):
    try:
        return model.model_validate(value, context={"check_text": check_text})
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        path = ".".join(str(part) for part in error["loc"]) or model.__name__
        kind = value.get("kind", "line")
        raise ImportRefused(number, f"{kind}.{path}: {error['msg']}", field=f"{kind}.{path}",
                            fix="correct the field (the format is docs/export-format.md), or "
                                "export the memory again") from None
