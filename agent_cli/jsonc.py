"""Surgical edits of JSON (and JSON with comments) config files.

Clients' config files hold the person's other servers, their comments and their own
layout. Loading and dumping the whole file would reflow all of it, so this module parses
the text into spans and changes only the bytes of the one member it sets or removes: the
rest of the file, comments and trailing commas included, stays byte for byte. A member
it inserts follows the file's own indentation; removing it again gives back the file as
it was before the insertion.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


class JsoncError(ValueError):
    """The file is not JSON (with comments): says where, so the person can fix it."""

    def __init__(self, text: str, offset: int, what: str):
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        super().__init__(f"line {line}, column {column}: {what}")


@dataclass
class Node:
    start: int
    end: int
    kind: str  # "object", "array" or "scalar"
    members: list[Member] = field(default_factory=list)  # objects
    items: list[Node] = field(default_factory=list)  # arrays


@dataclass
class Member:
    key: str
    key_start: int
    value: Node
    comma: int | None = None  # offset of the comma after the value, if any


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.comments = False

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
                self.comments = True
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise JsoncError(text, self.pos, "a /* comment is never closed")
                self.pos = end + 2
                self.comments = True
            else:
                return

    def value(self) -> Node:
        self.skip()
        text, start = self.text, self.pos
        if start >= len(text):
            raise JsoncError(text, start, "the file ends where a value should be")
        if text[start] == "{":
            return self.container("{", "}")
        if text[start] == "[":
            return self.container("[", "]")
        found = _STRING.match(text, start) or _SCALAR.match(text, start)
        if not found:
            raise JsoncError(text, start, f"unexpected {text[start]!r}")
        self.pos = found.end()
        return Node(start, self.pos, "scalar")

    def container(self, opening: str, closing: str) -> Node:
        node = Node(self.pos, -1, "object" if opening == "{" else "array")
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith(closing, self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            if node.kind == "object":
                key = _STRING.match(self.text, self.pos)
                if not key:
                    raise JsoncError(self.text, self.pos, "expected a quoted key or '}'")
                self.pos = key.end()
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise JsoncError(self.text, self.pos, "expected ':' after the key")
                self.pos += 1
                member = Member(json.loads(key.group()), key.start(), self.value())
                node.members.append(member)
            else:
                node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.pos):
                if node.kind == "object":
                    node.members[-1].comma = self.pos
                self.pos += 1
            elif not self.text.startswith(closing, self.pos):
                raise JsoncError(self.text, self.pos, f"expected ',' or {closing!r}")


@dataclass
class Document:
    text: str
    root: Node
    has_comments: bool

    def data(self, node: Node | None = None) -> Any:
        node = node or self.root
        if node.kind == "object":
            return {m.key: self.data(m.value) for m in node.members}
        if node.kind == "array":
            return [self.data(item) for item in node.items]
        return json.loads(self.text[node.start:node.end])


def parse(text: str) -> Document:
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise JsoncError(text, parser.pos, "text after the end of the document")
    if root.kind != "object":
        raise JsoncError(text, root.start, "the document is not an object ({...})")
    return Document(text, root, parser.comments)


def _line_indent(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    return re.match(r"[ \t]*", text[start:]).group()


def _indent_unit(doc: Document) -> str:
    """The file's indentation step, read from its first member; two spaces by default."""
    for member in doc.root.members:
        own = _line_indent(doc.text, member.key_start)
        if own and doc.text[doc.text.rfind("\n", 0, member.key_start) + 1:member.key_start] == own:
            return own
    return "  "


def _render(value: Any, unit: str, indent: str, newline: str = "\n") -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", newline + indent)


def newline_of(text: str) -> str:
    """The file's line ending: a Windows file keeps its CRLF in what we add."""
    return "\r\n" if "\r\n" in text else "\n"


def _find(doc: Document, path: list[str]) -> tuple[Node, list[str]]:
    """The deepest object along `path`, and the part of the path not found under it."""
    node = doc.root
    for depth, key in enumerate(path):
        member = next((m for m in node.members if m.key == key), None)
        if member is None:
            return node, path[depth:]
        if member.value.kind != "object":
            raise JsoncError(doc.text, member.value.start, f'"{key}" is not an object')
        node = member.value
    return node, []


