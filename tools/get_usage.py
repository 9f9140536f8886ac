"""get_usage: how many units the account has left this month."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from accounts.principal import Principal
from billing.allowance_reply import allowance_reply
from tools.contract import Tool
from tools.results import Out


class GetUsageArgs(BaseModel):
    """No arguments: the key's account is the one reported."""

    model_config = ConfigDict(extra="forbid")


class GetUsageResult(Out):
    metered: bool = Field(description="False on a self-hosted server: no allowance, no units.")
    plan: str | None
    month: str | None = Field(description="The calendar month (UTC) counted, as YYYY-MM.")
    used: int | None
    allowed: int | None
    remaining: int | None
    resets_at: str | None = Field(description="When the month's units reset (UTC).")
    requests_per_minute: int | None = Field(description="Each key's rate limit on this plan.")
    upgrade_url: str | None
    units: int
    message: str


def run(principal: Principal, args: GetUsageArgs) -> dict[str, Any]:
    return allowance_reply(principal)


TOOL = Tool(
    name="get_usage", title="Check the allowance",
    description=(
        "How many units (one per fact written or returned) the account has left this "
        "month, its plan, its rate limit and when the count resets. Call it when a write "
        "was refused for the allowance or a recall says it was cut short, or before a "
        "bulk import. Free."),
    args=GetUsageArgs, output=GetUsageResult, run=run,
    read_only=True, idempotent=True,
    meters="",
)
