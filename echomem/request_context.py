"""What a request says about its caller's situation besides who it is (the Principal).

Both doors (/mcp and /api/v1) read it from the same headers; tools that declare an
argument as a context default take it from here when the call leaves it out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Written by `memory setup --project`: a remote client has no working directory to send.
PROJECT_HEADER = "X-Echo-Project"
# A client that does not expand a variable it does not know sends it as written (a Cursor
# config copied to another editor: "${workspaceFolderBasename}"). That is no project name:
# the call is treated as naming none, rather than filing notes under the placeholder.
UNEXPANDED = re.compile(r"\$\{[^}]*\}|\{env:[^}]*\}|\{file:[^}]*\}")


@dataclass(frozen=True)
class RequestContext:
    project: str | None = None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> RequestContext:
        project = (headers.get(PROJECT_HEADER) or "").strip()
        if UNEXPANDED.search(project):
            project = ""
        return cls(project=project or None)

    def fill(self, names: tuple[str, ...], arguments: Any) -> Any:
        """`arguments` with the named ones this request supplies, where the call left them
        out (absent or null); anything but an object is left for validation to refuse."""
        if arguments is not None and not isinstance(arguments, dict):
            return arguments
        given = arguments or {}
        known = {"project": self.project}
        missing = {name: known[name] for name in names
                   if known.get(name) is not None and given.get(name) is None}
        return {**given, **missing} if missing else arguments


NO_CONTEXT = RequestContext()
