"""Builds bench/data/pyfaq/ from the Python FAQ that Debian's python3.11-doc installs (issue 42).

    apt-get install -y python3.11-doc
    .venv/bin/python bench/pyfaq_dataset.py [--html DIR] [--out DIR] [--pages NAME ...]
                                            [--no-distractors]

A non-dialogue retrieval set in bench/data/runbooks's format, so bench/runbooks_quality.py
(--data bench/data/pyfaq) loads and asks it unchanged. Nothing in it is written by us: the
questions are the FAQ's own headings, the facts its answers' text, the evidence a fixed
rule (the README says which), so no part of it can be tuned to a ranking.

- One episode per FAQ entry: a section of a FAQ page with text of its own under a
  heading. Its facts are that text in order: each paragraph; a list as its items joined
  by "; "; a code block of at most CODE_CHARS characters (longer ones are left out); a
  note or see-also box as its title and text; a paragraph that does not end a sentence
  (it leads into a code sample or a list) joined with the block after it, and one
  starting in lower case after a code sample joined with it; whitespace collapsed;
  anything over FACT_CHARS split at sentence boundaries (then at semicolons, commas,
  spaces) into pieces of at most FACT_CHARS.
- An entry is dropped when its answer is empty, or is only a pointer elsewhere: no text
  outside links, or a single sentence beginning "See " ("See the next question.").
- The heading is the question; it appears in no fact. Entity names are opaque ids
  (`pyfaq-017`, `pyfaq-p2`), so neither the question nor its page reaches a fact through
  a name. The question's kind is its page (general, programming, ...).
- Evidence: the answer's first fact, plus its second when the first is shorter than
  EVIDENCE_SHORT characters (a lead-in such as "Yes." answers nothing by itself).
- Distractors (no questions): every section with text of its own of the HOWTO pages
  (howto/*.html), made into episodes the same way, so the FAQ's answers compete with
  neighbouring material on the same subjects.

Running it again on the same package writes byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.runbooks_dataset import paraphrase_share, problems, shared_words

HTML = Path("/usr/share/doc/python3.11/html")
OUT = Path(__file__).resolve().parent / "data" / "pyfaq"
PAGES = ("general", "programming", "design", "library", "extending", "windows", "gui",
         "installed")
FACT_CHARS = 600
CODE_CHARS = 400
EVIDENCE_SHORT = 150
# Elements with no end tag in HTML: they never hold children.
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})
# Sentence ends, except after the abbreviations the docs use mid-sentence.
SENTENCE_END = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bcf\.)(?<!\bvs\.)(?<!\betc\.)"
                          r"(?<=[.!?])\s+(?=[\"\u201c\u2018'(\[]?[A-Z0-9])")
CLAUSE_END = (re.compile(r"(?<=;)\s+"), re.compile(r"(?<=,)\s+"), re.compile(r"\s+"))


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]


class TreeBuilder(HTMLParser):
    """The page as a tree of Nodes (Sphinx writes well-formed HTML, so a stack will do)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("document")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if any(node.tag == tag for node in self.stack[1:]):
            while self.stack.pop().tag != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


def find(node: Node, test) -> Node | None:
    for child in node.elements():
        if test(child):
            return child
        found = find(child, test)
        if found is not None:
            return found
    return None


def raw_text(node: Node | str, *, outside_links: bool = False) -> str:
    """The text under a node; the heading's permalink sign never counts."""
    if isinstance(node, str):
        return node
    if "headerlink" in node.classes or (outside_links and node.tag == "a"):
        return ""
    return "".join(raw_text(c, outside_links=outside_links) for c in node.children)


