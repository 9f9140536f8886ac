"""trace_cause walks recorded causal links only, in the direction each hint says."""

from __future__ import annotations

import pytest

from echomem.errors import ValidationFailed
from memories.graph.causal import MAX_CHAINS
from tests.factories import fact


def node(name: str) -> dict[str, str]:
    return {"name": name, "type": "event"}


def chain_text(chain: list[dict]) -> list[str]:
    return [link["fact"] for link in chain]


def test_led_to_and_caused_by_written_from_opposite_ends_give_one_chain(engine):
    engine.write(entities=[node("config push"), node("cache stampede"), node("checkout 502s")],
                 assume_new=True, facts=[
        fact("config push", "cache stampede", "triggered", "The config push flushed the cache",
             causal_hint="led_to"),
        fact("checkout 502s", "cache stampede", "came_from",
             "Checkout 502s were caused by the cache stampede", causal_hint="caused_by"),
    ])
    out = engine.trace("checkout 502s", direction="upstream")
    assert [chain_text(c) for c in out["causes"]] == [[
        "Checkout 502s were caused by the cache stampede",
        "The config push flushed the cache",
    ]]
    first, second = out["causes"][0]
    assert (first["cause"], first["effect"]) == ("cache stampede", "checkout 502s")
    assert (second["cause"], second["effect"]) == ("config push", "cache stampede")
    down = engine.trace("config push", direction="downstream")
    assert [chain_text(c) for c in down["effects"]] == [[
        "The config push flushed the cache",
        "Checkout 502s were caused by the cache stampede",
    ]]
    assert out["units"] == 2 and out["empty_reason"] is None


def test_enabled_by_and_blocked_by_point_from_the_enabler_to_the_thing(engine):
    engine.write(entities=[node("launch"), node("feature flag"), node("legal review")],
                 assume_new=True, facts=[
        fact("launch", "feature flag", "needs", "The launch was enabled by the feature flag",
             causal_hint="enabled_by"),
        fact("launch", "legal review", "waits", "The launch is blocked by legal review",
             causal_hint="blocked_by"),
    ])
    causes = engine.trace("launch", direction="upstream")["causes"]
    assert sorted(c[0]["cause"] for c in causes) == ["feature flag", "legal review"]
    effects = engine.trace("feature flag", direction="downstream")["effects"]
    assert effects[0][0]["effect"] == "launch"


def test_contradictions_are_reported_not_walked(engine):
    engine.write(entities=[node("outage"), node("disk full"), node("network partition")],
                 assume_new=True, facts=[
        fact("outage", "disk full", "blamed", "The outage was caused by a full disk",
             causal_hint="caused_by"),
        fact("network partition", "disk full", "disputes",
             "Ops says a network partition, not the disk, explains it",
             causal_hint="contradicts"),
    ])
    out = engine.trace("outage", direction="both")
    assert [chain_text(c) for c in out["causes"]] == [["The outage was caused by a full disk"]]
    assert [f["fact"] for f in out["contradictions"]] == [
        "Ops says a network partition, not the disk, explains it"]
    assert all("network partition" not in (c[-1]["cause"]) for c in out["causes"])


def test_associative_facts_are_not_causes(engine):
    engine.write(entities=[node("deploy"), node("rollback")], assume_new=True, facts=[
        fact("deploy", "rollback", "same_day", "The deploy and a rollback happened on Monday")])
    out = engine.trace("deploy")
    assert out["causes"] == [] and out["effects"] == []
    assert out["empty_reason"] == "no_causal_links"
    assert "not evidence that none exists" in out["message"]
    assert out["units"] == 0


def test_an_unknown_subject_says_no_anchor(engine):
    out = engine.trace("something never written")
    assert out["empty_reason"] == "no_anchor" and out["anchors"] == []


def test_anchors_match_exact_then_normalized_then_similar_names(engine):
    engine.write(entities=[node("Checkout 502 errors"), node("bad deploy")], assume_new=True,
                 facts=[fact("Checkout 502 errors", "bad deploy", "from",
                             "Checkout 502 errors came from the bad deploy",
                             causal_hint="caused_by")])
    assert engine.trace("Checkout 502 errors")["anchors"][0]["matched"] == "exact"
    assert engine.trace("checkout  502 ERRORS")["anchors"][0]["matched"] == "normalized"
    similar = engine.trace("checkout 502s", direction="upstream")
    assert similar["anchors"][0] | {"id": None} == {
        "id": None, "name": "Checkout 502 errors", "type": "event", "matched": "similar"}
    assert chain_text(similar["causes"][0]) == ["Checkout 502 errors came from the bad deploy"]


def test_cycles_end_instead_of_looping(engine):
    engine.write(entities=[node("A"), node("B"), node("C")], assume_new=True, facts=[
        fact("A", "B", "r", "A led to B", causal_hint="led_to"),
        fact("B", "C", "r", "B led to C", causal_hint="led_to"),
        fact("C", "A", "r", "C led to A", causal_hint="led_to"),
    ])
    out = engine.trace("A", direction="downstream", max_hops=6)
    assert [chain_text(c) for c in out["effects"]] == [["A led to B", "B led to C"]]


