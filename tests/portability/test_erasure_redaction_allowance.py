"""What an import may never undo or skip: erasure on this box, the importing account's
redaction, and its plan's allowance."""

from __future__ import annotations

import pytest

from accounts.principal import Principal
from accounts.redaction_settings import redaction_settings_save
from billing.models import Plan
from echomem.errors import AllowanceExhausted
from memories.erasure.services import memory_delete
from memories.graph.services import memory_create
from memories.import_records import ImportedRecord
from memories.models import Entity, Fact
from tests.factories import Engine, fact, person
from tests.portability.conftest import exported, imported


def _texts(account, memory: str = "default") -> set[str]:
    return set(Fact.objects.filter(memory__account=account, memory__name=memory)
               .values_list("fact", flat=True))


def test_a_forgotten_fact_never_returns_through_an_old_export(alice, charlie, filled):
    old = exported(alice.principal)
    outage = Fact.objects.get(memory__account=alice.account, fact__startswith="The outage")
    from tools.calling import run_validated
    from tools.registry import TOOLS

    run_validated(alice.principal, TOOLS["forget"], {"scope": "shared",
                                                     "facts": [str(outage.pk)]})
    memory_create(account_id=alice.account.pk, name="restored")

    into_itself = imported(alice.principal, old)
    elsewhere = imported(alice.principal, old, memory="restored")
    other_account = imported(charlie.principal, old)

    assert not into_itself.changed
    for report in (elsewhere, other_account):
        assert report.same_box and report.counts["fact"].skipped == 1
        assert "erased on this box" in " ".join(report.skipped_reasons)
        assert report.counts["recall_save"].skipped == 1  # it named the forgotten fact
    for account, memory in ((alice.account, "restored"), (charlie.account, "default")):
        assert "The outage was caused by the deploy" not in _texts(account, memory)
        assert "Alice left Acme for good" in _texts(account, memory)


def test_a_deleted_memory_never_returns_through_an_old_export(alice, charlie, filled):
    memory_create(account_id=alice.account.pk, name="scratch")
    Engine(alice.principal).write(memory="scratch", entities=[person("Zed")],
                                  facts=[fact("Zed", "Zed", "owns", "Zed owns a boat")])
    old = exported(alice.principal, "scratch")
    memory_delete(alice.principal, "scratch", confirm="scratch")

    report = imported(charlie.principal, old)

    assert not report.changed and report.counts["fact"].skipped == 1
    assert not Entity.objects.filter(memory__account=charlie.account, name="Zed").exists()


def test_a_fact_forgotten_after_its_import_stays_forgotten(alice, charlie, filled):
    old = exported(alice.principal)
    imported(charlie.principal, old)
    copy = Fact.objects.get(memory__account=charlie.account, fact__startswith="The outage")
    from tools.calling import run_validated
    from tools.registry import TOOLS

    run_validated(charlie.principal, TOOLS["forget"], {"scope": "shared",
                                                       "facts": [str(copy.pk)]})
    again = imported(charlie.principal, old)

    assert not again.changed
    assert "The outage was caused by the deploy" not in _texts(charlie.account)


def test_the_importing_accounts_redaction_applies(alice, charlie):
    Engine(alice.principal).write(entities=[person("Dana")], facts=[
        fact("Dana", "Dana", "badge", "Dana's badge is ACME-123456")])
    redaction_settings_save(charlie.account.pk, enabled=True, patterns=["ACME-[0-9]{6}"])

    imported(charlie.principal, exported(alice.principal))

    assert _texts(charlie.account) == {"Dana's badge is [REDACTED:custom]"}


@pytest.mark.parametrize("by", ["key", "person"])
def test_an_import_past_the_allowance_is_refused_whole(alice, charlie, filled, by):
    lines = exported(alice.principal)
    Plan.objects.filter(is_default=True).update(monthly_units=3)
    principal = charlie.principal if by == "key" else Principal(
        account_id=charlie.account.pk, holder_id=charlie.user.pk, tool="web")

    with pytest.raises(AllowanceExhausted):
        imported(principal, lines)

    assert not Fact.objects.filter(memory__account=charlie.account).exists()
    assert not ImportedRecord.objects.filter(memory__account=charlie.account).exists()