def _tail(text: str, obj: Node) -> int:
    """Where the object's content ends: the last non-blank character before its '}'."""
    end = obj.end - 1
    while end > obj.start + 1 and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def set_member(text: str, path: list[str], name: str, value: Any) -> str:
    """`text` with object `path` holding `name: value`, creating the objects on the way."""
    doc = parse(text)
    obj, missing = _find(doc, path)
    for key in reversed(missing):
        name, value = key, {name: value}
    current = next((m for m in obj.members if m.key == name), None)
    unit, newline = _indent_unit(doc), newline_of(text)
    if current is not None:
        if doc.data(current.value) == value:
            return text
        rendered = _render(value, unit, _line_indent(text, current.key_start), newline)
        return text[:current.value.start] + rendered + text[current.value.end:]
    inner = text[obj.start + 1:obj.end - 1]
    if obj.members and "\n" not in inner:  # a one-line object stays on one line
        last = obj.members[-1]
        entry = f", {json.dumps(name)}: {json.dumps(value, ensure_ascii=False)}"
        at = last.comma + 1 if last.comma is not None else last.value.end
        return text[:at] + entry + text[at:]
    outer = _line_indent(text, obj.start)
    indent = outer + unit
    entry = f"{newline}{indent}{json.dumps(name)}: {_render(value, unit, indent, newline)}"
    tail = _tail(text, obj)
    closing = "" if "\n" in text[tail:obj.end - 1] else newline + outer
    before, after = text[:tail], text[tail:]
    if obj.members and obj.members[-1].comma is None:
        at = obj.members[-1].value.end
        before = text[:at] + "," + text[at:tail]
    elif obj.members:
        entry += ","  # the file ends its members with a comma: so does ours
    return before + entry + closing + after


def _back_to_line(text: str, offset: int) -> int:
    """Extend a removal to the blanks before `offset`, and their newline if the line is empty."""
    start = offset
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    if start > 0 and text[start - 1] == "\n":
        start -= 1
        if start > 0 and text[start - 1] == "\r":
            start -= 1
    return start


def remove_member(text: str, path: list[str], name: str, *, prune_from: int | None = None
                  ) -> str:
    """`text` without `name` in object `path`.

    An object the removal leaves empty goes too when it sits at depth `prune_from` of the
    path or deeper (the objects setup created on its way to our entry); the person's own
    objects stay, empty or not. None prunes nothing.
    """
    doc = parse(text)
    obj, missing = _find(doc, path)
    found = [i for i, m in enumerate(obj.members) if m.key == name]
    if missing or not found:
        return text
    index = found[0]
    member = obj.members[index]
    start = _back_to_line(text, member.key_start)
    end = member.value.end
    cuts: list[tuple[int, int]] = []
    if member.comma is not None:  # not last, or last with a trailing comma of its own
        end = member.comma + 1
    elif index > 0:
        previous = obj.members[index - 1]
        cuts.append((previous.comma, previous.comma + 1))
    cuts.append((start, end))
    for cut_start, cut_end in sorted(cuts, reverse=True):
        text = text[:cut_start] + text[cut_end:]
    emptied, _ = _find(parse(text), path)
    if emptied.members or "/" in text[emptied.start:emptied.end]:
        return text
    depth = len(path) - 1  # the emptied object is path[depth]
    if path and prune_from is not None and depth >= prune_from:
        return remove_member(text, path[:-1], path[-1], prune_from=prune_from)
    return text


def holds(text: str, path: list[str], name: str) -> bool:
    """Whether object `path` of the document has a member `name`."""
    obj, missing = _find(parse(text), path)
    return not missing and any(m.key == name for m in obj.members)


def missing_depth(text: str, path: list[str]) -> int | None:
    """The depth from which the objects of `path` are absent (0: the first key); None when
    they all exist."""
    _, missing = _find(parse(text), path)
    return len(path) - len(missing) if missing else None


def is_empty(text: str) -> bool:
    """Nothing in the document but an empty object: no member, no comment."""
    doc = parse(text)
    return not doc.root.members and not doc.has_comments


def indent_of(text: str) -> str:
    """The indentation unit a new file of this client would get (for messages and tests)."""
    return _indent_unit(parse(text)) if text.strip() else "  "