def test_max_hops_bounds_the_chain_nearest_first(engine):
    names = [f"step {i}" for i in range(8)]
    engine.write(entities=[node(n) for n in names], assume_new=True, facts=[
        fact(names[i], names[i + 1], "next", f"{names[i]} led to {names[i + 1]}",
             causal_hint="led_to") for i in range(7)])
    out = engine.trace("step 7", direction="upstream", max_hops=3)
    assert chain_text(out["causes"][0]) == [
        "step 6 led to step 7", "step 5 led to step 6", "step 4 led to step 5"]


def test_fan_out_is_bounded_and_flagged(engine):
    causes = [f"cause {i}" for i in range(MAX_CHAINS + 10)]
    engine.write(entities=[node("incident"), *[node(c) for c in causes]], assume_new=True,
                 facts=[fact("incident", c, "from", f"The incident was caused by {c}",
                             causal_hint="caused_by") for c in causes])
    out = engine.trace("incident", direction="upstream")
    assert out["truncated"] is True
    assert 0 < len(out["causes"]) <= MAX_CHAINS


def test_superseded_links_are_not_walked(engine):
    engine.write(entities=[node("crash"), node("memory leak")], assume_new=True, facts=[
        fact("crash", "memory leak", "why", "The crash came from a memory leak",
             causal_hint="caused_by")])
    engine.write(entities=[node("crash"), node("memory leak")], facts=[
        fact("crash", "memory leak", "why", "The memory leak was ruled out as the crash cause")])
    assert engine.trace("crash")["empty_reason"] == "no_causal_links"


def test_both_directions_say_when_causes_were_found_and_no_effect_was_recorded(engine):
    engine.write(entities=[node("disk alarm"), node("log flood")], assume_new=True, facts=[
        fact("disk alarm", "log flood", "from", "The disk alarm was caused by a log flood",
             causal_hint="caused_by")])
    out = engine.trace("disk alarm", direction="both")
    assert [chain_text(c) for c in out["causes"]] == [["The disk alarm was caused by a log flood"]]
    assert out["effects"] == []
    assert (out["empty_sides"], out["empty_reason"]) == (["effects"], None)
    assert "Found 1 cause chain(s) but no effect" in out["message"]
    assert "'disk alarm'" in out["message"] and "not evidence that none exists" in out["message"]


def test_both_directions_say_when_effects_were_found_and_no_cause_was_recorded(engine):
    engine.write(entities=[node("log flood"), node("disk alarm")], assume_new=True, facts=[
        fact("log flood", "disk alarm", "raised", "The log flood led to the disk alarm",
             causal_hint="led_to")])
    out = engine.trace("log flood", direction="both")
    assert out["causes"] == []
    assert [chain_text(c) for c in out["effects"]] == [["The log flood led to the disk alarm"]]
    assert (out["empty_sides"], out["empty_reason"]) == (["causes"], None)
    assert "Found 1 effect chain(s) but no cause" in out["message"]


def test_a_side_that_is_not_empty_is_not_listed_and_the_reply_has_no_message(engine):
    engine.write(entities=[node("deploy"), node("outage"), node("refunds")], assume_new=True,
                 facts=[fact("deploy", "outage", "r", "The deploy led to the outage",
                             causal_hint="led_to"),
                        fact("outage", "refunds", "r", "The outage led to refunds",
                             causal_hint="led_to")])
    out = engine.trace("outage", direction="both")
    assert (len(out["causes"]), len(out["effects"]), out["empty_sides"]) == (1, 1, [])
    assert out.get("message") is None
    # One direction asked: the other side is not reported as empty.
    assert engine.trace("deploy", direction="downstream")["empty_sides"] == []
    assert engine.trace("deploy", direction="upstream")["empty_sides"] == ["causes"]


def test_an_empty_answer_names_the_sides_it_looked_at(engine):
    engine.write(entities=[node("deploy"), node("rollback")], assume_new=True, facts=[
        fact("deploy", "rollback", "same_day", "The deploy and a rollback happened on Monday")])
    upstream = engine.trace("deploy", direction="upstream")
    assert (upstream["empty_reason"], upstream["empty_sides"]) == ("no_causal_links", ["causes"])
    assert "Nobody recorded a cause for 'deploy'" in upstream["message"]
    both = engine.trace("deploy")
    assert both["empty_sides"] == ["causes", "effects"]
    assert "Nobody recorded a cause or an effect for 'deploy'" in both["message"]
    unknown = engine.trace("never written", direction="downstream")
    assert (unknown["empty_reason"], unknown["empty_sides"]) == ("no_anchor", ["effects"])


@pytest.mark.parametrize(("arguments", "field"), [
    ({"max_hops": 0}, "max_hops"), ({"max_hops": 7}, "max_hops"),
    ({"direction": "sideways"}, "direction"), ({"subject": ""}, "subject"),
])
def test_bad_arguments_are_named(engine, arguments, field):
    with pytest.raises(ValidationFailed) as caught:
        engine.trace(**({"subject": "x"} | arguments))
    assert caught.value.field == field
