"""What `memory setup` changed in each config file, so that `memory uninstall` gives the
file back exactly as it was before setup: the same bytes, or no file at all.

Setup changes one contiguous span of a file (it inserts our entry, or replaces an older
entry of ours). For each (real path, server name) this records the SHA-256 of the text
setup left, the span in that text and what the original had there (usually nothing: an
insertion), whether the file existed, and which of the objects on the way to our entry
setup created. Uninstall finds the file as setup left it (same hash) and puts the
original span back: byte for byte, final newline, BOM, CRLF and the person's empty
objects included. When the file changed after setup (the client rewrote it, the person
edited it) the hash differs: uninstall then removes our entry alone, and removes an
object or the file only where the record says setup created it.

The records live in `installs.json` in the command's state folder (next to
created-dirs.json), readable by its owner only: a span may hold a piece of the person's
file when setup replaced an older entry of ours there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import platformdirs

FILE = "installs.json"


@dataclass(frozen=True)
class Record:
    after: str  # SHA-256 of the text setup left
    start: int  # the span of setup's text that differs from the original
    end: int
    original: str  # what the original had in that span
    existed: bool  # the file was there before setup
    created: int | None = None  # objects on the path setup created, from this depth down
    extra: dict[str, str] = field(default_factory=dict)  # per-format facts (OpenCode layout)

    def restore(self, text: str) -> str | None:
        """The original text, when `text` is still what setup left; else None."""
        if digest(text) != self.after:
            return None
        return text[:self.start] + self.original + text[self.end:]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def record_for(after: str, original: str, *, existed: bool, created: int | None,
               extra: dict[str, str] | None = None) -> Record:
    """The record that turns setup's `after` back into `original`: their common prefix
    and suffix are kept, the one span between them is remembered."""
    limit = min(len(after), len(original))
    start = 0
    while start < limit and after[start] == original[start]:
        start += 1
    tail = 0
    while tail < limit - start and after[-1 - tail] == original[-1 - tail]:
        tail += 1
    return Record(after=digest(after), start=start, end=len(after) - tail,
                  original=original[start:len(original) - tail], existed=existed,
                  created=created, extra=dict(extra or {}))


def _path() -> Path:
    return Path(platformdirs.user_state_dir("echo-memory", appauthor=False)) / FILE


def _key(target: Path, name: str) -> str:
    return f"{target}\x1f{name}"


def _read() -> dict[str, dict]:
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load(target: Path, name: str) -> Record | None:
    raw = _read().get(_key(target, name))
    if not isinstance(raw, dict):
        return None
    try:
        return Record(**raw)
    except TypeError:  # a record from another version of this command: not ours to trust
        return None


def save(target: Path, name: str, record: Record | None) -> None:
    """Remember (or, with None, forget) what setup did to `target` for server `name`."""
    data = _read()
    key = _key(target, name)
    if record is None:
        if key not in data:
            return
        del data[key]
    else:
        data[key] = asdict(record)
    path = _path()
    if not data:
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # our own folder, when nothing else is in it
            path.parent.rmdir()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    os.chmod(path, 0o600)
