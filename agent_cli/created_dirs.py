"""The folders `memory setup` made (`~/.codex`, `.cursor/`, ...), so that `memory uninstall`
removes them again once empty, and never a folder that was there before setup.

They are listed, as absolute paths, in `created-dirs.json` in the command's state folder
(`~/.local/state/echo-memory` on Linux), which is in no client's folder, so it never
keeps one from being empty; the list goes when the last of them does.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from pathlib import Path

import platformdirs

FILE = "created-dirs.json"


def _record() -> Path:
    return Path(platformdirs.user_state_dir("echo-memory", appauthor=False)) / FILE


def _read() -> list[str]:
    try:
        data = json.loads(_record().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(p) for p in data if isinstance(p, str)] if isinstance(data, list) else []


def _write(paths: list[str]) -> None:
    record = _record()
    if paths:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(sorted(set(paths)), indent=2) + "\n", encoding="utf-8")
        return
    record.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # our own folder, when nothing else is in it
        record.parent.rmdir()


def missing(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, outermost first."""
    absent = []
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        absent.append(candidate)
    return absent[::-1]


def remember(folders: Iterable[Path]) -> None:
    made = [str(folder.absolute()) for folder in folders]
    if made:
        _write(_read() + made)


def tidy(files: Iterable[Path]) -> list[Path]:
    """After uninstall deleted `files`: remove the folders setup made above them that are
    now empty, innermost first; returns the folders removed."""
    recorded = _read()
    above = {parent for f in files for parent in f.absolute().parents}
    removed = []
    for folder in sorted((Path(p) for p in recorded if Path(p) in above),
                         key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()
        except FileNotFoundError:
            removed.append(folder)  # gone already: nothing left to remember
        except OSError:  # not empty: the person keeps something there
            continue
        else:
            removed.append(folder)
    if removed:
        _write([p for p in recorded if Path(p) not in removed])
    return removed
