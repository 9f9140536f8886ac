"""Real prose for bench/real_corpus.py: sentences and questions out of installed documentation.

Every source is a Debian package's documentation (installed with apt, no other download)
or a data set the repo already has. Each reader yields documents, a document being
(name, [paragraph, ...]); `sentences` splits paragraphs and keeps what reads as prose.
Questions come from the same sources' headings and one-line summaries, never from the
sentences themselves: FAQ headings (Python, Django, perlfaq), man and git NAME lines and
PostgreSQL reference summaries turned into "How do I ...?", package short descriptions
into "Is there a package for ...?".
"""

from __future__ import annotations

import gzip
import html
import json
import lzma
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Where the installed documentation is read from: "/" but for a tree in the same shapes
# (tests/bench/data/real_corpus, so the build runs in CI without the packages); set_root.
SYSTEM = Path("/")
DOC = Path("/usr/share/doc")


def set_root(root: Path) -> None:
    global SYSTEM, DOC
    SYSTEM = Path(root)
    DOC = system("/usr/share/doc")


def system(path: str) -> Path:
    """An absolute path of the machine's, under the root read from."""
    return SYSTEM / path.lstrip("/")
# The apt package each source needs (`apt-get install --no-install-recommends ...`).
PACKAGES = ("python3.11-doc manpages manpages-dev postgresql-doc-15 perl-doc git-doc "
            "python-django-doc bash-doc debian-reference-en fortunes sphinx-doc debian-handbook")

Document = tuple[str, list[str]]

_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Dr|St|No|Fig|approx|al|resp)\.$",
                            re.IGNORECASE)
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")
_CODE_CHARS = set("{}[]<>=;$\\|`#@~^*")


def split_sentences(paragraph: str) -> list[str]:
    paragraph = re.sub(r"\s+", " ", paragraph).strip()
    out: list[str] = []
    for piece in _SPLIT.split(paragraph):
        if out and _ABBREVIATIONS.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return [s.strip() for s in out if s.strip()]


def is_prose(sentence: str) -> bool:
    """A sentence a person wrote, not code, a table row, a list fragment or a heading."""
    if not 40 <= len(sentence) <= 300 or sentence[-1] not in ".!?":
        return False
    if not (sentence[0].isupper() or sentence[0] in "\"'“("):
        return False
    words = sentence.split()
    if not 6 <= len(words) <= 60 or "://" in sentence or "  " in sentence:
        return False
    letters = sum(c.isalpha() for c in sentence)
    if letters < 0.72 * len(sentence):
        return False
    if sum(c in _CODE_CHARS for c in sentence) > 2 or sentence.count("_") > 2:
        return False
    if sum(c.isupper() for c in sentence) > 0.25 * letters:
        return False
    # Mostly lowercase words: a title-cased line or a list of names is not a sentence.
    return sum(w[0].islower() for w in words) >= 0.5 * len(words)


def sentences(paragraphs: list[str]) -> Iterator[str]:
    for paragraph in paragraphs:
        for sentence in split_sentences(paragraph):
            if is_prose(sentence):
                yield sentence


SKIP_CLASSES = ("highlight", "sphinxsidebar", "navheader", "navfooter", "related", "footer",
                "toc", "refsynopsisdiv", "header", "admonition-title")


class _Html(HTMLParser):
    """Paragraph text and headings of a documentation page, without code, tables,
    navigation or sidebars."""

    BLOCKS = {"p", "li", "dd", "dt", "div", "br", "blockquote", "section", "ul", "ol", "dl"}
    SKIP = {"pre", "script", "style", "table", "nav", "code-block", "head", "title"}
    SKIP_CLASSES = SKIP_CLASSES

    def __init__(self, skip_classes: tuple[str, ...] = SKIP_CLASSES) -> None:
        super().__init__(convert_charrefs=True)
        self.skip_classes = skip_classes
        self.paragraphs: list[str] = []
        self.headings: list[str] = []
        self.buffer: list[str] = []
        self.heading: list[str] | None = None
        self.skipping: list[str] = []  # the tags whose end ends a skipped region

    def handle_starttag(self, tag, attrs):
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.append(tag)
            return
        classes = dict(attrs).get("class") or ""
        if tag in self.SKIP or (tag == "div" and any(c in classes for c in self.skip_classes)):
            self._flush()
            self.skipping.append(tag)
        elif tag in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            self._flush()
            self.heading = []
        elif tag in self.BLOCKS:
            self._flush()

    def handle_endtag(self, tag):
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.pop()
            return
        if self.heading is not None and tag in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            self.headings.append(re.sub(r"\s+", " ", "".join(self.heading)).strip(" ¶"))
            self.heading = None
        elif tag in self.BLOCKS:
            self._flush()

    def handle_data(self, data):
        if self.skipping:
            return
        (self.heading if self.heading is not None else self.buffer).append(data)

    def _flush(self) -> None:
        text = "".join(self.buffer).strip()
        if text:
            self.paragraphs.append(text)
        self.buffer = []


