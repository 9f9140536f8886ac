"""trace_cause's chains as a picture: entities in columns by distance from the subject
(causes to the left, effects to the right), arrows from cause to effect.

Only coordinates are computed here; the template draws the SVG, so every label is
escaped by Django like any other text on the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NODE_WIDTH = 190
NODE_HEIGHT = 46
COLUMN_GAP = 110
ROW_GAP = 26
PADDING = 16
LABEL_CHARS = 24


@dataclass
class Node:
    name: str
    column: int
    row: int = 0
    anchor: bool = False
    x: int = 0
    y: int = 0

    @property
    def label(self) -> str:
        return self.name if len(self.name) <= LABEL_CHARS else self.name[:LABEL_CHARS - 1] + "…"

    @property
    def text_x(self) -> int:
        return self.x + NODE_WIDTH // 2

    @property
    def text_y(self) -> int:
        return self.y + NODE_HEIGHT // 2 + 5


@dataclass
class Arrow:
    cause: Node
    effect: Node
    relation: str
    fact: str
    x1: int = 0
    y1: int = 0
    x2: int = 0
    y2: int = 0

    @property
    def label_x(self) -> int:
        return (self.x1 + self.x2) // 2

    @property
    def label_y(self) -> int:
        return (self.y1 + self.y2) // 2 - 6


@dataclass
class Diagram:
    nodes: list[Node] = field(default_factory=list)
    arrows: list[Arrow] = field(default_factory=list)
    width: int = 0
    height: int = 0
    node_width: int = NODE_WIDTH
    node_height: int = NODE_HEIGHT


def diagram(reply: dict[str, Any]) -> Diagram:
    """Lay out a trace_cause reply; a node keeps the column of its nearest appearance."""
    nodes: dict[str, Node] = {a["name"]: Node(a["name"], 0, anchor=True)
                              for a in reply["anchors"]}
    links: dict[str, tuple[str, str, dict[str, Any]]] = {}
    hops = max((len(chain) for chain in reply["causes"] + reply["effects"]), default=0)
    for hop in range(hops):  # nearest links first, so each node sits where it is closest
        for chains, sign in ((reply["causes"], -1), (reply["effects"], 1)):
            for chain in chains:
                if hop < len(chain):
                    link = chain[hop]
                    far = link["cause"] if sign < 0 else link["effect"]
                    nodes.setdefault(far, Node(far, sign * (hop + 1)))
                    links.setdefault(link["fact_id"], (link["cause"], link["effect"], link))
    for name in (n for cause, effect, _ in links.values() for n in (cause, effect)):
        nodes.setdefault(name, Node(name, 0))
    leftmost = min((n.column for n in nodes.values()), default=0)
    rows: dict[int, int] = {}
    for node in nodes.values():
        node.row = rows.get(node.column, 0)
        rows[node.column] = node.row + 1
        node.x = PADDING + (node.column - leftmost) * (NODE_WIDTH + COLUMN_GAP)
        node.y = PADDING + node.row * (NODE_HEIGHT + ROW_GAP)
    arrows = [_arrow(nodes[cause], nodes[effect], link)
              for cause, effect, link in links.values()]
    columns = max((n.column for n in nodes.values()), default=0) - leftmost + 1
    return Diagram(list(nodes.values()), arrows,
                   width=2 * PADDING + columns * NODE_WIDTH + (columns - 1) * COLUMN_GAP,
                   height=2 * PADDING + (tallest := max(rows.values(), default=1)) * NODE_HEIGHT
                   + (tallest - 1) * ROW_GAP)


def _arrow(cause: Node, effect: Node, link: dict[str, Any]) -> Arrow:
    middle = NODE_HEIGHT // 2
    if cause.column < effect.column:  # the usual case: left to right
        x1, x2 = cause.x + NODE_WIDTH, effect.x
    elif cause.column > effect.column:  # a link back (a cycle): right to left
        x1, x2 = cause.x, effect.x + NODE_WIDTH
    else:  # same column: from the middle of one box to the other
        x1 = x2 = cause.x + NODE_WIDTH // 2
        down = cause.y < effect.y
        return Arrow(cause, effect, link["relation_type"], link["fact"], x1,
                     cause.y + (NODE_HEIGHT if down else 0), x2,
                     effect.y + (0 if down else NODE_HEIGHT))
    return Arrow(cause, effect, link["relation_type"], link["fact"],
                 x1, cause.y + middle, x2, effect.y + middle)
