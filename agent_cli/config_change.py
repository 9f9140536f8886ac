"""One planned edit of a client's config file: what it holds before and after, said as a
diff, then written whole (through a symlink, keeping the file's mode) with what setup must
remember to give the file back (install_record)."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli import created_dirs, install_record

_KEEP = object()  # Change.record: leave what is remembered as it is


@dataclass
class Change:
    path: Path  # the file as the client names it
    target: Path  # the file actually read and written: a symlink's target
    before: str | None  # None: the file did not exist
    after: str | None  # None: the file is (to be) deleted
    name: str = ""
    record: Any = field(default=_KEEP)  # a Record to remember, None to forget, or _KEEP
    note: str = ""  # said after the summary, e.g. why a removal was not exact

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def summary(self) -> str:
        where = shown(self.path)
        if not self.changed:
            return f"{where}: already up to date"
        if self.before is None:
            verb = "created"
        elif self.after is None:
            verb = "deleted (setup created it)"
        else:
            verb = "updated"
        diff = difflib.unified_diff((self.before or "").splitlines(),
                                    (self.after or "").splitlines(), lineterm="", n=1)
        body = [line for line in diff if not line.startswith(("---", "+++"))]
        lines = [f"{where}: {verb}", *(f"  {line}" for line in body)]
        return "\n".join(lines + ([f"  note: {self.note}"] if self.note else []))

    def apply(self) -> None:
        if self.changed:
            self._write()
        if self.record is not _KEEP:
            install_record.save(self.target, self.name, self.record)

    def _write(self) -> None:
        # A dotfile manager's symlink (to the file or to its folder) stays as it is: the
        # file it points to is what changes, or goes.
        target = self.target
        if self.after is None:
            target.unlink(missing_ok=True)
            return
        made = created_dirs.missing(target.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        created_dirs.remember(made)
        mode = target.stat().st_mode & 0o777 if target.exists() else None
        temporary = target.with_name(target.name + ".echo-memory.tmp")
        temporary.write_text(self.after, encoding="utf-8", newline="")
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)  # whole or nothing: a client never reads half


def shown(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)