def collapse(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Block:
    text: str
    kind: str = "prose"  # or "list" (lists, tables, definitions), "code"
    # Whether any of it lies outside a link (an answer made only of links is a pointer).
    own_words: bool = True


def blocks_of(section: Node) -> list[Block]:
    """A section's own content in order, nested sections left to themselves."""
    found: list[Block] = []
    for child in section.elements():
        if child.tag in ("section", "nav", "span") or re.fullmatch(r"h[1-6]", child.tag):
            continue
        found.extend(block(child))
    return found


def block(node: Node) -> list[Block]:
    if node.tag in ("ul", "ol"):
        items = [collapse(raw_text(li)) for li in node.elements() if li.tag == "li"]
        words = any(re.search(r"\w", raw_text(li, outside_links=True))
                    for li in node.elements())
        return [Block("; ".join(i.rstrip(";") for i in items if i), "list", own_words=words)]
    if node.tag in ("blockquote", "div") and not node.classes & {"admonition", "highlight"} \
            and not any(c.startswith("highlight-") for c in node.classes):
        return [b for child in node.elements() for b in block(child)]
    if "admonition" in node.classes:
        parts = node.elements()
        title = collapse(raw_text(parts[0])) if parts else ""
        body = [b for child in parts[1:] for b in block(child)]
        text = " ".join(b.text for b in body)
        return [Block(f"{title}: {text}" if title else text,
                      own_words=any(b.own_words for b in body))]
    if "highlight" in node.classes or any(c.startswith("highlight-") for c in node.classes):
        pre = find(node, lambda n: n.tag == "pre")
        return [Block(collapse(raw_text(pre)), "code")] if pre is not None else []
    if node.tag == "dl":
        pairs, term = [], ""
        for child in node.elements():
            if child.tag == "dt":
                term = collapse(raw_text(child))
            elif child.tag == "dd":
                pairs.append(f"{term}: {collapse(raw_text(child))}" if term else
                             collapse(raw_text(child)))
        return [Block("; ".join(pairs), "list")] if pairs else []
    if node.tag == "table":
        rows = [" | ".join(collapse(raw_text(cell)) for cell in row.elements())
                for row in walk(node) if row.tag == "tr"]
        return [Block("; ".join(rows), "list")] if rows else []
    text = collapse(raw_text(node))
    if not text:
        return []
    return [Block(text, own_words=bool(re.search(r"\w", raw_text(node, outside_links=True))))]


def walk(node: Node):
    for child in node.elements():
        yield child
        yield from walk(child)


def long_code(b: Block) -> bool:
    return b.kind == "code" and len(b.text) > CODE_CHARS


def ends_sentence(text: str) -> bool:
    return text.endswith((".", "!", "?", ".)", ".”", "?)")) and not text.endswith(
        ("e.g.", "i.e."))


def joined(blocks: list[Block]) -> list[str]:
    """Texts of the blocks kept, long code left out. The docs run a sentence across a
    code sample ("Users are often surprised by results like this:", the sample, "and think
    it is a bug"), so a paragraph that does not end a sentence is joined with the block
    after it, and a paragraph starting in lower case with the code before it."""
    texts: list[str] = []
    open_end = after_code = False
    for b in blocks:
        if long_code(b):
            open_end, after_code = False, True
            continue
        if not b.text:
            continue
        continues = after_code and b.kind == "prose" and b.text[0].islower()
        if texts and (open_end or continues):
            texts[-1] = f"{texts[-1]} {b.text}"
        else:
            texts.append(b.text)
        open_end = b.kind == "prose" and not ends_sentence(b.text)
        after_code = b.kind == "code"
    return texts


def split(text: str, limit: int = FACT_CHARS) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at sentence ends where possible."""
    if len(text) <= limit:
        return [text]
    units = [text]
    for boundary in (SENTENCE_END, *CLAUSE_END):
        units = [piece for unit in units
                 for piece in (boundary.split(unit) if len(unit) > limit else [unit])]
    pieces: list[str] = []
    for unit in units:
        if pieces and len(pieces[-1]) + 1 + len(unit) <= limit:
            pieces[-1] = f"{pieces[-1]} {unit}"
        else:
            pieces.append(unit)
    return pieces


@dataclass
class Entry:
    page: str
    anchor: str
    heading: str
    facts: list[str]
    pointer_only: bool
    long_code: int


def entries(page: str, html: str) -> list[Entry]:
    """Every section of a page under its title that has content of its own or no
    sections inside (an entry whose answer is empty), in document order."""
    body = find(parse(html), lambda n: n.attrs.get("role") == "main")
    if body is None:
        raise ValueError(f"{page}: no <div role=main> (not a Sphinx page?)")
    found: list[Entry] = []
    for section in (n for n in walk(body) if n.tag == "section"):
        heading = next((c for c in section.elements() if re.fullmatch(r"h[1-6]", c.tag)), None)
        if heading is None or heading.tag == "h1":
            continue
        blocks = blocks_of(section)
        if not blocks and any(c.tag == "section" for c in section.elements()):
            continue  # a heading over entries, e.g. "Core Language"
        found.append(Entry(page, section.attrs.get("id", ""), collapse(raw_text(heading)),
                           [piece for text in joined(blocks) for piece in split(text)],
                           pointer_only=not any(b.own_words for b in blocks),
                           long_code=sum(1 for b in blocks if long_code(b))))
    return found


def is_pointer(entry: Entry) -> bool:
    """An answer that only sends the reader elsewhere: no text outside links, or a single
    sentence beginning "See " ("See the next question.", "See the Unicode HOWTO.")."""
    if entry.pointer_only:
        return True
    return (len(entry.facts) == 1 and entry.facts[0].startswith("See ")
            and len(SENTENCE_END.split(entry.facts[0])) == 1)


def episode(entry: Entry, episode_id: str, kind: str, name: str, page_name: str,
            folder: str) -> tuple[dict, list[dict]]:
    """One write_episode's worth: the entry as an opaque entity, its page as another, each
    piece of the answer a fact between them."""
    record = {"id": episode_id, "kind": kind, "source": f"{folder}/{entry.page}.html#"
              f"{entry.anchor}", "entities": [{"name": name, "type": f"{folder} entry"},
                                              {"name": page_name, "type": f"{folder} page"}]}
    facts = [{"id": f"{episode_id}-{n:02d}", "episode": episode_id, "source": name,
              "target": page_name, "relation_type": f"part {n:02d}", "fact": text,
              "confidence": "extracted"}
             for n, text in enumerate(entry.facts, start=1)]
    return record, facts


def evidence(facts: list[dict]) -> list[str]:
    chosen = facts[:1]
    if len(facts) > 1 and len(facts[0]["fact"]) < EVIDENCE_SHORT:
        chosen = facts[:2]
    return [fact["id"] for fact in chosen]


@dataclass
class Built:
    episodes: list[dict] = field(default_factory=list)
    facts: list[dict] = field(default_factory=list)
    questions: list[dict] = field(default_factory=list)
    # Per FAQ page: entries found, dropped as empty, dropped as pointers.
    found: dict[str, int] = field(default_factory=dict)
    empty: dict[str, list[str]] = field(default_factory=dict)
    pointers: dict[str, list[str]] = field(default_factory=dict)
    long_code: int = 0


def build(html: Path = HTML, pages: tuple[str, ...] = PAGES, distractors: bool = True) -> Built:
    built = Built()
    for number, page in enumerate(pages, start=1):
        found = entries(page, (html / "faq" / f"{page}.html").read_text(encoding="utf-8"))
        built.found[page] = len(found)
        built.empty[page] = [e.heading for e in found if not e.facts]
        built.pointers[page] = [e.heading for e in found if e.facts and is_pointer(e)]
        kept = [e for e in found if e.facts and not is_pointer(e)]
        built.long_code += sum(e.long_code for e in kept)
        for n, entry in enumerate(kept, start=1):
            folded = entry.heading.casefold()
            if any(folded in text.casefold() for text in entry.facts):
                raise ValueError(f"{page}: a fact repeats its question {entry.heading!r}")
            record, facts = episode(entry, f"faq-{page}-{n:03d}", page,
                                    f"pyfaq-{len(built.questions) + 1:03d}", f"pyfaq-p{number}",
                                    "faq")
            built.episodes.append(record)
            built.facts.extend(facts)
            built.questions.append({"id": f"q{len(built.questions) + 1:03d}",
                                    "question": entry.heading, "evidence": evidence(facts),
                                    "kind": page})
    if distractors:
        howtos = sorted((html / "howto").glob("*.html"))
        count = 0
        for number, path in enumerate(howtos, start=1):
            found = [e for e in entries(path.stem, path.read_text(encoding="utf-8")) if e.facts]
            for n, entry in enumerate(found, start=1):
                count += 1
                record, facts = episode(entry, f"howto-{path.stem}-{n:03d}", "howto",
                                        f"pyhowto-{count:04d}", f"pyhowto-p{number}", "howto")
                built.episodes.append(record)
                built.facts.extend(facts)
    return built


def write(built: Built, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("episodes.jsonl", built.episodes), ("facts.jsonl", built.facts),
                       ("questions.jsonl", built.questions)):
        # ASCII escapes: the files read the same under any locale's default encoding.
        (out / name).write_text("".join(json.dumps(row) + "\n" for row in rows),
                                encoding="ascii")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=HTML,
                        help="the installed HTML documentation (default Debian's python3.11-doc)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--pages", nargs="+", choices=PAGES, default=list(PAGES),
                        help="FAQ pages to read (default all)")
    parser.add_argument("--no-distractors", action="store_true",
                        help="leave out the HOWTO pages' sections")
    args = parser.parse_args()
    if not (args.html / "faq").is_dir():
        sys.exit(f"{args.html}/faq not found: apt-get install -y python3.11-doc")

    built = build(args.html, tuple(args.pages), distractors=not args.no_distractors)
    write(built, args.out)
    faq_facts = {f["episode"] for f in built.facts if f["episode"].startswith("faq-")}
    print(f"{len(built.episodes)} episodes ({len(faq_facts)} FAQ entries), "
          f"{len(built.facts)} facts, {len(built.questions)} questions -> {args.out}")
    print(f"{'page':<12} {'entries':>7} {'empty':>5} {'pointer':>7} {'questions':>9} "
          f"{'facts':>5} {'evidence':>8} {'no shared word':>14}")
    by_id = {f["id"]: f for f in built.facts}
    for page in args.pages:
        ids = {e["id"] for e in built.episodes if e["kind"] == page}
        asked = [q for q in built.questions if q["kind"] == page]
        disjoint = sum(1 for q in asked if not shared_words(q, by_id))
        print(f"{page:<12} {built.found[page]:>7} {len(built.empty[page]):>5} "
              f"{len(built.pointers[page]):>7} {len(ids):>9} "
              f"{sum(1 for f in built.facts if f['episode'] in ids):>5} "
              f"{sum(len(q['evidence']) for q in asked):>8} {disjoint:>14}")
    howto = [e for e in built.episodes if e["kind"] == "howto"]
    print(f"{'howto':<12} {len(howto):>7} sections as distractors, "
          f"{sum(1 for f in built.facts if f['episode'].startswith('howto-'))} facts")
    print(f"code blocks over {CODE_CHARS} characters left out of the FAQ's answers: "
          f"{built.long_code}")
    for page in args.pages:
        for heading in built.pointers[page]:
            print(f"dropped as a pointer ({page}): {heading}")
        for heading in built.empty[page]:
            print(f"dropped as empty ({page}): {heading}")
    wrong = problems(built.episodes, built.facts, built.questions)
    for line in wrong:
        print(f"PROBLEM {line}")
    print("questions sharing no content word with their evidence: "
          f"{paraphrase_share(built.facts, built.questions):.1%}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
