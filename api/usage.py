"""GET /api/v1/usage: the billing page's figures for the key's account, for agents and
scripts. On a self-hosted box nothing is metered: `metered` is false, the figures null
and the lists empty."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from drf_spectacular.utils import OpenApiExample, extend_schema
from pydantic import BaseModel, Field
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from api.schema import ERROR_RESPONSES
from billing.usage import Amount, Share, summary_of, usage_report
from memories.graph.selectors import memory_list


class UsageSummaryOut(BaseModel):
    metered: bool = Field(description="False on a self-hosted server: nothing is counted, "
                                      "and every other field here is null.")
    plan: str | None = Field(description="The plan in force, e.g. `free`, `pro`.")
    plan_name: str | None
    month: date | None = Field(description="The first day of the month counted (UTC).")
    used: int | None = Field(description="Units used this month.")
    allowed: int | None = Field(description="The plan's monthly units.")
    remaining: int | None
    percent: int | None = Field(description="Whole percent used, floored, at most 100.")
    resets_at: datetime | None = Field(description="When the month's units reset (UTC).")
    requests_per_minute: int | None = Field(description="Each key's request limit.")


class DayOut(BaseModel):
    day: date
    units: int


class MonthOut(BaseModel):
    month: date = Field(description="The first day of the month.")
    units: int


class ShareOut(BaseModel):
    name: str = Field(description="The memory's or key's current name; for one deleted "
                                  "since, the name it had when it was last charged.")
    units: int
    percent: int = Field(description="Share of this month's units, rounded.")
    state: Literal["active", "revoked", "deleted"]


class KeyShareOut(ShareOut):
    prefix: str = Field(description="The key's public part, `em_<prefix>_…`, as in the "
                                    "dashboard.")
    agent: str = Field(description="The key's tool label (`claude-code`, ...); empty once "
                                   "the key is deleted.")


class ToolShareOut(BaseModel):
    tool: str
    units: int
    percent: int


class UsageOut(BaseModel):
    metered: bool
    summary: UsageSummaryOut
    daily: list[DayOut] = Field(description="Each day of this month up to today (UTC), "
                                            "zero-filled.")
    monthly: list[MonthOut] = Field(description="The last 12 months, this one included, "
                                                "oldest first, zero-filled.")
    by_memory: list[ShareOut] = Field(description="This month, most units first; for a key "
                                                  "limited to some memories, only those.")
    by_key: list[KeyShareOut] = Field(description="This month, most units first.")
    by_tool: list[ToolShareOut] = Field(description="This month, most units first.")


EXAMPLE = {
    "metered": True,
    "summary": {"metered": True, "plan": "free", "plan_name": "Free", "month": "2026-03-01",
                "used": 8412, "allowed": 10000, "remaining": 1588, "percent": 84,
                "resets_at": "2026-04-01T00:00:00Z", "requests_per_minute": 240},
    "daily": [{"day": "2026-03-01", "units": 310}, {"day": "2026-03-02", "units": 0}],
    "monthly": [{"month": "2025-04-01", "units": 0}, {"month": "2026-03-01", "units": 8412}],
    "by_memory": [{"name": "default", "units": 8412, "percent": 100, "state": "active"}],
    "by_key": [{"name": "laptop", "units": 8412, "percent": 100, "state": "active",
                "prefix": "em_a1b2c3d4e5f6_…", "agent": "claude-code"}],
    "by_tool": [{"tool": "query_memory", "units": 6000, "percent": 71},
                {"tool": "write_episode", "units": 2412, "percent": 29}],
}


@extend_schema(operation_id="usage_report", summary="Units used by the key's account",
               tags=["usage"], responses={200: UsageOut, **ERROR_RESPONSES},
               examples=[OpenApiExample("hosted", value=EXAMPLE, response_only=True)])
@api_view(["GET"])
def usage(request: Request) -> Response:
    """This month's units against the plan, per day this month, per month over the last
    12, and per memory, key and tool this month: the figures of the billing page. Asking
    costs no units (it is one request against the key's rate limit)."""
    report = usage_report(request.auth.account_id)
    by_memory = report.by_memory
    if request.auth.memory_ids is not None:  # a key limited to memories sees only theirs
        mine = {memory.name for memory in memory_list(request.auth)}
        by_memory = [s for s in by_memory if s.state == "active" and s.name in mine]
    return Response(UsageOut(
        metered=report.metered, summary=UsageSummaryOut(**summary_of(report.standing)),
        daily=[_day(d) for d in report.daily], monthly=[_month(m) for m in report.monthly],
        by_memory=[_share(s) for s in by_memory],
        by_key=[KeyShareOut(prefix=s.prefix, agent=s.detail, **_share(s).model_dump())
                for s in report.by_key],
        by_tool=[ToolShareOut(tool=s.name, units=s.units, percent=s.percent)
                 for s in report.by_tool],
    ).model_dump(mode="json"))


def _day(amount: Amount) -> DayOut:
    return DayOut(day=amount.start, units=amount.units)


def _month(amount: Amount) -> MonthOut:
    return MonthOut(month=amount.start, units=amount.units)


def _share(share: Share) -> ShareOut:
    return ShareOut(name=share.name, units=share.units, percent=share.percent,
                    state=share.state)
