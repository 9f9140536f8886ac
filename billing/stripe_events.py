"""The parts of Stripe's webhook events this server reads, declared once.

An event is checked against these when it arrives, before anything is stored: a body
that does not fit (a list, a number for `type`, a `created` past year 9999, an id of
10,000 characters or with a NUL in it, a nested field of the wrong type) is refused with
400 and the field it names. The handlers read the same models, so they never meet a
shape they did not declare. Fields Stripe adds in later API versions are ignored;
fields Stripe may leave out are optional. Values are taken as JSON gives them (strict):
"42" is not a number, 1e20 is not a time.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from echomem.errors import EchoError
from echomem.text import unstorable

# The last second Python (and so psycopg) can read back: 9999-12-31T23:59:59Z.
MAX_UNIX_TIME = 253_402_300_799


class MalformedEvent(EchoError):
    """Signed, but not an event this server can read: refused, nothing stored."""

    code = "malformed_event"


class StripeShape(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


# Ids Stripe makes (evt_, cus_, sub_, cs_, in_) are letters, digits and underscores. They
# meet the database as lookups, and a subscription's id goes into a URL path at Stripe.
StripeId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{1,255}$")]
EventId = Annotated[str, StringConstraints(pattern=r"^evt_[A-Za-z0-9_]{1,251}$")]
EventType = Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]+(\.[a-z0-9_]+)*$",
                                             max_length=100)]
# A price id may be a legacy Plan's, which the operator chose: any text the column holds.
PriceId = Annotated[str, StringConstraints(min_length=1, max_length=255)]
UnixTime = Annotated[int, Field(ge=0, le=MAX_UNIX_TIME)]
Metadata = dict[str, Annotated[str, StringConstraints(max_length=500)]]  # Stripe's limits


class Price(StripeShape):
    id: PriceId


class SubscriptionItem(StripeShape):
    price: Price | None = None
    plan: Price | None = None  # a legacy Plan (localstripe's kind of price)
    # Since the 2025-03-31 API versions the period lives on each item.
    current_period_end: UnixTime | None = None


class SubscriptionItems(StripeShape):
    data: list[SubscriptionItem] = Field(min_length=1)


class Subscription(StripeShape):
    id: StripeId
    customer: StripeId | None = None
    status: Literal["incomplete", "incomplete_expired", "trialing", "active", "past_due",
                    "canceled", "unpaid", "paused"]
    items: SubscriptionItems
    cancel_at_period_end: bool = False
    current_period_end: UnixTime | None = None  # before the 2025-03-31 API versions
    metadata: Metadata | None = None

    @property
    def price_id(self) -> str:
        item = self.items.data[0]
        price = item.price or item.plan
        return price.id if price else ""

    @property
    def period_end(self) -> datetime | None:
        end = self.items.data[0].current_period_end or self.current_period_end
        return as_datetime(end) if end else None

    @property
    def account_id(self) -> str | None:
        return (self.metadata or {}).get("account_id")


class CheckoutSession(StripeShape):
    id: StripeId
    customer: StripeId | None = None
    subscription: StripeId | None = None
    client_reference_id: Annotated[str, StringConstraints(max_length=200)] | None = None
    metadata: Metadata | None = None

    @property
    def account_id(self) -> str | None:
        return self.client_reference_id or (self.metadata or {}).get("account_id")


class SubscriptionDetails(StripeShape):
    subscription: StripeId | None = None


class InvoiceParent(StripeShape):
    subscription_details: SubscriptionDetails | None = None


class Invoice(StripeShape):
    id: StripeId
    customer: StripeId | None = None
    subscription: StripeId | None = None
    # The subscription moved under `parent` in newer API versions; localstripe has both.
    parent: InvoiceParent | None = None

    @property
    def subscription_id(self) -> str | None:
        details = self.parent.subscription_details if self.parent else None
        return self.subscription or (details.subscription if details else None)


class EventData(StripeShape):
    object: dict[str, Any]


class Event(StripeShape):
    id: EventId
    type: EventType
    created: UnixTime
    data: EventData

    @property
    def created_at(self) -> datetime:
        return as_datetime(self.created)


def as_datetime(unix_time: int) -> datetime:
    return datetime.fromtimestamp(unix_time, UTC)


def read(shape: type[StripeShape], value: Any, where: str = "") -> Any:
    """`value` as `shape`, or MalformedEvent naming the first field that does not fit."""
    try:
        return shape.model_validate(value)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        field = ".".join([where, *map(str, first["loc"])] if where else
                         map(str, first["loc"])) or "body"
        raise MalformedEvent(f"{field}: {first['msg']}", field=field,
                             fix="send Stripe's event unchanged") from None


def unstorable_text(value: Any, where: str = "") -> MalformedEvent | None:
    """The first string, key or value at any depth, that PostgreSQL cannot store."""
    stack = [(where, value)]
    while stack:
        path, node = stack.pop()
        items = (node.items() if isinstance(node, dict)
                 else enumerate(node) if isinstance(node, list) else ())
        for key, item in items:
            reason = unstorable(key) if isinstance(key, str) else None
            name = repr(key)[:60] if reason or len(str(key)) > 60 else str(key)
            inner = f"{path}.{name}" if path else name
            reason = reason or (unstorable(item) if isinstance(item, str) else None)
            if reason:
                return MalformedEvent(f"{inner}: {reason}", field=inner,
                                      fix="send Stripe's event unchanged")
            stack.append((inner, item))
    return None
