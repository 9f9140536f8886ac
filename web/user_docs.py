"""The user docs (docs/*.md), served by the server itself at /docs/.

A self-hosted box may have no internet, and the docs it needs (connecting agents, the
dashboard, self-hosting) must match the version it runs: so the server renders its own
copy rather than linking to a website. In a checkout that copy is docs/ itself; the wheel
carries it inside this package (web/docs_pages/, put there by the build backend,
build_tools/echo_build_backend.py), since a wheel installs packages only.

Rendered with markdown-it-py (CommonMark, raw HTML off), then fitted to the site: links
between docs become /docs/ links, headings get the anchors GitHub gives them (the docs
link to those), tables get Bootstrap's classes and lose their inline alignment styles
(the Content-Security-Policy allows no style attribute), and code blocks and tables, which
scroll sideways on a phone, take keyboard focus so that they can be scrolled without a
mouse (WCAG 2.1.1; axe's scrollable-region-focusable).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.urls import reverse
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = Path(__file__).resolve().parent / "docs_pages"


def docs_dir() -> Path:
    """docs/ of the checkout this code runs from, else the copy inside the installed wheel."""
    return ROOT / "docs" if (ROOT / "pyproject.toml").is_file() else PACKAGED


@dataclass(frozen=True)
class Guide:
    slug: str
    name: str
    about: str  # what it answers, for the index


# Every docs/*.md, in the order a newcomer needs them (a test checks that none is missing).
GUIDES = [
    Guide("dashboard", "Dashboard",
          "This site's pages: memories, keys, the explorer, team, audit log."),
    Guide("connect", "Connecting apps by signing in",
          "Claude.ai, ChatGPT, Claude Code, VS Code, Cursor without a key; revoking them."),
    Guide("agents", "Connecting agents",
          "Each client's setting with a key, and the MCP transport."),
    Guide("coding-agents", "Coding agents",
          "The memory command for coding agents: setup, notes, EchoVault vaults."),
    Guide("api", "REST API",
          "The REST API in prose; the interactive reference is at /api/v1/docs."),
    Guide("export-format", "Export and import",
          "A memory as a file: the format, and what an import does with it."),
    Guide("engine", "How memory behaves",
          "Scopes, new versions of facts, search, causes, forgetting."),
    Guide("security", "Security",
          "The threat model, what is redacted, sign-in limits."),
    Guide("self-hosting", "Self-hosting",
          "Running your own server: install, configuration, operations."),
    Guide("billing", "Billing",
          "Plans, units and invoices on the hosted service."),
    Guide("benchmarks", "Benchmarks",
          "Speed and recall figures, with how they were measured."),
    Guide("architecture", "Architecture",
          "The packages and the imports allowed between them (for contributors)."),
    Guide("testing", "Testing",
          "Running the test suite (for contributors)."),
    Guide("security-fuzzing", "Fuzzing",
          "The fuzzing suite (for contributors)."),
]
BY_SLUG = {guide.slug: guide for guide in GUIDES}

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_DOC_LINK = re.compile(r"^(?P<slug>[a-z0-9-]+)\.md(?P<anchor>#[\w-]*)?$")
_ALIGN = {"text-align:right": "text-end", "text-align:center": "text-center",
          "text-align:left": "text-start"}


def heading_anchor(text: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _fitted(tokens) -> None:
    """Adjust the parsed tokens in place (see the module's docstring)."""
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            anchor = heading_anchor(tokens[index + 1].content)
            seen[anchor] = seen.get(anchor, -1) + 1  # GitHub numbers repeats: x, x-1, x-2
            token.attrSet("id", f"{anchor}-{seen[anchor]}" if seen[anchor] else anchor)
        elif token.type in ("th_open", "td_open") and token.attrGet("style"):
            token.attrSet("class", _ALIGN.get(str(token.attrGet("style")), ""))
            del token.attrs["style"]
        elif token.type == "inline" and token.children:
            for child in token.children:
                if child.type == "link_open":
                    found = _DOC_LINK.match(str(child.attrGet("href")))
                    if found and found["slug"] in BY_SLUG:
                        child.attrSet("href", reverse("web:docs_page", args=[found["slug"]])
                                      + (found["anchor"] or ""))


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.add_render_rule("table_open", lambda *_: '<div class="table-responsive" tabindex="0">'
                       '<table class="table table-sm">\n')
    md.add_render_rule("table_close", lambda *_: "</table></div>\n")
    for block in ("fence", "code_block"):
        stock = md.renderer.rules[block]
        md.add_render_rule(block, lambda _renderer, *args, stock=stock: stock(*args).replace(
            "<pre>", '<pre tabindex="0">', 1))
    return md


@lru_cache(maxsize=len(GUIDES) * 2)
def _render(path: Path, modified: float) -> tuple[str, str]:
    md = _renderer()
    tokens = md.parse(_COMMENT.sub("", path.read_text(encoding="utf-8")))
    _fitted(tokens)
    title = next((tokens[i + 1].content for i, t in enumerate(tokens)
                  if t.type == "heading_open" and t.tag == "h1"), path.stem)
    return title, md.renderer.render(tokens, md.options, {})


def page(slug: str) -> tuple[str, str] | None:
    """(title, HTML) of one guide, None for a slug that names none (or a missing file)."""
    if slug not in BY_SLUG:
        return None
    path = docs_dir() / f"{slug}.md"
    try:
        return _render(path, path.stat().st_mtime)
    except FileNotFoundError:
        return None
