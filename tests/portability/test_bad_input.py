"""Every file the import refuses: a clear error with the line number and the field, and
nothing written (the import is one transaction)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import pytest

from memories.import_records import ImportedRecord
from memories.models import Entity, Episode, Fact
from memories.portability.reading import ImportRefused
from tests.portability.conftest import exported, imported

Lines = list[str]


def _last(lines: Lines, kind: str) -> int:
    """The index of the last line of `kind` (the line number is this plus one)."""
    return max(i for i, line in enumerate(lines) if json.loads(line)["kind"] == kind)


def _edit(lines: Lines, kind: str, **changes) -> tuple[Lines, int]:
    index = _last(lines, kind)
    record = json.loads(lines[index]) | changes
    return [*lines[:index], json.dumps(record) + "\n", *lines[index + 1:]], index + 1


def _cut_trailer(lines: Lines) -> tuple[Lines, int]:
    return lines[:-1], len(lines) - 1


def _cut_mid_line(lines: Lines) -> tuple[Lines, int]:
    index = _last(lines, "fact")
    return [*lines[:index], lines[index][:40]], index + 1


def _other_format(lines: Lines) -> tuple[Lines, int]:
    index = _last(lines, "fact")
    return [*lines[:index], '["a", "csv", "row"]\n', *lines[index + 1:]], index + 1


def _newer_version(lines: Lines) -> tuple[Lines, int]:
    header = json.loads(lines[0]) | {"version": 2, "something_new": True}
    return [json.dumps(header) + "\n", *lines[1:]], 1


CASES: dict[str, tuple[Callable, str, str]] = {
    "truncated (no trailer)": (_cut_trailer, "trailer", "ends without its trailer"),
    "cut mid-line": (_cut_mid_line, "line", "the file ends inside this line"),
    "a line of another format": (_other_format, "kind", "a line of another format"),
    "newer format version": (_newer_version, "version",
                             "this file was written by format version 2; this server reads "
                             "up to 1"),
    "unknown entity": (lambda lines: _edit(lines, "fact", source=str(uuid.uuid4())),
                       "fact.source", "which is not in the file"),
    "unknown episode": (lambda lines: _edit(lines, "entity", episode=str(uuid.uuid4())),
                        "entity.episode", "which is not in the file"),
    "NUL character": (lambda lines: _edit(lines, "fact", fact="tea\u0000time"),
                      "fact.fact", "NUL"),
    "too long for its column": (lambda lines: _edit(lines, "fact", relation_type="r" * 201),
                                "fact.relation_type", "at most 200 characters"),
    "date out of range": (lambda lines: _edit(lines, "fact",
                                              valid_at="9999-12-31T23:59:59-14:00"),
                          "fact.valid_at", "outside years 1 to 9999"),
    "trailer counts differ": (lambda lines: ([line for line in lines if '"recall_save"'
                                              not in line[:30]], len(lines) - 1),
                              "trailer", "lines are missing"),
}


def _nothing_written(account) -> None:
    assert not Fact.objects.filter(memory__account=account).exists()
    assert not Entity.objects.filter(memory__account=account).exists()
    assert not Episode.objects.filter(memory__account=account).exists()
    assert not ImportedRecord.objects.filter(memory__account=account).exists()


@pytest.mark.parametrize("case", CASES)
def test_a_bad_file_is_refused_by_line_and_field_with_nothing_written(alice, charlie, filled,
                                                                      case):
    mutate, field, said = CASES[case]
    lines, line_number = mutate(exported(alice.principal))

    with pytest.raises(ImportRefused) as refused:
        imported(charlie.principal, lines)

    assert refused.value.line == line_number
    assert refused.value.field == field
    assert said in refused.value.message
    assert refused.value.message.startswith(f"line {line_number}: ")
    assert refused.value.fix
    _nothing_written(charlie.account)


def test_a_line_one_byte_over_the_limit_is_refused_and_one_at_it_is_read(alice, charlie,
                                                                          filled, settings):
    lines = exported(alice.principal)
    settings.ECHO_MEMORY_IMPORT_LINE_BYTES = max(len(line.encode()) - 1 for line in lines)
    index = _last(lines, "fact")
    record = json.loads(lines[index])
    size = len((json.dumps(record) + "\n").encode()) - 1
    record["fact"] += "x" * (settings.ECHO_MEMORY_IMPORT_LINE_BYTES + 1 - size)
    over = [*lines[:index], json.dumps(record) + "\n", *lines[index + 1:]]

    with pytest.raises(ImportRefused) as refused:
        imported(charlie.principal, over)
    assert refused.value.line == index + 1
    assert "ECHO_MEMORY_IMPORT_LINE_BYTES" in refused.value.message
    _nothing_written(charlie.account)

    record["fact"] = record["fact"][:-1]
    at_limit = [*lines[:index], json.dumps(record) + "\n", *lines[index + 1:]]
    assert imported(charlie.principal, at_limit).counts["fact"].created == 4


def test_a_dry_run_reports_the_counts_and_writes_nothing(alice, charlie, filled):
    lines = exported(alice.principal)

    report = imported(charlie.principal, lines, dry_run=True)

    assert report.dry_run and report.counts["fact"].created == 4
    assert report.counts["entity"].created == 5
    _nothing_written(charlie.account)
    assert imported(charlie.principal, lines).counts == report.counts


def test_a_byte_order_mark_and_blank_lines_are_read_past(alice, charlie, filled):
    lines = exported(alice.principal)
    edited = ["\ufeff" + lines[0], "\n", *lines[1:], "\r\n", "\n"]

    assert imported(charlie.principal, edited).counts["fact"].created == 4
