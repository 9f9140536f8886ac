"""The sources of bench/real_corpus.py, in the order they claim a repeated sentence.

Each reader returns ([(source, document, sentences)], {source: questions}); its result
is cached, so a corpus rebuilt with one more source reads only that one.
"""

from __future__ import annotations

import re
from collections import defaultdict

from bench import real_text

Read = tuple[list[tuple[str, str, list[str]]], dict[str, list[str]]]


def repo_sets() -> Read:
    """LoCoMo's conversations and bench/data's sets: facts whole (a turn, a runbook line)."""
    docs, questions = [], defaultdict(list)
    for name, facts, asked in real_text.locomo():
        docs.append((f"locomo:{name}", name, facts))
        questions[f"locomo:{name}"] += asked
    for name, texts, asked in real_text.repo_sets():
        docs.append((name, name, texts))
        questions[name] += asked
    return docs, questions


def packages() -> Read:
    docs, questions = [], defaultdict(list)
    for package, short, paragraphs in real_text.debian_descriptions():
        docs.append(("packages", package, list(real_text.sentences(paragraphs))))
        question = real_text.package_question(short)
        if question:
            questions["packages"].append(question)
    return docs, questions


def postgres() -> Read:
    folder = real_text.DOC / "postgresql-doc-15/html"
    docs, questions = _html("postgres", folder), defaultdict(list)
    for path in sorted(folder.glob("*.html")):
        text = path.read_text(errors="replace")
        purpose = re.search(r'<div class="refnamediv">.*?<p>(.*?)</p>', text, re.S)
        if purpose:
            q = real_text.how_do_i(real_text.name_purpose(
                re.sub(r"<[^>]+>", "", real_text.unescape(purpose.group(1)))), " in PostgreSQL")
            if q:
                questions["postgres"].append(q)
    return docs, questions


def git() -> Read:
    folder = real_text.DOC / "git-doc"
    docs, questions = _html("git", folder), defaultdict(list)
    for path in sorted(folder.glob("*.html")):
        name = re.search(r"<h2>NAME</h2>\s*<div[^>]*>\s*<p>(.*?)</p>",
                         path.read_text(errors="replace"), re.S)
        if name:
            q = real_text.how_do_i(real_text.name_purpose(
                real_text.unescape(re.sub(r"\s+", " ", name.group(1)))), " with git")
            if q:
                questions["git"].append(q)
    return docs, questions


def _html(source: str, folder, skip: tuple[str, ...] = (), pattern: str = "*.html",
          skip_classes: tuple[str, ...] | None = None) -> list:
    return [(source, document, list(real_text.sentences(paragraphs))) for document, paragraphs
            in real_text.html_documents(folder, skip=skip, pattern=pattern,
                                        skip_classes=skip_classes)]


def html(source: str, folder: str, skip: tuple[str, ...] = (), faq: str | None = None,
         pattern: str = "*.html", skip_classes: tuple[str, ...] | None = None):
    def read() -> Read:
        questions = {source: real_text.faq_questions(real_text.DOC / faq)} if faq else {}
        # An absolute folder (not under /usr/share/doc) is under the root read from too.
        where = real_text.system(folder) if folder.startswith("/") else real_text.DOC / folder
        return _html(source, where, skip, pattern, skip_classes), questions
    return read


def kernel() -> Read:
    return [("kernel", document, list(real_text.sentences(paragraphs))) for document, paragraphs
            in real_text.text_documents(real_text.DOC / "linux-doc-6.1/Documentation")], {}


def perl() -> Read:
    docs, questions = [], defaultdict(list)
    for name, paragraphs, headings in real_text.perl_documents():
        docs.append(("perl", name, list(real_text.sentences(paragraphs))))
        if name.startswith("perlfaq"):
            questions["perl"] += [h for h in headings if h.endswith("?")]
    return docs, questions


