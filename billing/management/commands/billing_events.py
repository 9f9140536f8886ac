from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from billing import webhooks
from billing.models import StripeEvent


class Command(BaseCommand):
    help = ("List recent Stripe webhook events and what handling did (--failed: only those "
            "not handled); re-handle failed ones with --retry <id> or --retry-failed.")

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=20, help="how many to list")
        parser.add_argument("--failed", action="store_true",
                            help="list only events not handled yet")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--retry", metavar="EVENT_ID", help="re-handle this failed event")
        action.add_argument("--retry-failed", action="store_true",
                            help="re-handle every event not handled yet, oldest first")

    def handle(self, *args, limit: int, failed: bool, retry: str | None, retry_failed: bool,
               **options):
        if retry:
            event = StripeEvent.objects.filter(pk=retry).first()
            if event is None:
                raise CommandError(f"no stored Stripe event has the id {retry!r}")
            if event.handled_at is not None:
                raise CommandError(f"{retry} was already handled ({event.outcome}); "
                                   "nothing to retry")
            self._retry([retry])
            return
        if retry_failed:
            ids = list(StripeEvent.objects.filter(handled_at__isnull=True)
                       .order_by("created").values_list("id", flat=True))
            if not ids:
                self.stdout.write("No failed events.")
                return
            self._retry(ids)
            return
        events = StripeEvent.objects.order_by("-received_at")
        if failed:
            events = events.filter(handled_at__isnull=True)
        rows = list(events[:limit])
        if not rows:
            self.stdout.write("No events." if not failed else "No failed events.")
        for event in rows:
            state = event.outcome if event.handled_at else f"FAILED x{event.attempts}: " \
                                                           f"{event.last_error}"
            self.stdout.write(f"{event.created:%Y-%m-%d %H:%M:%S}  {event.id}  {event.type}  "
                              f"{state}")

    def _retry(self, ids: list[str]) -> None:
        failures = 0
        for event_id in ids:
            try:
                event = webhooks.handle(event_id)
            except webhooks.HandlingFailed as failure:
                failures += 1
                self.stdout.write(f"{event_id}  still failing: {failure.message}")
            else:
                self.stdout.write(f"{event_id}  handled: {event.outcome}")
        if failures:
            raise CommandError(f"{failures} of {len(ids)} event(s) still fail")
