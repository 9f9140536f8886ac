"""Codex's TOML config: our one `[mcp_servers.NAME]` table in, and out again, exactly.

tomlkit (style-preserving) reads the file, renders our table and replaces it in place when
it changes. A new table is appended as a block of its own, after one blank line, so that
uninstall can take out exactly that block and the blank line it brought: the person's other
tables, comments and spacing stay byte for byte.
"""

from __future__ import annotations

import re
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

TABLE = "mcp_servers"


class TomlError(ValueError):
    pass


def _parse(text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise TomlError(str(exc)) from exc


def _table(entry: dict[str, Any]) -> Any:
    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            table.add(key, inline)
        else:
            table.add(key, value)
    return table


def current(text: str, name: str) -> Any:
    servers = _parse(text).get(TABLE)
    found = servers.get(name) if servers is not None else None
    return found.unwrap() if found is not None else None


def _block(name: str, entry: dict[str, Any]) -> str:
    servers = tomlkit.table(is_super_table=True)
    servers.add(name, _table(entry))
    doc = tomlkit.document()
    doc.add(TABLE, servers)
    return tomlkit.dumps(doc)


BOM = "\ufeff"


def _without_bom(edit):
    """A file that starts with a byte order mark (Windows editors write one) keeps it; the
    TOML parser is given the text after it."""
    def wrapper(text: str, *args: Any, **kwargs: Any) -> Any:
        if text.startswith(BOM):
            return BOM + edit(text[1:], *args, **kwargs)
        return edit(text, *args, **kwargs)
    return wrapper


def holds(text: str, name: str) -> bool:
    return current(text.removeprefix(BOM), name) is not None


def has_servers_table(text: str) -> bool:
    return TABLE in _parse(text.removeprefix(BOM))


@_without_bom
def set_server(text: str, name: str, entry: dict[str, Any]) -> str:
    found = current(text, name)
    if found == entry:
        return text
    if found is not None:
        doc = _parse(text)
        doc[TABLE][name] = _table(entry)
        return tomlkit.dumps(doc)
    newline = "\r\n" if "\r\n" in text else "\n"
    separator = "" if not text else newline if text.endswith("\n") else newline * 2
    updated = text + separator + _block(name, entry).replace("\n", newline)
    try:
        fits = current(updated, name) == entry
    except TomlError:  # e.g. mcp_servers is an inline table here: a new table clashes
        fits = False
    if not fits:
        raise TomlError(f"cannot add [{TABLE}.{name}] to this file: {TABLE} is not a table "
                        "that takes new sub-tables; edit it by hand")
    return updated


def _header(name: str) -> re.Pattern[str]:
    quoted = re.escape(name) if re.fullmatch(r"[A-Za-z0-9_-]+", name) else None
    names = [f'"{re.escape(name)}"', f"'{re.escape(name)}'"] + ([quoted] if quoted else [])
    return re.compile(r"^[ \t]*\[[ \t]*" + TABLE + r"[ \t]*\.[ \t]*(?:" + "|".join(names)
                      + r")[ \t]*(\.[^\]]*)?\][ \t]*(#.*)?$", re.M)


@_without_bom
def remove_server(text: str, name: str, *, prune: bool = False) -> str:
    """`text` without our table; `prune` also drops an [mcp_servers] left empty (only when
    setup created it)."""
    if current(text, name) is None:
        return text
    lines = text.splitlines(keepends=True)
    header = _header(name)
    starts = [i for i, line in enumerate(lines) if header.match(line.rstrip("\r\n"))]
    if starts:
        first = starts[0]
        last = first
        for i in range(first + 1, len(lines)):
            stripped = lines[i].strip()
            if stripped.startswith("[") and not header.match(lines[i].rstrip("\r\n")):
                break
            if stripped:
                last = i
        begin = first - 1 if first > 0 and not lines[first - 1].strip() else first
        updated = "".join(lines[:begin] + lines[last + 1:])
        if current(updated, name) is None and _parse(updated) is not None:
            return _pruned(updated) if prune else updated
    # Not a block of its own (dotted keys, an inline table): tomlkit removes it in place.
    doc = _parse(text)
    del doc[TABLE][name]
    if prune and not doc[TABLE]:
        del doc[TABLE]
    return tomlkit.dumps(doc)


def _pruned(text: str) -> str:
    doc = _parse(text)
    if TABLE not in doc or doc[TABLE]:
        return text
    del doc[TABLE]
    return tomlkit.dumps(doc)
