"""The user docs are served by the server itself at /docs/ (a box without internet has
them, for the version it runs), linked from every page's nav and from the dashboard with
the API reference; every doc is listed, and every link between docs lands on a page and a
heading that exist."""

from __future__ import annotations

import re

import pytest

from web import user_docs

HREF = re.compile(r'href="(/docs/([a-z0-9-]+)/)(#[^"]*)?"')
ID = re.compile(r'\sid="([^"]+)"')


def test_every_doc_in_docs_is_a_listed_guide_and_every_guide_a_doc():
    on_disk = {path.stem for path in user_docs.docs_dir().glob("*.md")}
    assert on_disk == set(user_docs.BY_SLUG)
    assert user_docs.docs_dir() == user_docs.ROOT / "docs"  # a checkout reads docs/ itself


def test_the_dashboard_links_the_api_reference_and_the_user_docs(client, alice):
    client.force_login(alice.user)
    html = client.get("/dashboard/").content.decode()
    assert 'href="/api/v1/docs"' in html
    assert 'href="/docs/"' in html and 'href="/docs/agents/"' in html
    assert client.get("/api/v1/docs").status_code == 200


@pytest.mark.parametrize("signed_in", [False, True])
def test_every_page_of_the_site_has_the_docs_in_its_nav(client, alice, signed_in):
    if signed_in:
        client.force_login(alice.user)
    for path in ("/", "/docs/", "/login/" if not signed_in else "/team/"):
        assert 'class="nav-link" href="/docs/"' in client.get(path).content.decode(), path


def test_the_index_lists_every_guide_and_the_api_reference(client, db):
    html = client.get("/docs/").content.decode()
    for guide in user_docs.GUIDES:
        assert f'href="/docs/{guide.slug}/"' in html
    assert 'href="/api/v1/docs"' in html


@pytest.mark.parametrize("slug", list(user_docs.BY_SLUG))
def test_each_guide_renders_in_the_layout_and_its_links_land(client, db, slug):
    page = client.get(f"/docs/{slug}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "bootstrap.min.css" in html and 'class="navbar-brand' in html
    assert "<h1" in html and "<table>" not in html  # tables get the site's classes
    assert not re.search(r'href="[a-z0-9-]+\.md', html), "a link between docs not rewritten"
    assert "&lt;!--" not in html  # the generated-region markers do not show
    here = set(ID.findall(html))
    for anchor in re.findall(r'href="#([^"]+)"', html):
        assert anchor in here, f"{slug} links to #{anchor}: no such heading"
    for _, target, anchor in HREF.findall(html):
        assert target in user_docs.BY_SLUG, f"{slug} links to a missing guide {target}"
        if anchor:
            ids = set(ID.findall(client.get(f"/docs/{target}/").content.decode()))
            assert anchor[1:] in ids, f"{slug} links to {target}{anchor}: no such heading"


def test_a_guide_that_does_not_exist_is_a_404_in_the_layout(client, db):
    missing = client.get("/docs/no-such-guide/")
    assert missing.status_code == 404
    assert "no guide named" in missing.content.decode()
    assert client.get("/docs/..%2Fsettings/").status_code == 404


def test_markdown_cannot_add_html_or_styles():
    """Raw HTML stays text, and table alignment becomes a class (the CSP forbids style=)."""
    title, html = user_docs._render.__wrapped__(_doc("# T\n\n<script>x()</script>\n\n"
                                                     "| a | b |\n|---|--:|\n| 1 | 2 |\n"), 0)
    assert title == "T" and "<script>" not in html and "style=" not in html
    assert '<td class="text-end">2</td>' in html


def _doc(text: str):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "doc.md"
    path.write_text(text)
    return path