def read_html(path: Path, skip_classes: tuple[str, ...] | None = None
              ) -> tuple[list[str], list[str]]:
    parser = _Html(skip_classes or _Html.SKIP_CLASSES)
    parser.feed(path.read_text(errors="replace"))
    parser._flush()
    return parser.paragraphs, parser.headings


def html_documents(folder: Path, *, skip: tuple[str, ...] = (), pattern: str = "*.html",
                   skip_classes: tuple[str, ...] | None = None) -> Iterator[Document]:
    for path in sorted(folder.rglob(pattern)):
        relative = str(path.relative_to(folder))
        if any(part in relative for part in skip) or not path.is_file():
            continue
        paragraphs, _ = read_html(path, skip_classes)
        yield relative.removesuffix(pattern[1:]), paragraphs


def faq_questions(folder: Path) -> list[str]:
    """Headings that are questions, in a documentation's FAQ pages."""
    out = []
    for path in sorted(folder.glob("*.html")):
        out += [h for h in read_html(path)[1] if h.endswith("?") and len(h.split()) >= 4]
    return out


def text_documents(folder: Path) -> Iterator[Document]:
    """Plain-text and reStructuredText files (gzipped or not): paragraphs are blocks
    between blank lines; indented blocks (literal code), directives and underlines are
    dropped."""
    for path in sorted(folder.rglob("*")):
        name = path.name.removesuffix(".gz")
        if not path.is_file() or not name.endswith((".rst", ".txt")):
            continue
        try:
            raw = _read(path)
        except (OSError, EOFError):
            continue
        paragraphs = []
        for block in re.split(r"\n\s*\n", raw):
            lines = [line for line in block.splitlines()
                     if line.strip() and not re.fullmatch(r"\s*([=\-~^*#+.`:'\"])\1{2,}\s*",
                                                         line)]
            if not lines or lines[0][:1] in " \t" or lines[0].startswith(".."):
                continue
            paragraphs.append(" ".join(line.strip() for line in lines))
        yield str(path.relative_to(folder)).removesuffix(".gz"), paragraphs


