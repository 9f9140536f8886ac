"""The docs list the tools tools/list answers, generated from the registry so they cannot
drift (tools/docs.py), and no doc counts the tools anywhere else."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from echomem import doc_regions
from tools import docs as tool_docs
from tools.registry import TOOLS

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NUMBER = (r"\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
          r"fourteen|fifteen|sixteen|twenty")
# "N tools", "N memory tools", ...; a quoted title (the guide's "The five tools") is a name.
COUNT = re.compile(rf"(?<![\"“])(?<![\"“]The )\b({NUMBER})\s+"
                   r"((memory|graph|note|mcp|echo memory)\s+)?tools\b", re.I)


def without_generated(text: str) -> str:
    for region in tool_docs.REGIONS:
        text = region.pattern().sub("", text)
    return text


def test_the_docs_list_exactly_the_registry_s_tools():
    for region in tool_docs.REGIONS:
        current = region.doc.read_text(encoding="utf-8")
        assert doc_regions.render(region, current) == current, (
            f"{region.doc.name}: run `echo-memory manage tool_docs --write`")
        listed = re.findall(r"^\| `(?:POST /api/v1/tools/)?([a-z_]+)`",
                            region.pattern().search(current).group(), re.M)
        assert listed == list(TOOLS)
    assert f"answers these {len(TOOLS)} tools" in tool_docs.REGIONS[0].doc.read_text()
    call_command("tool_docs", "--check")


def test_every_tool_says_what_it_does_and_what_it_costs():
    for tool in TOOLS.values():
        assert tool_docs.what_it_does(tool).endswith("."), tool.name
        assert tool_docs.cost(tool), f"{tool.name}'s description names no cost"


def test_a_tool_added_to_the_registry_fails_the_check_until_the_docs_are_written(
        tmp_path, monkeypatch):
    copies = []
    for region in tool_docs.REGIONS:
        copy = tmp_path / region.doc.name
        copy.write_text(region.doc.read_text(encoding="utf-8"), encoding="utf-8")
        copies.append(dataclasses.replace(region, doc=copy))
    monkeypatch.setattr(tool_docs, "REGIONS", tuple(copies))
    monkeypatch.setitem(TOOLS, "memory_archive",
                        dataclasses.replace(TOOLS["forget"], name="memory_archive"))
    assert tool_docs.stale() == copies
    with pytest.raises(CommandError, match="tool_docs --write"):
        call_command("tool_docs", "--check")
    call_command("tool_docs", "--write")
    assert tool_docs.stale() == []
    assert "| `memory_archive` |" in copies[0].doc.read_text()
    assert "`POST /api/v1/tools/memory_archive`" in copies[1].doc.read_text()
    assert f"answers these {len(TOOLS)} tools" in copies[0].doc.read_text()


def test_a_doc_without_its_markers_is_refused():
    with pytest.raises(doc_regions.MarkersMissing, match="no tool list region"):
        doc_regions.render(tool_docs.REGIONS[0], "# Connecting agents\n")


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_no_doc_counts_the_tools_outside_the_generated_list(doc):
    counted = [match.group() for match in COUNT.finditer(
        without_generated(doc.read_text(encoding="utf-8")))]
    assert counted == [], f"{doc.name} counts tools by hand; point at docs/agents.md instead"


def test_the_note_tools_table_names_every_note_tool():
    text = (ROOT / "docs" / "coding-agents.md").read_text(encoding="utf-8")
    table = text[text.index("## The note tools"):]
    rows = re.findall(r"^\| `([a-z_]+)` \|", table, re.M)
    note_tools = [name for name in TOOLS if name.startswith("memory_")] + ["forget"]
    assert sorted(rows) == sorted(note_tools)
    assert all(name in TOOLS for name in rows)
