"""Units over time as a bar chart: days of this month, or the last twelve months.

Only coordinates and labels are computed here; web/templates/web/_bar_chart.html draws
the SVG (so every label is escaped like any other text) and a table carries the same
figures for screen readers and for anyone who wants the exact numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

from billing.plans import next_month
from billing.usage import Amount

WIDTH = 540
HEIGHT = 220
LEFT = 64  # room for "10,000,000"-sized axis labels, abbreviated to "10M"
RIGHT = 12
TOP = 14
BOTTOM = 44  # two lines of x labels (month, then the year where it changes)
BAR_FILL = 0.7  # of each slot; the rest is the gap between bars
GRID_LINES = 4


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    tooltip: str


@dataclass(frozen=True)
class Tick:
    y: float
    label: str


@dataclass(frozen=True)
class Label:
    x: float
    text: str
    second: str = ""  # a second line under it (the year)


@dataclass
class Chart:
    title: str
    description: str
    bars: list[Bar] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    rows: list[tuple[str, int]] = field(default_factory=list)
    empty: bool = True
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM

    @property
    def middle_x(self) -> float:
        return (self.left + self.right) / 2

    @property
    def middle_y(self) -> float:
        return (self.top + self.bottom) / 2


def daily_chart(days: Sequence[Amount], month: date) -> Chart:
    """Bars for the days so far; the axis spans the whole month, so the chart shows how
    far into it we are."""
    length = (next_month(month) - month).days
    slots = [month + timedelta(days=n) for n in range(length)]
    chart = _chart(
        [d.units for d in days], len(slots),
        title=f"Units per day, {month:%B %Y} (UTC)",
        tooltips=[f"{d.start:%a %-d %b}: {_units(d.units)}" for d in days])
    chart.labels = [Label(_slot_middle(n, len(slots)), str(day.day))
                    for n, day in enumerate(slots) if day.day == 1 or day.day % 5 == 0]
    chart.rows = [(f"{d.start:%a %-d %b %Y}", d.units) for d in days]
    so_far = f"{len(days)} day{'s' if len(days) != 1 else ''} so far"
    chart.description = _describe(chart, "day", so_far)
    return chart


def monthly_chart(months: Sequence[Amount]) -> Chart:
    chart = _chart([m.units for m in months], len(months),
                   title=f"Units per month, {months[0].start:%b %Y} to {months[-1].start:%b %Y}",
                   tooltips=[f"{m.start:%B %Y}: {_units(m.units)}" for m in months])
    chart.labels = [Label(_slot_middle(n, len(months)), f"{m.start:%b}",
                          f"{m.start:%Y}" if n == 0 or m.start.month == 1 else "")
                    for n, m in enumerate(months)]
    chart.rows = [(f"{m.start:%B %Y}", m.units) for m in months]
    chart.description = _describe(chart, "month", f"the last {len(months)} months")
    return chart


def _chart(values: Sequence[int], slots: int, *, title: str, tooltips: Sequence[str]) -> Chart:
    chart = Chart(title=title, description="")
    top_value, step = _axis(max(values, default=0))
    plot_height = chart.bottom - chart.top
    chart.ticks = [Tick(chart.bottom - plot_height * n * step / top_value, _short(n * step))
                   for n in range(round(top_value / step) + 1)]
    slot = (chart.right - chart.left) / slots
    for n, (value, tooltip) in enumerate(zip(values, tooltips, strict=True)):
        height = plot_height * value / top_value
        if value and height < 1.5:  # a day with a few units among millions still shows
            height = 1.5
        chart.bars.append(Bar(round(chart.left + n * slot + slot * (1 - BAR_FILL) / 2, 2),
                              round(chart.bottom - height, 2), round(slot * BAR_FILL, 2),
                              round(height, 2), tooltip))
    chart.empty = not any(values)
    return chart


def _slot_middle(n: int, slots: int) -> float:
    slot = (WIDTH - RIGHT - LEFT) / slots
    return round(LEFT + (n + 0.5) * slot, 2)


def _axis(highest: int) -> tuple[int, int]:
    """A round top for the y axis and the step between its grid lines (1, 2 or 5 times a
    power of ten), so the labels read 0, 250, 500 ... rather than 0, 237, 474 ..."""
    if highest <= GRID_LINES:
        return GRID_LINES, 1
    magnitude = 10 ** math.floor(math.log10(highest / GRID_LINES))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10)
                if m * magnitude * GRID_LINES >= highest and m * magnitude >= 1)
    step = math.ceil(step)
    return step * math.ceil(highest / step), step


def _short(value: int) -> str:
    """10,000 -> "10k", 2,500,000 -> "2.5M": axis labels stay narrow."""
    for size, suffix in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")):
        if value >= size:
            figure = value / size
            return f"{figure:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{value:,}"


def _describe(chart: Chart, unit: str, span: str) -> str:
    if chart.empty:
        return f"No units used in {span}."
    total = sum(units for _, units in chart.rows)
    busiest = max(chart.rows, key=lambda row: row[1])
    return (f"{_units(total)} in {span}; the busiest {unit} was {busiest[0]} with "
            f"{busiest[1]:,}.")


def _units(count: int) -> str:
    return f"{count:,} unit{'s' if count != 1 else ''}"
