"""Saves the server could not take yet, kept on this machine and sent with the next command
or bridge call, so that a note is never lost to a rate limit or an outage.

A `memory save` (or a bridge memory_save) that still meets 429 after waiting what it may,
or finds the server down, writes the save here and says so; the next `memory` command that
reaches the same endpoint with the same key sends what is waiting, oldest first, before its
own work. A save is safe to send again: the server answers one identical to the note with
"unchanged", for free. A save the server refuses as invalid stays here, marked with the
reason, and is not sent again; `memory outbox` lists everything, `--drop` discards.

The file is `outbox.json` in the command's state folder, readable by its owner only (it
holds notes before the server redacts their secrets). Entries name the endpoint and a hash of
the key, never the key, and go only to that endpoint with that key.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import platformdirs

from agent_cli.config import Settings
from agent_cli.remote import Remote, ToolError, Unavailable

FILE = "outbox.json"


def path() -> Path:
    return Path(platformdirs.user_state_dir("echo-memory", appauthor=False)) / FILE


def _owner(settings: Settings) -> dict[str, str]:
    key = hashlib.sha256((settings.key or "").encode()).hexdigest()[:16]
    return {"url": settings.url or "", "key": key}


def _read() -> list[dict[str, Any]]:
    try:
        data = json.loads(path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def _write(entries: list[dict[str, Any]]) -> None:
    target = path()
    if not entries:
        target.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            target.parent.rmdir()
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(FILE + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(entries, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    os.replace(temporary, target)  # never half a file: a note is in it or not


def keep(settings: Settings, arguments: dict[str, Any], reason: str) -> Path:
    """Keep a save that did not go through; returns where."""
    entries = _read()
    entries.append({**_owner(settings), "arguments": arguments, "reason": reason,
                    "kept_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
    _write(entries)
    return path()


def waiting(settings: Settings | None = None) -> list[dict[str, Any]]:
    """Every kept save (of this endpoint and key, when given)."""
    entries = _read()
    if settings is None:
        return entries
    owner = _owner(settings)
    return [e for e in entries if all(e.get(k) == v for k, v in owner.items())]


def drop() -> int:
    count = len(_read())
    _write([])
    return count


def send(remote: Remote, settings: Settings,
         said: Callable[[str], None] = lambda line: None) -> int:
    """Send the kept saves for this endpoint and key, oldest first; stop at the first the
    server cannot take now (they stay, in order). Returns how many went through."""
    sent = 0
    for entry in waiting(settings):
        if entry.get("refused"):
            continue
        try:
            reply = remote.call("memory_save", entry["arguments"])
        except Unavailable:
            break
        except ToolError as exc:  # it will never go through as it is: kept, not re-sent
            _update(entry, refused=str(exc))
            said(f"memory: a kept note ({entry['arguments'].get('title')!r}) was refused: "
                 f"{exc}; it stays in {path()} (`memory outbox` lists it)")
            continue
        _remove(entry)
        sent += 1
        said(f"memory: sent a note kept since {entry.get('kept_at')}: "
             f"{entry['arguments'].get('title')!r} ({reply.get('id', '')})")
    return sent


def _same(one: dict[str, Any], other: dict[str, Any]) -> bool:
    return all(one.get(k) == other.get(k) for k in ("url", "key", "kept_at", "arguments"))


def _remove(entry: dict[str, Any]) -> None:
    _write([e for e in _read() if not _same(e, entry)])


def _update(entry: dict[str, Any], **changes: Any) -> None:
    _write([{**e, **changes} if _same(e, entry) else e for e in _read()])