def man() -> Read:
    docs, questions = [], defaultdict(list)
    for page, name, paragraphs in real_text.man_pages():
        docs.append(("man", page, list(real_text.sentences(paragraphs))))
        q = real_text.how_do_i(real_text.name_purpose(name))
        if q:
            questions["man"].append(q)
    return docs, questions


def fortunes() -> Read:
    return [("fortunes", document, list(real_text.sentences(cookies)))
            for document, cookies in real_text.fortunes()], {}


SKIP_SPHINX = ("genindex", "py-modindex", "search", "_modules")
SOURCES = [
    ("repo", repo_sets),
    ("packages", packages),
    ("postgres", postgres),
    ("git", git),
    ("python", html("python", "python3.11-doc/html", SKIP_SPHINX,
                    faq="python3.11-doc/html/faq")),
    ("django", html("django", "python-django-doc/html", (*SKIP_SPHINX, "releases/"),
                    faq="python-django-doc/html/faq")),
    ("sphinx", html("sphinx", "sphinx-doc/html", (*SKIP_SPHINX, "changes"))),
    ("handbook", html("handbook", "debian-handbook/html/en-US")),
    ("bash", html("bash", "bash-doc")),
    ("java", html("java", "openjdk-17-doc/api", ("index-files", "-tree", "allclasses",
                                                 "package-summary", "serialized-form"))),
    ("erlang", html("erlang", "erlang-doc")),
    ("sqlalchemy", html("sqlalchemy", "python-sqlalchemy-doc/html", (*SKIP_SPHINX, "changelog"),
                        faq="python-sqlalchemy-doc/html/faq")),
    ("node", html("node", "nodejs/api")),
    ("rust", html("rust", "rust-doc/html", ("search-index", "/src/", "all.html"))),
    ("scipy", html("scipy", "python-scipy-doc/html", SKIP_SPHINX)),
    ("pandas", html("pandas", "python-pandas-doc/html", (*SKIP_SPHINX, "whatsnew"))),
    ("kernel", kernel),
    ("perl", perl),
    ("man", man),
    ("fortunes", fortunes),
    # Added after the 100k table was embedded: these join the big memory past its first
    # 56,000 facts only (real_corpus.EXTRA), so the 100k table stays as it was.
    # Qt's page header div is never closed: skipping it would skip the whole page.
    ("qt", html("qt", "/usr/share/qt5/doc", skip_classes=tuple(
        c for c in real_text.SKIP_CLASSES if c != "header"))),
    ("boost", html("boost", "libboost1.81-doc")),
    ("llvm", html("llvm", "llvm-15-doc/html", SKIP_SPHINX)),
    ("gimp", html("gimp", "/usr/share/gimp/2.0/help/en")),
    ("sklearn", html("sklearn", "python-sklearn-doc", SKIP_SPHINX)),
    ("astropy", html("astropy", "python-astropy-doc/html", SKIP_SPHINX)),
    ("grass", html("grass", "grass-doc/html")),
    ("sqlite", html("sqlite", "sqlite3")),
    ("ghc", html("ghc", "ghc-doc/html", ("doc-index", "src/"))),
    ("wireshark", html("wireshark", "wireshark")),
    ("biopython", html("biopython", "python-biopython-doc/Doc")),
    ("kicad", html("kicad", "kicad/help/en")),
    ("apache", html("apache", "apache2-doc/manual/en")),
    ("cmake", html("cmake", "cmake-doc/html", SKIP_SPHINX)),
    ("maxima", html("maxima", "maxima-doc")),
    ("skimage", html("skimage", "python-skimage-doc", SKIP_SPHINX)),
    ("statsmodels", html("statsmodels", "python-statsmodels-doc/html", SKIP_SPHINX)),
    ("sympy", html("sympy", "python-sympy-doc/html", SKIP_SPHINX)),
    ("racket", html("racket", "racket")),
    ("octave", html("octave", "octave")),
    ("gnome", html("gnome", "/usr/share/help/C", pattern="*.page")),
]