def _read(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", errors="replace") as packed:
            return packed.read()
    return path.read_text(errors="replace")


# --- man pages (roff) ---------------------------------------------------------------

_ROFF_ESCAPES = [(re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)"), ""), (re.compile(r"\\\(em|\\\(en"), "-"),
                 (re.compile(r"\\\((?:lq|rq|dq)"), '"'), (re.compile(r"\\\((?:oq|cq)"), "'"),
                 (re.compile(r"\\[-e]"), lambda m: "-" if m.group() == "\\-" else "\\"),
                 (re.compile(r"\\[&|^%:/,]|\\s[-+]?\d"), ""), (re.compile(r"\\\*\(..|\\\*."), ""),
                 (re.compile(r"\\\(.."), ""), (re.compile(r"\\ "), " ")]
_FONT_MACROS = {".B", ".I", ".BR", ".RB", ".IR", ".RI", ".BI", ".IB", ".SM", ".SB"}


def _unroff(text: str) -> str:
    for pattern, replacement in _ROFF_ESCAPES:
        text = pattern.sub(replacement, text)
    return text


def read_man(path: Path) -> tuple[str, list[str]]:
    """(NAME line, paragraphs) of a man page; no-fill and example blocks are dropped."""
    raw = _read(path)
    paragraphs, current, name_lines = [], [], []
    section, nofill = "", False
    for line in raw.splitlines():
        if line.startswith((".\\\"", "'\\\"")):
            continue
        if line.startswith((".nf", ".EX")):
            nofill = True
        elif line.startswith((".fi", ".EE")):
            nofill = False
        if nofill:
            continue
        if line.startswith((".", "'")):
            macro, _, rest = line.partition(" ")
            if macro in {".SH", ".SS"}:
                if current:
                    paragraphs.append(" ".join(current))
                current, section = [], rest.strip('"').upper()
                continue
            if macro in _FONT_MACROS:
                words = [a or b for a, b in re.findall(r'"([^"]*)"|(\S+)', rest)]
                # .B and .I set their words apart; .BR and the like alternate fonts, joined.
                text = " ".join(words) if macro in {".B", ".I", ".SM", ".SB"} else "".join(words)
                (name_lines if section == "NAME" else current).append(_unroff(text))
                continue
            if current:
                paragraphs.append(" ".join(current))
            current = []
            continue
        (name_lines if section == "NAME" else current).append(_unroff(line))
    if current:
        paragraphs.append(" ".join(current))
    return " ".join(name_lines).strip(), paragraphs


def man_pages(sections: str = "12345678") -> Iterator[tuple[str, str, list[str]]]:
    """(page, NAME line, paragraphs) of the English man pages, each page once."""
    seen = set()
    for section in sections:
        for path in sorted(system(f"/usr/share/man/man{section}").glob("*")):
            if path.is_symlink() or path.name in seen:
                continue
            seen.add(path.name)
            try:
                name, paragraphs = read_man(path)
            except (OSError, EOFError):
                continue
            if paragraphs and not paragraphs[0].startswith(".so"):
                yield path.name.removesuffix(".gz"), name, paragraphs


NOT_VERBS = {"a", "an", "the", "this", "that", "how", "what", "alias", "bash", "perl",
             "interface", "library", "backend", "frontend", "wrapper", "utility", "tool",
             "program", "daemon", "command", "script", "helper", "module", "plugin", "driver",
             "server", "client", "simple", "small", "common", "generic", "main", "new", "old",
             "x", "gnu", "system", "file", "user", "data", "network"}


def how_do_i(purpose: str, suffix: str = "") -> str | None:
    """'list directory contents' -> 'How do I list directory contents?': a NAME line or
    reference summary turned into a question, when it starts with a verb."""
    purpose = re.sub(r"\s+", " ", purpose).strip().rstrip(".")
    if purpose[:1].isupper() and purpose[1:2].islower():  # "Reapply commits ..."
        purpose = purpose[0].lower() + purpose[1:]
    words = purpose.split()
    if len(words) < 3 or not words[0].isalpha() or not words[0].islower():
        return None
    # A base-form verb: nouns and third-person verbs ("lists", "the") are left out.
    first = words[0]
    if first.endswith(("ing", "ous", "ful", "less", "ary", "ic")) or (
            first.endswith("s") and not first.endswith("ss")) or (
            first.endswith("ed") and not first.endswith("eed")) or first in NOT_VERBS:
        return None
    return f"How do I {purpose}{suffix}?"


def name_purpose(name_line: str) -> str:
    parts = re.split(r"\s+(?:\\?-|\u2014|\u2013)\s+", name_line, maxsplit=1)
    return parts[1] if len(parts) == 2 else ""


# --- perl POD -----------------------------------------------------------------------

def read_pod(path: Path) -> tuple[list[str], list[str]]:
    """(prose paragraphs, =head2 headings) of a POD file; verbatim (code) paragraphs are
    dropped and formatting codes unwrapped."""
    paragraphs, headings = [], []
    for block in re.split(r"\n\s*\n", path.read_text(errors="replace")):
        if not block.strip() or block[0] in " \t":
            continue
        text = _unpod(block)
        if block.startswith("=head"):
            headings.append(text.split(None, 1)[1] if " " in text else "")
        elif not block.startswith("="):
            paragraphs.append(text)
    return paragraphs, headings


def _unpod(text: str) -> str:
    text = re.sub(r"E<(\w+)>", lambda m: {"lt": "<", "gt": ">", "verbar": "|", "sol": "/"}
                  .get(m.group(1), ""), text)
    for _ in range(3):
        text = re.sub(r"[A-Z]<<+\s(.*?)\s>>+", r"\1", text)
        text = re.sub(r"L<(?:[^|<>]*\|)?([^<>]*?)>", r"\1", text)
        text = re.sub(r"[A-Z]<([^<>]*)>", r"\1", text)
    return text


def perl_documents() -> Iterator[tuple[str, list[str], list[str]]]:
    for path in sorted(system("/usr/share/perl").glob("5.*/pod/*.pod")):
        paragraphs, headings = read_pod(path)
        yield path.stem, paragraphs, headings


# --- Debian package descriptions (apt's Translation-en) -------------------------------

def debian_descriptions() -> Iterator[tuple[str, str, list[str]]]:
    """(package, short description, long description's paragraphs) from the
    Translation-en lists `apt-get update -o Acquire::Languages=en` leaves."""
    import subprocess

    seen = set()
    for path in sorted(system("/var/lib/apt/lists").glob("*_main_i18n_Translation-en*")):
        if path.suffix == ".lz4":
            text = subprocess.run(["lz4cat", str(path)], capture_output=True, check=True,
                                  text=True).stdout
        elif path.suffix == ".xz":
            with lzma.open(path, "rt") as packed:
                text = packed.read()
        else:
            text = path.read_text()
        for record in text.split("\n\n"):
            package = re.search(r"^Package: (.+)$", record, re.M)
            description = re.search(r"^Description-en: (.*)\n((?: .*\n?)*)", record, re.M)
            if not package or not description or package.group(1) in seen:
                continue
            seen.add(package.group(1))
            body = [line[1:] for line in description.group(2).splitlines()]
            paragraphs = [p.replace("\n", " ") for p in "\n".join(body).split("\n.\n")]
            # A list item ("* foo") is its own paragraph.
            split = [item for p in paragraphs for item in re.split(r"\s[*-]\s", " " + p)]
            yield package.group(1), description.group(1).strip(), split


def package_question(short: str) -> str | None:
    short = short.strip().rstrip(".")
    if len(short.split()) < 3 or any(c in short for c in "()[]/"):
        return None
    return f"Is there a package for {short[0].lower() + short[1:]}?"


# --- repo data ------------------------------------------------------------------------

def locomo() -> Iterator[tuple[str, list[str], list[str]]]:
    """(conversation, facts as the LoCoMo protocol writes them, questions of categories
    1-4) for each conversation of ../shared/data/locomo."""
    path = ROOT.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
    if Path("/") != SYSTEM:
        path = SYSTEM / "locomo_dev.json"
    elif not path.exists():
        path = Path("/work/shared/data/locomo/locomo_dev.json")
    for sample in json.loads(path.read_text()):
        conversation = sample["conversation"]
        facts = []
        for key in sorted((k for k in conversation if re.fullmatch(r"session_\d+", k)),
                          key=lambda k: int(k.split("_")[1])):
            date = conversation.get(f"{key}_date_time", "")
            for turn in conversation[key]:
                fact = f"{turn['speaker']} on {date}: {turn['text']}"
                if turn.get("blip_caption"):
                    fact += f" [shares a photo: {turn['blip_caption']}]"
                facts.append(fact)
        questions = [str(q["question"]) for q in sample["qa"] if q.get("category") in (1, 2, 3, 4)]
        yield sample["sample_id"], facts, questions


def repo_sets() -> Iterator[tuple[str, list[str], list[str]]]:
    """(set, fact sentences, questions) of bench/data's runbooks and notes sets."""
    # Under another root, its own (the whole sets are 1,600 sentences to embed).
    data = ROOT / "bench" / "data" if Path("/") == SYSTEM else SYSTEM / "bench-data"
    for name in ("runbooks", "notes", "notes-team"):
        folder = data / name
        if not folder.is_dir():
            continue
        rows = [json.loads(line) for f in ("facts.jsonl", "notes.jsonl")
                if (folder / f).exists() for line in (folder / f).read_text().splitlines()
                if line.strip()]
        texts = []
        for row in rows:
            if "fact" in row:
                texts.append(row["fact"])
            else:
                texts += [row[k] for k in ("title", "what", "why", "impact", "details")
                          if isinstance(row.get(k), str) and row.get(k)]
        questions = [json.loads(line)["question"] for line in
                     (folder / "questions.jsonl").read_text().splitlines() if line.strip()]
        yield name, texts, questions


def fortunes() -> Iterator[Document]:
    for path in sorted(system("/usr/share/games/fortunes").glob("*")):
        if path.suffix or path.is_symlink() or not path.is_file():
            continue
        cookies = path.read_text(errors="replace").split("\n%\n")
        # One document per 200 cookies: a file is one topic (literature, science...).
        for start in range(0, len(cookies), 200):
            part = [re.sub(r"\s+", " ", c.split("\t\t--")[0].split("    -- ")[0])
                    for c in cookies[start:start + 200]]
            yield f"{path.name}/{start // 200}", part


def unescape(text: str) -> str:
    return html.unescape(text)
