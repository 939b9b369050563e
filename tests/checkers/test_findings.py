"""Known findings about the protocol (checkers/findings.py): each reproduced on a script, shown
to be what its classifier recognises, and counted rather than hidden.

A finding is a violation the correct model, faithful to ADR 0020, reaches because the ADR
allows it. The sweep keeps the faults that find them; a run counts them
(`protocol_findings`), and `--strict` makes them fail.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from checkers import check_all
from checkers.findings import FINDINGS, classify, classify_chains
from counterexamples.shrink import run_plan
from scenarios.script import NetRule, ScriptedWorld
from historykit import A0, evs, procs
from history import event
from model.params import Params
from history.record import hash_version


def _kept_plan(name: str):
    """The history of a plan kept in tests/plans/, replayed byte for byte."""
    plan = json.loads((Path(__file__).parents[1] / "plans" / f"{name}.json").read_text())
    h = run_plan(plan)
    assert h.sha256(hash_version(plan)) == plan["history_sha256"]
    return h


def _judged_doctored(h, index: int, fields: tuple):
    """(unexplained violations, findings) of a copy of `h` whose event `index` has these fields (named:
    the event's own, `_replace`d)."""
    doctored = copy.deepcopy(h)
    doctored._sha = None
    doctored.cache.clear()
    t, p, kind, _f = doctored.events[index]
    doctored.events[index] = event(t, p, kind, fields)
    return classify(doctored, check_all(doctored))


def _found(h):
    violations = check_all(h)
    unexplained, found = classify(h, violations)
    assert unexplained == [], "\n".join(v.explain(h) for v in unexplained)
    return found


def test_every_finding_names_its_adr_text_and_reproduction():
    ids = [f.id for f in FINDINGS]
    assert len(ids) == len(set(ids))
    here = open(__file__).read()
    for f in FINDINGS:
        assert f.adr and f.title and f.invariants
        assert f.reproduction.startswith("tests/checkers/test_findings.py::")
        assert "def " + f.reproduction.split("::")[1] + "(" in here, f.reproduction


def test_every_finding_lists_its_premises_as_world_facts():
    """Issue 44: each classifier's docstring lists its chain's premises (docs/findings.md shows them, generated),
    the world's records they read named as the history names them (`apply`, `record_reply`, ...)."""
    page = (Path(__file__).parents[2] / "docs" / "findings.md").read_text()
    for f in FINDINGS:
        assert len(f.premises) >= 3 and any("`" in x for x in f.premises), f.id
        assert all(" ".join(x.split()).split("`")[0].replace("<", "&lt;") in page for x in f.premises), f.id


def test_f1_a_twin_straddling_a_delete_holds_the_lease_beside_the_other():
    """F-1 (NL-5, NL-7, LEASE-1): a twin of n0 starts with n0's process, so both start checks find no
    object; n0's first write creates it, the twin's (If-None-Match) is held back past its timeout;
    an operator deletes nodes/n0 by mistake at 20.9 s, and the twin's late write lands at 21 s on the
    empty key: the bucket grants the twin's instance a lease while n0's last write is still valid."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(0, "twin", "n0", "t0")
    w.rule(NetRule("delay_apply", machine="t0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    # n0's first write lands 30 ms late: the twin's last check read, sent just before, finds no object
    w.rule(NetRule("delay_apply", machine="m0", op="PUT", key="nodes/n0", ms=30, times=1))
    w.at(20_900, "delete", "nodes/n0")
    h = w.run(until_ms=40_000)
    first, twin = procs(h, "n0")
    created = evs(h, "apply", proc=twin, where=lambda f: f.key == "nodes/n0" and f.cond == "if-none-match")
    assert created and created[0].t_ms > 20_900  # landed after the delete, on no object
    found = _found(h)
    assert list(found) == ["F-1"] and found["F-1"][0].invariant == "LEASE-1"


@pytest.mark.parametrize("action", ["lose_request", "fail_fast"])
def test_f2_a_drain_waits_forever_on_a_lost_acquire(action):
    """F-2 (OR-8, CS-3, INV-11): an acquire whose If-None-Match write is lost (the request never
    reaches the bucket: lost on the way, or failed fast, the form seed 6445 of the 20,000-seed sweep
    met) leaves an unresolved entry; the node is then drained. The record never changes, so the
    resolver reads it for ever (the ADR bounds no resolver) and 95 s later the drain has still not
    ended."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.rule(NetRule(action, node="n0", op="PUT", key="owners/", after_ms=19_000, times=1))
    w.at(20_000, "request", "n0", A0)
    w.at(25_000, "command", "n0", "drain")
    h = w.run(until_ms=120_000)
    (p0,) = procs(h, "n0")
    assert evs(h, "acquire_unresolved", proc=p0) and evs(h, "drain_began", proc=p0)
    assert evs(h, "drained", proc=p0) == []  # never
    assert evs(h, "apply", where=lambda f: f.key == "owners/" + A0) == []  # the record never changed
    found = _found(h)
    assert list(found) == ["F-2"] and found["F-2"][0].invariant == "INV-11"


def test_f2_without_the_lost_write_the_drain_ends():
    """The same script with the acquire's write arriving: the drain reports drained (INV-11 holds)."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(20_000, "request", "n0", A0)
    w.at(25_000, "command", "n0", "drain")
    h = w.run(until_ms=60_000)
    (p0,) = procs(h, "n0")
    assert evs(h, "drained", proc=p0)
    assert check_all(h) == []


def test_f2_also_when_another_node_takes_the_actor_just_before_the_bound():
    """F-2's milder form (the failure `--scenario calm` met at c9ba6c3, seed 5, when calm still drew
    drains; shrunk and kept as a plan): n1's acquire write of t1/c/a1 is lost 0.6 s before n1 is told
    to drain; the entry is read while the record stays as it was (OR-8); n0 acquires the actor 0.1 s
    before the drain's bound and n1 reports drained 0.16 s after that change, 0.06 s past the bound.
    Neither the model nor INV-11's bound is wrong: the drain waited on the unresolved entry, as F-2's
    do, and only another node's write ended it. The doctored copy, drained long after that change,
    is a violation: the entry no longer explains the wait."""
    h = _kept_plan("f2-drain-ends-only-when-another-node-takes-the-actor")
    key = "owners/t1/c/a1"
    (lost,) = evs(h, "fault", where=lambda f: f.what == "request_lost" and f.target == "PUT " + key)
    (told,) = evs(h, "told", where=lambda f: f.command == "drain")
    change = evs(h, "apply", since=told.t_ms, where=lambda f: f.key == key)[0]
    (drained,) = evs(h, "drained", proc=told.proc)
    assert lost.t_ms < told.t_ms < change.t_ms <= drained.t_ms and change.proc != told.proc
    assert not evs(h, "apply", until=told.t_ms, where=lambda f: f.key == key)  # unchanged to the drain
    found = _found(h)
    assert list(found) == ["F-2"] and found["F-2"][0].invariant == "INV-11"

    doctored = copy.deepcopy(h)
    doctored._sha = None
    doctored.cache.clear()
    late = drained.t_ms + 4 * Params(**h.params).attempt_timeout_ms
    del doctored.events[drained.i]
    at = next(i for i, e in enumerate(doctored.events) if e.t_ms > late)
    doctored.events.insert(at, event(late, told.proc, "drained"))
    unexplained, by = classify(doctored, check_all(doctored))
    assert [v.invariant for v in unexplained] == ["INV-11"] and "F-2" not in by


def test_f3_a_fence_gone_before_the_check_read_it_lets_its_instance_write_again():
    """F-3 (NL-7, FN-5, INV-10): n0's first lease write is held back past its timeout, so n0 goes back
    to its start check keeping its instance (NL-7); the write lands at 21 s, the operator fences it
    at 21.3 s (FN-7), and an operator deletes nodes/n0 by mistake at 21.5 s, before the check reads
    again. The check never sees the fence naming its own instance, finds no object, and the fenced
    instance writes live again at 32 s."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.rule(NetRule("delay_apply", node="n0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    w.at(21_300, "fence", "n0")
    w.at(21_500, "delete", "nodes/n0")
    h = w.run(until_ms=45_000)
    (p0,) = procs(h, "n0")
    me = h.processes[p0].instance
    fenced = evs(h, "apply", where=lambda f: f.key == "nodes/n0" and f.state.startswith(f"fenced {me} "))
    live_again = evs(h, "apply", proc=p0, since=fenced[0].t_ms,
                     where=lambda f: f.key == "nodes/n0" and f.state.startswith(f"live {me} "))
    assert fenced and live_again and live_again[0].fields.prev_state == ""  # written over no object
    found = _found(h)
    assert list(found) == ["F-3"]


def test_f4_a_blip_ending_between_two_nodes_deadlines_gets_one_fenced():
    """F-4 (FN-2, INV-9, T-2): at T-2's equality (grace 0 + safety 2 s = 2 * max_skew), n0 on the slow
    clock writes its lease 1.5 s earlier in each period than n1 on the fast clock. A global blip of
    6.5 s begins after both wrote and ends after n0's validity ran out but before n1's: n1 never
    lapsed, so its watch of n0 did not restart (FN-2), and its clock says n0's written_at + ttl +
    grace has passed: it fences n0 before n0's first write after the blip lands. n0 exits (NL-10):
    the blip restarted a node. (n1's last start-check read is answered 40 ms late, so its lease writes,
    and its validity, trail its watch rounds by about 50 ms: the room its first watch after the blip needs
    to read n0's object and fence it. Without it the room is a few ms, and each seed's 1 to 5 ms delays
    decide the race: 3 of 30 reach F-4.)"""
    h = _f4_script()
    p0 = procs(h, "n0")[0]  # (the supervisor restarts it afterwards)
    (fence,) = evs(h, "apply", where=lambda f: f.key == "nodes/n0" and f.state.startswith("fenced "))
    assert h.processes[fence.proc].node_id == "n1" and 37_500 <= fence.t_ms < 38_500
    assert evs(h, "exit", proc=p0)
    found = _found(h)
    assert list(found) == ["F-4"] and found["F-4"][0].invariant == "INV-9"


F4_PLAN_GONE = pytest.mark.skip(reason=(
    "issue 47: the kept plan's form needed n0's timers on its wall clock, 2.7 % slow (the sweep); on the "
    "monotonic clock its replay shows no F-4 (nor with the blip 0.6 s shorter or longer): to be found again "
    "in a sweep; F-4's scripted tests stand"))


@F4_PLAN_GONE
def test_f4_also_when_the_fence_lands_just_after_the_fencer_lapsed():
    """F-4 (FN-2, INV-9, T-2), a form found by a 20,000-seed sweep with another seed stream (seed 11670 of a
    run whose quiet phase was 3 liveness spans), shrunk to one fault and kept as a plan: a blackhole blip
    that the quiet phase ends after 9.8 s; n1's lease ran out in it, n0's did not, but n0's first write
    after it waited on an attempt the blip swallowed (timeout 4.5 s), so n0 sent its fence of n1 at 79.656 s
    on a lease valid until 79.687 s, and the fence landed at 79.699 s. The fencer decided on a valid lease:
    F-4, judged at the fence's send, not at its landing."""
    h = _kept_plan("f4-fence-sent-before-the-fencer-lapsed")
    (fence,) = evs(h, "apply", where=lambda f: f.key == "nodes/n1" and f.state.startswith("fenced "))
    assert fence.fields.sent_ms == 79_656 and fence.t_ms == 79_699
    (sent,) = evs(h, "fence_sent", where=lambda f: f.key == "nodes/n1")
    assert sent.t_ms == fence.fields.sent_ms  # the fencer's lease ran out between the send and the landing
    assert evs(h, "lease_ran_out", proc=sent.proc, since=sent.t_ms + 1, until=fence.t_ms)
    found = _found(h)
    assert list(found) == ["F-4"] and found["F-4"][0].invariant == "INV-9"


def test_f4_with_cadences_in_lockstep_the_blip_restarts_nothing():
    """The same blip with both nodes writing at the same moments of the period: both lapse together,
    both watches restart (FN-2), nobody is fenced (INV-9 holds)."""
    from model.params import Params

    p = Params(ttl_ms=10_000, grace_ms=0, safety_ms=2_000, max_skew_ms=1_000, heartbeat_period_ms=3_000,
               attempt_timeout_ms=2_000)
    w = ScriptedWorld(nodes=2, params=p, clocks={"m0": [99_000, 0], "m1": [101_000, 0]})
    w.options.update(starts=[0, 0], blip=[31_000, 6_500, "blackhole"], blip_alone=True)
    h = w.run(until_ms=60_000)
    assert evs(h, "apply", where=lambda f: f.key.startswith("nodes/") and f.state.startswith("fenced ")) == []
    assert check_all(h) == []


def test_f5_a_blip_swallowing_a_first_write_reply_gets_the_node_fenced():
    """F-5 (NL-7, NL-9, FN-3, INV-9): both nodes end their start checks at about 15 s. n0's first write
    (If-None-Match) lands, but its reply is slowed and a global blip of 5 s begins meanwhile: the write
    times out, the re-read (NL-9) fails in the blip, and n0 goes back to the start check (NL-7), whose
    ttl + grace counts from its first read after the blip (20.5 s). n1, whose lease never lapsed, watched
    n0's object unchanged since 15 s and fences it at written_at + ttl + grace (about 30 s), before n0's
    check ends (35.5 s): n0 exits (NL-10) and is restarted. The blip restarted a node."""
    w = ScriptedWorld(nodes=2)
    w.options.update(starts=[0, 0], blip=[15_500, 5_000, "blackhole"], blip_alone=True)
    w.rule(NetRule("delay_reply", node="n0", op="PUT", key="nodes/n0", ms=1_500, times=1))
    h = w.run(until_ms=45_000)
    p0 = procs(h, "n0")[0]
    first = evs(h, "apply", proc=p0, where=lambda f: f.key == "nodes/n0")
    assert len(first) == 1 and first[0].fields.cond == "if-none-match" and first[0].t_ms < 15_500
    assert len(evs(h, "check_began", proc=p0)) == 2  # back to the check after the blip's failed re-read
    (fence,) = evs(h, "apply", where=lambda f: f.key == "nodes/n0" and f.state.startswith("fenced "))
    assert h.processes[fence.proc].node_id == "n1" and 29_000 <= fence.t_ms < 31_000
    assert evs(h, "exit", proc=p0)[0].fields.status == 1
    found = _found(h)
    assert list(found) == ["F-5"] and found["F-5"][0].invariant == "INV-9"


def test_f5_also_when_the_first_write_lands_inside_the_blip():
    """F-5's other form (seeds 4703, 5820, 9918, 15828 of the 20,000-seed sweep): n0's first write is sent
    before the blip begins and lands just after (applied 600 ms late, the blip at 15.3 s): its reply is lost
    in the blip all the same, and n0 is fenced."""
    w = ScriptedWorld(nodes=2)
    w.options.update(starts=[0, 0], blip=[15_300, 5_000, "blackhole"], blip_alone=True)
    w.rule(NetRule("delay_apply", node="n0", op="PUT", key="nodes/n0", ms=600, times=1))
    h = w.run(until_ms=45_000)
    p0 = procs(h, "n0")[0]
    (first,) = evs(h, "apply", proc=p0, where=lambda f: f.key == "nodes/n0")
    assert first.fields.sent_ms < 15_300 < first.t_ms  # sent before the blip, applied in it
    found = _found(h)
    assert list(found) == ["F-5"] and found["F-5"][0].invariant == "INV-9"


def test_f5_without_the_blip_the_late_reply_restarts_nothing():
    """The same slowed reply with no blip: the reply arrives within the attempt timeout, n0 runs on."""
    w = ScriptedWorld(nodes=2)
    w.options.update(starts=[0, 0])
    w.rule(NetRule("delay_reply", node="n0", op="PUT", key="nodes/n0", ms=1_500, times=1))
    h = w.run(until_ms=45_000)
    assert evs(h, "apply", where=lambda f: f.key.startswith("nodes/") and f.state.startswith("fenced ")) == []
    assert check_all(h) == []


def test_a_check_that_reads_its_own_fence_exits():
    """The model's side of F-3 (NL-10): when the check does read the fence naming its own instance
    (no delete), the process exits rather than write over it, and INV-10 holds."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.rule(NetRule("delay_apply", node="n0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    w.at(21_300, "fence", "n0")
    h = w.run(until_ms=45_000)
    (p0,) = procs(h, "n0")
    (exit_,) = evs(h, "exit", proc=p0)
    assert exit_.fields.status == 1 and "fenced naming this instance" in exit_.fields.reason
    assert check_all(h) == []


def test_f6_an_old_heartbeat_over_a_new_node_leaves_its_records_held():
    """F-6 (UP-2, UP-4, FN-5, FN-7, NL-10, INV-4), found by a sweep of the upgrade scenario (seeds 51100 and
    51836 of 50000..52999), shrunk to four faults and kept as a plan: the old n1 runs on past the switch; its
    heartbeat sent at 9.002 s is held back, so the new n1's start guard, reading an older heartbeat,
    passes at 10.611 s; the held-back heartbeat lands at 11.374 s over the new n1's live object; the new n1
    takes t0/c/a0, meets the old format at its next lease write and exits (NL-10); n1's machine is then gone
    for good. nodes/n1 stays "node n1": it frees nothing (FN-5) and takes no fence (FN-7), so t0/c/a0 stays
    held at the end."""
    h = _kept_plan("f6-old-heartbeat-over-a-new-node")
    (over,) = evs(h, "apply", where=lambda f: f.key == "nodes/n1" and f.prev_state.startswith("live ")
                  and f.state == "node n1")
    assert over.fields.sent_ms == 9_002 and over.t_ms == 11_374  # sent before the guard passed, landed after
    assert evs(h, "guard_passed", node="n1")[0].t_ms < over.t_ms
    exits = [e for e in evs(h, "exit", node="n1") if "old or unreadable format" in e.fields.reason]
    assert exits and exits[0].fields.status == 1
    found = _found(h)
    assert list(found) == ["F-6"] and {v.invariant for v in found["F-6"]} == {"INV-4"}
    # the same end, but the old heartbeat written over another instance's object: not F-6, a violation
    unexplained, found = _judged_doctored(h, over.i, over.fields._replace(prev_state="live 0badcafe 581967"))
    assert "F-6" not in found and "INV-4" in {v.invariant for v in unexplained}


def test_f6_also_delays_a_failover_past_t5s_bound():
    """F-6 under INV-7 (UP-2, UP-4, FN-5, NL-10), the form seed 4641 of a 20,000-seed sweep met (shrunk and
    kept as a plan): an old binary of n1 is started again after the switch (the procedure forbids it) and
    its unconditional heartbeat lands over the new n1's live object at 19.804 s; the new n1 meets the old
    format and exits at 19.995 s, in the quiet phase. An old-format object frees nothing (FN-5), so its
    actor waits for n1's next process, whose start guard waits out that heartbeat first: the new hold
    comes later than T-5's failover bound."""
    h = _kept_plan("f6-old-heartbeat-delays-a-failover")
    (over,) = evs(h, "apply", where=lambda f: f.key == "nodes/n1" and f.prev_state.startswith("live ")
                  and f.state == "node n1")
    exits = [e for e in evs(h, "exit", node="n1") if "old or unreadable format" in e.fields.reason]
    assert exits and exits[0].t_ms > over.t_ms
    found = _found(h)
    assert list(found) == ["F-6"] and {v.invariant for v in found["F-6"]} == {"INV-7"}
    # the same failover, but the heartbeat landed over another instance's object: a violation, no finding
    unexplained, found = _judged_doctored(h, over.i, over.fields._replace(prev_state="live 0badcafe 510696"))
    assert "F-6" not in found and "INV-7" in {v.invariant for v in unexplained}


def test_f6_also_when_a_forget_deletes_the_old_heartbeat_with_no_fence_after():
    """F-6 under INV-4, the form seed 18163 of a 20,000-seed sweep met (shrunk and kept as a plan): the old
    n0, started again after the switch, writes its heartbeat over the new n0's live object; the new n0 exits
    (NL-10) and its machine is gone for good. The quiet phase's operator fences n0 (nothing to fence: an old
    format, FN-7), then forgets it (FN-8 deletes the stale old heartbeat): nodes/n0 ends absent, which frees
    nothing (FN-5), so t0/c/a8 stays held. The remedy is forget, then fence."""
    h = _kept_plan("f6-old-heartbeat-forgotten-not-fenced")
    (over,) = evs(h, "apply", where=lambda f: f.key == "nodes/n0" and f.prev_state.startswith("live ")
                  and f.state == "node n0")
    (forgot,) = evs(h, "apply", where=lambda f: f.key == "nodes/n0" and f.op == "DELETE")
    assert forgot.t_ms > over.t_ms and forgot.fields.prev_state == "node n0"
    found = _found(h)
    assert list(found) == ["F-6"] and {v.invariant for v in found["F-6"]} == {"INV-4"}
    # the same end, but a fence of n0 landed after the landing (a format-3 object again): no finding
    f = forgot.fields
    fenced = f._replace(op="PUT", cond="if-match", serial=f.prev_serial + 1000, state="fenced 68e1a746 0")
    unexplained, found = _judged_doctored(h, forgot.i, fenced)
    assert "F-6" not in found and "INV-4" in {v.invariant for v in unexplained}


def test_f2_also_when_the_acquire_write_failed_fast():
    """F-2, the form seed 6445 of a 20,000-seed sweep met (shrunk and kept as a plan): the acquire's
    record write failed fast (refused before it was sent: it never reached the bucket), its read-back
    failed too, and the drain that followed never ended."""
    h = _kept_plan("f2-acquire-write-failed-fast")
    assert any(e.kind == "fault" and e.fields.what == "fail_fast" and e.fields.target.startswith("PUT owners/")
               for e in h.events)
    found = _found(h)
    assert list(found) == ["F-2"] and found["F-2"][0].invariant == "INV-11"


def test_f2_judged_where_inv11_judges_past_the_events_still_running():
    """F-2, the form seed 3089 of the 20,000-seed sweep at ab1ad2a met (shrunk and kept as a plan): n0's
    acquisition write of t0/c/a0 is lost just before a drain; the drain waits for an event of t1/c/a3 running
    to 19.093 s, so INV-11's bound runs past it (CS-1, CS-3), and n0 released t1/c/a3 at 19.094 s. Judged at
    INV-11's own instant (checkers/drain_ends.judged_until), only the unresolved entry holds the drain: F-2.
    The same run without that release: another record still names n0 when the drain is judged, a reason that
    is not F-2's, and INV-11 is unexplained (the resolver reading for ever stays F-2's, CONV-1)."""
    h = _kept_plan("f2-drain-judged-past-its-running-events")
    running = evs(h, "running", where=lambda f: f.until_ms > 19_000, proc=procs(h, "n0")[0])[0]
    found = _found(h)
    assert list(found) == ["F-2"] and found["F-2"][0].invariant == "INV-11"
    (release,) = evs(h, "apply", where=lambda f: f.key == "owners/t1/c/a3" and f.state == "nobody 1")
    assert release.t_ms > running.t_ms + 6_000
    unexplained, found = _judged_moved(h, release.i, None)
    assert "INV-11" in {v.invariant for v in unexplained}
    assert "INV-11" not in {v.invariant for v in found.get("F-2", [])}  # (its resolver's reads stay F-2's CONV-1)


def test_f2_also_when_the_acquire_write_was_refused_409():
    """F-2, the form seed 854 of a 2,000-seed sweep met once drains waited for the node to hold actors
    (shrunk and kept as a plan): the bucket answered the acquire's record write 409 (a conflict with a
    peer's release of the same record, still in flight: not applied), OR-7 counts a conflict as not
    succeeded, the read back finds the record unchanged, and the unresolved acquire is read for ever
    (OR-8): the drain that follows never ends (CS-3). Issue 47: a 409 only while another conditional write
    to the key is in flight (the plan slows the release's answer so that it is); the chain names it, and a
    409 the world records with nothing in flight (no store's answer) is no cause of F-2's."""
    h = _kept_plan("f2-acquire-write-conflicted")
    (conflict,) = evs(h, "conflicted", where=lambda f: f.key == "owners/t0/c/a2")
    (release,) = evs(h, "apply", where=lambda f: f.key == "owners/t0/c/a2" and f.state == "nobody 1")
    assert (conflict.fields.racing_proc, conflict.fields.racing_sent_ms) == (release.proc, release.fields.sent_ms)
    found = _found(h)
    assert list(found) == ["F-2"] and found["F-2"][0].invariant == "INV-11"
    _un, _found_again, chains = classify_chains(h, check_all(h))
    assert all(f"{h.processes[release.proc].label}'s conditional write of it" in c.cause[0].what for _v, c in chains)
    unexplained, found = _judged_doctored(h, conflict.i, conflict.fields._replace(racing_proc=None))
    assert "F-2" not in found and "INV-11" in {v.invariant for v in unexplained}
    # the same drain, the 409 on a record that changed before the drain's bound (n0 released t1/c/a1 as it
    # drained): nothing waits on it, no finding
    unexplained, found = _judged_doctored(h, conflict.i, conflict.fields._replace(key="owners/t1/c/a1"))
    assert "F-2" not in found and "INV-11" in {v.invariant for v in unexplained}


def test_f3_also_when_the_first_write_met_its_fence_and_a_twin_replaced_it():
    """F-3, the form seed 13073 of a 20,000-seed sweep met (shrunk and kept as a plan): the instance's
    first write was refused by a fence naming it (a 412 does not say what it met), a twin wrote live over
    that fence before the instance's start check read it, and once the twin was fenced in turn the instance
    wrote live over that other fence and acted: INV-10's second clause, the same gap as F-3."""
    h = _kept_plan("f3-fence-met-then-replaced-by-a-twin")
    found = _found(h)
    assert list(found) == ["F-3"] and found["F-3"][0].invariant == "INV-10"
    j = found["F-3"][0].events[0]
    assert h.events[j].kind == "refused" and h.events[j].fields.met.startswith("fenced ")


def test_f3_also_when_every_write_of_the_check_went_unanswered():
    """F-3 with more than one write (NL-7, FN-3, FN-7, INV-10; seed 13963 of the 20,000-seed sweep with issue
    47's pause draw, shrunk and kept as a plan): n1's first write lands late (its answer timed out), its check
    reads its own object, waits and writes again (If-Match): that write's reply is lost too, so n1 is still in
    its check, keeping its instance. n0 fences the second write's object; n1's next write meets the fence but
    its 412 comes too late to be read; the fence is deleted by mistake and the operator fences the absent
    object ("fenced -", naming no instance), which n1's check waits out and writes over under the fenced
    instance. Before this form F-3 asked for exactly one write before the fence."""
    h = _kept_plan("f3-check-writes-lost-then-deleted")
    chains = classify_chains(h, check_all(h))[2]
    assert [(v.invariant, c.finding) for v, c in chains] == [("INV-10", "F-3")]
    v, c = chains[0]
    fence, over = (h.events[i] for i in v.events)
    p = over.proc
    writes = [e for e in evs(h, "apply", where=lambda f: f.key == fence.fields.key)
              if e.proc == p and e.t_ms < fence.t_ms]
    assert len(writes) == 2 and fence.fields.prev_state == writes[-1].fields.state
    assert f"sent at {writes[-1].fields.sent_ms / 1000:.3f} s" in c.cause[0].what
    assert over.fields.prev_state.startswith("fenced - ")  # the operator's fence of the absent object


def test_f3_with_more_writes_is_not_f3_once_one_of_them_was_answered():
    """The control of the form above: the same history with the answer to n1's first write delivered (ok).
    n1 then knew a lease of its own (NL-4) and ran; a running process fenced that writes live again is a bug
    (NL-10), not F-3: INV-10 stands unexplained."""
    h = _kept_plan("f3-check-writes-lost-then-deleted")
    (first,) = evs(h, "record_reply", where=lambda f: f.op == "PUT" and f.key == "nodes/n1"
                   and f.status == "timed_out" and f.state.endswith(" 491299"))
    unexplained, found = _judged_doctored(h, first.i, first.fields._replace(status="ok", serial=1))
    assert "F-3" not in found and "INV-10" in {v.invariant for v in unexplained}


def test_f3_also_when_the_first_reply_is_lost_to_an_outage():
    """F-3, the form seed 8404 of the 20,000-seed sweep met on issue 38's draw (shrunk and kept as a plan): n1's
    first lease write lands at 22.951 s, and a global outage (refusing) begins 85 ms later: its reply is lost on
    the way (the world notes it: `reply_lost`, "cut off"), so n1 goes back to its start check keeping its
    instance (NL-7). n0 fences that object at 38.710 s; a twin of n1 starts at 42.805 s and, its check's first
    read showing that fence (NL-5's shortcut), writes live over it; n0 fences the twin at 57.372 s; n1's check,
    back after its machine's own outage, first read the twin's live object, so the fence naming the twin lets it
    go on (NL-5), and n1 writes live again at 72.621 s, its own fence long gone. With the world's record of that
    write's answer doctored to an acknowledgement (`record_reply` ok: issue 44, the fact, not a timer), n1 learnt
    its write landed and ran on: writing live after its fence is a bug."""
    h = _kept_plan("f3-first-reply-lost-to-an-outage")
    (lost,) = evs(h, "fault", where=lambda f: f.what == "reply_lost" and f.target == "PUT nodes/n1")
    assert lost.fields.detail == "cut off"
    found = _found(h)
    assert list(found) == ["F-3"] and found["F-3"][0].invariant == "INV-10"
    (answer,) = evs(h, "record_reply", proc=lost.proc,
                    where=lambda f: f.key == "nodes/n1" and f.op == "PUT" and f.status == "timed_out"
                    and f.state == lost.fields.state)
    unexplained, found = _judged_doctored(h, answer.i, answer.fields._replace(status="ok"))
    assert "F-3" not in found and "INV-10" in {v.invariant for v in unexplained}


# --- each finding's preconditions without its cause: a violation, never the finding -------------------------
# A classifier recognises its finding by the causal chain its docstring states (checkers/findings.py), read in
# world facts. Each test below doctors a reproduction so that the finding's preconditions still hold but one
# link of its chain is gone, and expects the violation to fail the run.


def _judged_moved(h, index: int, to_ms: int, fields: tuple | None = None):
    """(unexplained violations, findings) of a copy of `h` whose event `index` happens at `to_ms` instead
    (moved to its place in time order; `fields`: its fields changed too), or is gone (`to_ms` None)."""
    doctored = copy.deepcopy(h)
    doctored._sha = None
    doctored.cache.clear()
    t, p, kind, f = doctored.events.pop(index)
    if to_ms is not None:
        at = next((k for k, e in enumerate(doctored.events) if e.t_ms > to_ms), len(doctored.events))
        doctored.events.insert(at, event(to_ms, p, kind, f if fields is None else fields))
    return classify(doctored, check_all(doctored))


def _f1_script():
    w = ScriptedWorld(nodes=2, restart=False)
    w.at(0, "twin", "n0", "t0")
    w.rule(NetRule("delay_apply", machine="t0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    # n0's first write lands 30 ms late: the twin's last check read, sent just before, finds no object
    w.rule(NetRule("delay_apply", machine="m0", op="PUT", key="nodes/n0", ms=30, times=1))
    w.at(20_900, "delete", "nodes/n0")
    return w.run(until_ms=40_000)


def test_f1_without_its_cause_is_a_violation_the_delete_before_the_others_object():
    """F-1's chain (NL-5, NL-7, LEASE-1): the mistaken delete removed the other process's live object, and
    the twin's write took the key it emptied. The doctored copy has the delete at 14 s, before n0 wrote
    its object at 15 s: every precondition still holds (a delete of nodes/n0, the twin started before it,
    its first live write landed after it, both held the lease), but the twin's write on no object landed
    over n0's live one, which nothing removed: not F-1, a violation."""
    h = _f1_script()
    (delete,) = evs(h, "fault_delete", where=lambda f: f.key == "nodes/n0")
    first, twin = procs(h, "n0")
    created = evs(h, "apply", proc=twin, where=lambda f: f.key == "nodes/n0")[0]
    own = evs(h, "apply", proc=first, where=lambda f: f.key == "nodes/n0")
    assert own[0].t_ms > 14_000 and created.t_ms > delete.t_ms and h.events[4].proc == twin  # started at 0
    unexplained, found = _judged_moved(h, delete.i, 14_000)
    assert "F-1" not in found and "LEASE-1" in {v.invariant for v in unexplained}


def test_f3_without_its_cause_is_a_violation_the_fence_never_gone():
    """F-3's chain (NL-7, FN-7, INV-10): the late first write, the fence, and the fence gone before the check
    read it. The doctored copy has no mistaken delete: n0 still writes live on no object over its fence
    (the history says so, nothing explains it), which is what the precondition "it wrote over something
    else than the fence" saw. Not F-3: a violation."""
    w = ScriptedWorld(nodes=2, restart=False)
    w.rule(NetRule("delay_apply", node="n0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    w.at(21_300, "fence", "n0")
    w.at(21_500, "delete", "nodes/n0")
    h = w.run(until_ms=45_000)
    assert list(_found(h)) == ["F-3"]
    (delete,) = evs(h, "fault_delete", where=lambda f: f.key == "nodes/n0")
    unexplained, found = _judged_moved(h, delete.i, None)
    assert "F-3" not in found and "INV-10" in {v.invariant for v in unexplained}


def test_f3_without_its_cause_is_a_violation_the_fence_replaced_after_the_reread():
    """F-3's other form (seed 13073, kept as a plan): the twin wrote over the fence 0.257 s after the
    instance's write met it, within the reply and re-read INV-10 allows (2 attempt timeouts), so the check
    never read it. The doctored copy has that write land 1.5 s after the meeting: the check had read the
    fence by then, and an instance that runs on after reading its fence is a bug (NL-10), not F-3."""
    h = _kept_plan("f3-fence-met-then-replaced-by-a-twin")
    (v,) = _found(h)["F-3"]
    met = h.events[v.events[0]]
    bound = 2 * Params(**h.params).attempt_timeout_ms
    (over,) = evs(h, "apply", where=lambda f: f.key == met.fields.key and f.prev_state == met.fields.met)
    assert met.t_ms < over.t_ms <= met.t_ms + bound and over.proc != met.proc
    unexplained, found = _judged_moved(h, over.i, met.t_ms + 3 * bound)
    assert "F-3" not in found and "INV-10" in {v.invariant for v in unexplained}


def _f4_script():
    p = Params(ttl_ms=10_000, grace_ms=0, safety_ms=2_000, max_skew_ms=1_000, heartbeat_period_ms=3_000,
               attempt_timeout_ms=2_000)
    w = ScriptedWorld(nodes=2, params=p, clocks={"m0": [99_000, 0], "m1": [101_000, 0]})
    w.options.update(starts=[0, 1_500], blip=[31_000, 6_500, "blackhole"], blip_alone=True)
    # n1's check passes 40 ms late: its validity ends ~50 ms after its watch rounds (see the F-4 test above)
    w.rule(NetRule("delay_reply", node="n1", op="GET", key="nodes/n1", after_ms=11_000, ms=40, times=1))
    return w.run(until_ms=60_000)


def test_f4_without_its_cause_is_a_violation_the_blip_ended_long_before_the_deadline():
    """F-4's chain (FN-2, INV-9, T-2): the blip lasted until after n0's validity ran out, and n0 renewed as
    soon as the bucket let it, too late. The doctored copy's blip ends after 0.2 s (the world's outage
    record says so): n0's lease still ran out in it (37.5 s) and n1 still fenced it, but n0 stayed silent
    for 6 s after the bucket was back, far past a period and an attempt timeout: its lapse is its own, not
    the blip's. Not F-4 (nor F-5): a violation."""
    h = _f4_script()
    assert list(_found(h)) == ["F-4"]
    (outage,) = evs(h, "outage", where=lambda f: f.machine == "*")
    assert outage.t_ms == 31_000 and outage.fields.until_ms == 37_500
    unexplained, found = _judged_doctored(h, outage.i, outage.fields._replace(until_ms=31_200))
    assert not found and {v.invariant for v in unexplained} == {"INV-9"}  # the fence, and the exit it caused


def test_f5_without_its_cause_is_a_violation_the_reply_in_before_the_blip():
    """F-5's chain (NL-7, NL-9, INV-9): the blip swallowed the reply to n0's first write. In the doctored copy
    the world delivered that reply at 15.029 s (`record_reply` ok: issue 44, the world's record, not the maximum
    delay standing in for it), before the blip began at 15.5 s, so n0 knew its lease was valid, and being fenced
    at 30 s for a write 0.5 s before a 5 s blip is a bug. The precondition (one write, sent less than an
    attempt timeout before the blip) still holds. Not F-5 (nor F-4): a violation."""
    w = ScriptedWorld(nodes=2)
    w.options.update(starts=[0, 0], blip=[15_500, 5_000, "blackhole"], blip_alone=True)
    w.rule(NetRule("delay_reply", node="n0", op="PUT", key="nodes/n0", ms=1_500, times=1))
    h = w.run(until_ms=45_000)
    assert list(_found(h)) == ["F-5"]
    n0 = procs(h, "n0")[0]  # (its restart after the exit is another process)
    answer = evs(h, "record_reply", proc=n0, where=lambda f: f.key == "nodes/n0" and f.op == "PUT")[0]
    assert answer.fields.status == "timed_out" and answer.t_ms >= 15_500
    unexplained, found = _judged_moved(h, answer.i, 15_029, answer.fields._replace(status="ok"))
    # the fence, and the exit it caused; the doctored answer also leaves the lease task's record at odds with
    # its cadence (LEASE-2, COST-6 judge the copy itself): what matters is that F-5 does not absorb INV-9
    assert not found and "INV-9" in {v.invariant for v in unexplained}


def test_f6_without_its_cause_is_a_violation_the_heartbeat_landed_after_the_death():
    """F-6 under INV-7 (UP-4, FN-5, NL-10, kept as a plan): the old heartbeat over n1's live object is what
    the failover waited on. The doctored copy has it land after the owner died: at the death nodes/n1 was
    the new n1's own live object, which a peer fences and frees (FN-3, FN-5) within T-5's bound, so the
    late failover is not F-6 but a violation. (F-6's other doctored copies are in its reproductions.)"""
    h = _kept_plan("f6-old-heartbeat-delays-a-failover")
    (v,) = _found(h)["F-6"]
    died = h.events[v.events[0]]
    (over,) = evs(h, "apply", where=lambda f: f.key == "nodes/n1" and f.prev_state.startswith("live ")
                  and f.state == "node n1")
    assert over.t_ms < died.t_ms
    unexplained, found = _judged_moved(h, over.i, died.t_ms + 1)
    assert "F-6" not in found and "INV-7" in {v.invariant for v in unexplained}


# --- each finding's intact chain beside an unrelated bug: the bug's violation fails the run ------------------
# (issue 36) A classifier explains only what its chain names: the same process, record, write and instants. Each
# test below keeps a finding's reproduction whole (the finding is still found) and adds a second, independent
# violation, from a broken model grafted into the script (a process of it started later) or run over the
# finding's kept plan: that violation must come out unexplained, and the verdict must fail the run.


def _judged(h):
    """(unexplained invariants, {finding: its invariants}, the run failed) of a history, not strict."""
    from checkers.verdict import judge

    v = judge(h)
    found = {fid: sorted({x.invariant for x in vs}) for fid, vs in v.findings.items()}
    return sorted({x.invariant for x in v.violations}), found, v.failed


def _f1_beside(bug: str, fence_at: int | None = None):
    """F-1's script, then a process of n0 running `bug` from 46 s (the twin crashed at 45 s): it is asked
    for A0 at 70 s; `fence_at`: the operator fences n0 then."""
    from broken_models import load_model

    w = ScriptedWorld(nodes=2, restart=False)
    w.at(0, "twin", "n0", "t0")
    w.rule(NetRule("delay_apply", machine="t0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    w.rule(NetRule("delay_apply", machine="m0", op="PUT", key="nodes/n0", ms=30, times=1))  # (as _f1_script)
    w.at(20_900, "delete", "nodes/n0")
    w.at(45_000, "crash", "n0", "t0")
    w.at(46_000, "start", "n0", "m0", load_model(bug))
    w.at(70_000, "request", "n0", A0)
    if fence_at is not None:
        w.at(fence_at, "fence", "n0")
    return w.run(until_ms=90_000)


def test_f1_beside_a_process_of_the_same_node_that_serves_without_restoring():
    """F-1 (LEASE-1) and, 25 s later, a later process of the same node n0 running no_restore (OR-3) serves A0
    without listing its data: INV-8. The old classifier took every violation whose processes all belonged to
    n0 for F-1 and passed this run; the INV-8 names neither the twin's window nor a record freed by it."""
    unexplained, found, failed = _judged(_f1_beside("no_restore"))
    assert found == {"F-1": ["LEASE-1"]} and unexplained == ["INV-8"] and failed


def test_f1_beside_a_process_of_the_same_node_that_runs_on_fenced():
    """F-1 (LEASE-1) and a later process of n0 running fenced_keeps_running (NL-10), fenced by the operator at
    75 s: INV-10, unexplained (the old classifier absorbed it as F-1)."""
    unexplained, found, failed = _judged(_f1_beside("fenced_keeps_running", fence_at=75_000))
    assert found == {"F-1": ["LEASE-1"]} and unexplained == ["INV-10"] and failed


def test_f2_beside_a_bug_that_loses_acknowledged_data():
    """F-2's kept plan (the acquisition's write failed fast, the drain never ends) run under no_restore: the
    drain still waits on the unresolved acquire (F-2), and a hold that serves without restoring is INV-8,
    unexplained."""
    unexplained, found, failed = _judged(run_plan(dict(_plan("f2-acquire-write-failed-fast"), model="no_restore")))
    assert found == {"F-2": ["CONV-1", "INV-11"]} and unexplained == ["INV-8"] and failed


def test_f2_is_an_acquisitions_lost_write_never_a_releases():
    """The F-2 demonstration of issue 36, kept as a plan (seed 37 of swarm, shrunk): pending_release_rereads
    (OR-5) loses a release, then only re-reads the record, which keeps naming the process for ever: CONV-1.
    The lost write was a release (`nobody`), not an acquisition: not F-2 (the old classifier counted any lost
    write to the record and passed this run)."""
    plan = json.loads((Path(__file__).parents[1] / "plans" / "broken" / "pending_release_rereads.json").read_text())
    h = run_plan(plan)
    lost = evs(h, "fault", where=lambda f: f.target.startswith("PUT owners/") and f.what in ("request_lost", "fail_fast"))
    assert lost and all(f.fields.state.startswith("nobody ") for f in lost)
    unexplained, found, failed = _judged(h)
    assert found == {} and "CONV-1" in unexplained and failed  # (CONV-2 names the record too, issue 37)


def _f3_beside(bug: str | None):
    """F-3's script (n0's late first write fenced at 21.3 s, the fence deleted at 21.5 s) with n1 running
    `bug`, fenced by the operator at 40 s; its object deleted by mistake 3.5 s after its write met that
    fence."""
    from broken_models import load_model

    def script(delete_at=None):
        w = ScriptedWorld(nodes=1, restart=False, clocks={"m1": [100_000, 0]})
        w.at(0, "start", "n1", "m1", load_model(bug) if bug else None)
        w.rule(NetRule("delay_apply", node="n0", op="PUT", key="nodes/n0", ms=6_000, times=1))
        w.at(21_300, "fence", "n0")
        w.at(21_500, "delete", "nodes/n0")
        w.at(40_000, "fence", "n1")
        if delete_at is not None:
            w.at(delete_at, "delete", "nodes/n1")
        return w.run(until_ms=60_000)

    met = evs(script(), "refused", node="n1", where=lambda f: f.met.startswith("fenced "))
    return script(met[0].t_ms + 3_500)


def test_f3_beside_a_running_process_that_reads_its_fence_and_runs_on():
    """The F-3 demonstration of issue 36: n1 runs fenced_keeps_running (NL-10): its lease write meets the
    operator's fence, its re-read shows the fence, it reports the loss and keeps running; its object is deleted
    by mistake 3.5 s later. F-3's second form was judged on that timing alone; n1 was running (its live writes
    acknowledged), not in its start check: INV-10, unexplained, beside n0's intact F-3."""
    unexplained, found, failed = _judged(_f3_beside("fenced_keeps_running"))
    assert found == {"F-3": ["INV-10"]} and unexplained == ["INV-10"] and failed
    # the correct model in n1's place exits at its re-read: F-3 alone, the run passes
    assert _judged(_f3_beside(None)) == ([], {"F-3": ["INV-10"]}, False)


@F4_PLAN_GONE
def test_f4_beside_a_process_that_runs_on_fenced():
    """F-4's kept plan run under fenced_keeps_running: the blip's fence is still F-4's (its exit too), and the
    fenced process that runs on past its fence is INV-10, unexplained."""
    unexplained, found, failed = _judged(run_plan(dict(_plan("f4-fence-sent-before-the-fencer-lapsed"),
                                                       model="fenced_keeps_running")))
    assert found == {"F-4": ["INV-9"]} and "INV-10" in unexplained and failed  # (CONV-1 sees its refused writes)


def test_f4_beside_another_fence_in_the_blips_span():
    """F-4's script and an operator's fence of the fencer n1 at 45 s, inside INV-9's span: that fence and n1's
    exit are INV-9 violations of their own, which F-4's chain (a peer whose lease never lapsed, at FN-3's bound)
    does not name."""
    p = Params(ttl_ms=10_000, grace_ms=0, safety_ms=2_000, max_skew_ms=1_000, heartbeat_period_ms=3_000,
               attempt_timeout_ms=2_000)
    w = ScriptedWorld(nodes=2, params=p, clocks={"m0": [99_000, 0], "m1": [101_000, 0]})
    w.options.update(starts=[0, 1_500], blip=[31_000, 6_500, "blackhole"], blip_alone=True)
    w.rule(NetRule("delay_reply", node="n1", op="GET", key="nodes/n1", after_ms=11_000, ms=40, times=1))  # (_f4_script)
    w.at(45_000, "fence", "n1")
    h = w.run(until_ms=60_000)
    from checkers.verdict import judge

    v = judge(h)
    assert list(v.findings) == ["F-4"] and {x.invariant for x in v.violations} == {"INV-9"} and v.failed
    assert any("n1/" in x.message and "exited" in x.message for x in v.violations)


def test_f5_beside_another_fence_in_the_blips_span():
    """F-5's script with a third node fenced by the operator at 35 s, inside INV-9's span: F-5 explains n0's
    fence and exit, never the operator's fence of n2 nor n2's exit."""
    w = ScriptedWorld(nodes=3)
    w.options.update(starts=[0, 0, 0], blip=[15_500, 5_000, "blackhole"], blip_alone=True)
    w.rule(NetRule("delay_reply", node="n0", op="PUT", key="nodes/n0", ms=1_500, times=1))
    w.at(35_000, "fence", "n2")
    h = w.run(until_ms=55_000)
    from checkers.verdict import judge

    v = judge(h)
    assert list(v.findings) == ["F-5"] and v.failed
    n2 = h.processes[procs(h, "n2")[0]].label
    assert sorted(x.message.split(", ")[-1].rsplit(" at ", 1)[0] for x in v.violations) == [f"{n2} exited",
                                                                                          "operator/op fenced n2"]


def test_f6_beside_a_bug_that_loses_acknowledged_data():
    """F-6's kept plan (an old heartbeat over n1's live object delays the failover past T-5's bound) run under
    no_restore: F-6 still explains the late failover (INV-7); the hold that serves without restoring is INV-8,
    unexplained."""
    unexplained, found, failed = _judged(run_plan(dict(_plan("f6-old-heartbeat-delays-a-failover"), model="no_restore")))
    assert found == {"F-6": ["INV-7"]} and unexplained == ["INV-8"] and failed


def _plan(name: str) -> dict:
    return json.loads((Path(__file__).parents[1] / "plans" / f"{name}.json").read_text())


@pytest.mark.parametrize("name", ["f6-old-heartbeat-over-a-new-node", "f6-old-heartbeat-delays-a-failover"])
def test_f6_without_its_premise_is_a_violation_the_guard_passed_on_a_fresh_heartbeat(name):
    """F-6's premise (UP-2): the new node's start guard passed by the rule, every old heartbeat its last round
    could read stale, so the one that later landed over its object was one it could not see. The doctored copy
    has the old binary's heartbeat applied, fresh, 2.5 s before the guard passed (before its last round began):
    the guard passed on a fresh heartbeat (UP-2 says so), a bug of the guard, and the held actor (INV-4) or the
    late failover (INV-7) that follows is no longer F-6 (the old classifier never checked the premise)."""
    h = _kept_plan(name)
    over = evs(h, "apply", where=lambda f: f.key.startswith("nodes/") and f.prev_state.startswith("live ")
                and f.state.startswith("node "))[0]
    node = over.fields.key[len("nodes/"):]
    i = next(k for k, pr in enumerate(h.processes) if pr.instance == over.fields.prev_state.split(" ")[1])
    guard = evs(h, "guard_passed", proc=i)[0]
    fresh = guard.t_ms - 2_500
    doctored = copy.deepcopy(h)
    doctored._sha = None
    doctored.cache.clear()
    at = next(k for k, e in enumerate(doctored.events) if e.t_ms > fresh)
    doctored.events.insert(at, event(fresh, over.proc, "apply",
                                     over.fields._replace(sent_ms=fresh - 3, prev_state="node " + node)))
    unexplained, found = classify(doctored, check_all(doctored))
    assert "F-6" not in found and "UP-2" in {v.invariant for v in unexplained}
    assert {v.invariant for v in unexplained} & {"INV-4", "INV-7"}


@pytest.mark.slow
def test_f2_demonstration_a_release_only_rereading_model_is_caught_and_never_hides_as_f2():
    """The F-2 demonstration of issue 36 at its size, 2,000 swarm seeds (slow: two campaigns): the OR-5 model
    whose pending release only re-reads the record (broken_models/pending_release_rereads.py) fails the run,
    and shows F-2 in no more seeds than the correct model does on the same seeds, beyond chance (paired, a sign
    test): the old classifier counted any lost write and explained every violation of 11 such seeds as F-2
    where the correct model has none."""
    from rich.console import Console

    from checkers.paired import findings_paired, finding_seeds, more_often
    from campaign.run import resolve, run_campaign

    def campaign(name):
        return run_campaign(Console(quiet=True), resolve(name, "swarm", [], False, 0, 2_000), 0, 2_000, 2, "/dev/null",
                            quiet=True)

    bug, correct = campaign("pending_release_rereads"), campaign("correct")
    assert bug["failing_seeds"] and not correct["failing_seeds"]
    paired = findings_paired(finding_seeds(bug), finding_seeds(correct))
    assert not any(more_often(d) for d in paired.values()), paired


# --- issue 44: a bug grafted on the very process and actor a chain names ------------------------------------
# Issue 36's tests put a bug beside a finding, elsewhere in the run. These graft it on the process (and actor)
# the chain itself names, so that only the chain's window and scope (checkers/findings.py `Chain.covers`), its
# premises read on world facts, and every occurrence reported (part 3) can tell the bug from the finding. Each
# run must fail. (Scripts have no plan, so the necessity replay, tests/counterexamples/test_necessity.py, plays
# no part here: these are the chains' own guards.)


def _f1_on_the_same_actor(p_model: str | None, r_model: str | None, steps=()):
    """F-1's script (a twin t0 of n0 straddles a mistaken delete at 20.9 s) with n0's first process on m0 (p)
    running `p_model`, and n1 (r) running `r_model`, started at once; p serves A0 from 18.6 s, and after the
    twin's write landed (21 s) n1 takes A0 over p's record (FN-5: nodes/n0 live under another instance)."""
    from broken_models import load_model

    w = ScriptedWorld(nodes=1, restart=False, model=load_model(p_model) if p_model else None,
                      clocks={"m1": [100_000, 0]})
    w.at(0, "start", "n1", "m1", load_model(r_model or "correct"))
    w.at(0, "twin", "n0", "t0")
    w.rule(NetRule("delay_apply", machine="t0", op="PUT", key="nodes/n0", ms=6_000, times=1))
    w.rule(NetRule("delay_apply", machine="m0", op="PUT", key="nodes/n0", ms=30, times=1))  # (as _f1_script)
    # p's lease writes after the twin landed are refused, their replies slowed past A: p runs on, its window
    # from before the delete still valid, while n1 takes A0 over its record (F-1's INV-1/INV-8 chain)
    w.rule(NetRule("delay_reply", machine="m0", op="PUT", key="nodes/n0", after_ms=21_000, ms=2_500, times=3))
    w.at(18_600, "request", "n0", A0)
    w.at(20_900, "delete", "nodes/n0")
    w.at(23_000, "request", "n1", A0)
    for t, what, *args in steps:
        w.at(t, what, *args)
    return w.run(until_ms=90_000)


def test_f1_a_violation_from_before_the_delete_is_not_f1():
    """Issue 44 audit 1: n0's process p runs no_restore (OR-3) and serves A0 at 18.6 s without restoring, 2.3 s
    before the mistaken delete; after the twin's write landed, n1 takes A0 over p's record: F-1's chain for A0
    between p and n1. The INV-8 names p and A0, as the chain does, but it happened before the chain's cause:
    the old classifier never checked when, and absorbed it. Now it fails the run beside F-1's LEASE-1."""
    h = _f1_on_the_same_actor("no_restore", None)
    unexplained, found, failed = _judged(h)
    assert "LEASE-1" in found.get("F-1", []) and unexplained == ["INV-8"] and failed
    served = [e for e in evs(h, "served") if e.fields.actor == A0 and h.processes[e.proc].machine == "m0"][0]
    assert served.t_ms < 20_900
    assert _judged(_f1_on_the_same_actor(None, None))[2] is False  # the correct model: F-1 alone


def test_f1_a_later_hold_of_the_same_actor_is_its_own_occurrence():
    """Issue 44 audit 2: F-1 whole on A0 (p serves A0 at 23.5 s after n1 took it over p's record: INV-1 and the
    segment p acknowledged missing from n1's restore, INV-8, both F-1's). n1 hibernates A0 at 40 s; the twin
    crashes at 45 s and a new process of n0 running no_restore (OR-3) takes A0 at 72 s, 49 s after the chain,
    and serves it without restoring. INV-8 reported each actor once, so that hold hid behind F-1's; now each
    hold is its own occurrence, outside F-1's window and scope, and the run fails. Without the graft: F-1 alone."""
    from broken_models import load_model

    steps = ((23_500, "request", "n0", A0), (40_000, "hibernate", "n1", A0), (45_000, "crash", "n0", "t0"))
    graft = ((46_000, "start", "n0", "m0", load_model("no_restore")), (72_000, "request", "n0", A0))
    unexplained, found, failed = _judged(_f1_on_the_same_actor(None, None, steps + graft))
    assert found == {"F-1": ["INV-1", "INV-8", "LEASE-1"]} and unexplained == ["INV-8"] and failed
    assert _judged(_f1_on_the_same_actor(None, None, steps)) == ([], {"F-1": ["INV-1", "INV-8", "LEASE-1"]}, False)


def test_f3_a_second_fence_read_and_run_past_is_not_f3():
    """Issue 44 audit 3: F-3's kept plan (n1's first reply lost to an outage, its fence gone before its check
    read it, n1 writes live again at 72.6 s) run under fenced_keeps_running (NL-10), the operator fencing n1
    again at 80 s: n1's lease write meets that second fence, its re-read shows it, and it runs on. INV-10 judged
    only a process's first meeting; now each fence is its own occurrence, and this one is no F-3 (n1 was
    running: its live write acknowledged)."""
    plan = _plan("f3-first-reply-lost-to-an-outage")
    plan = dict(plan, model="fenced_keeps_running",
                options=dict(plan["options"], operator_fences=[["n1", 80_000]]))
    unexplained, found, failed = _judged(run_plan(plan))
    assert found == {"F-3": ["INV-10"]} and "INV-10" in unexplained and failed


def test_f3_a_check_that_read_its_fence_is_not_f3():
    """Issue 44 audit 4: F-3's second form decided "the check never read the fence" by a timer (the fence gone
    within 2 A of the meeting). In the doctored copy of its kept plan the world delivered to n3's start check a
    read showing its fence (`record_reply`) before the twin replaced it: n3 knew it was fenced (NL-10) and
    running on is a bug, whatever the timer says."""
    h = _kept_plan("f3-fence-met-then-replaced-by-a-twin")
    (met,) = evs(h, "refused", where=lambda f: f.met.startswith("fenced "))
    (twin,) = evs(h, "apply", where=lambda f: f.key == met.fields.key and f.prev_state == met.fields.met)
    refusal = [e for e in evs(h, "record_reply", proc=met.proc)
               if e.fields.op == "PUT" and e.fields.sent_ms == met.fields.sent_ms][0]
    read = [e for e in evs(h, "record_reply", proc=met.proc) if e.fields.op == "GET"][-1]
    at = refusal.t_ms + 5
    assert twin.t_ms > met.t_ms and at > twin.t_ms  # (the twin's write came first: the read is moved before it)
    doctored = copy.deepcopy(h)
    doctored._sha = None
    doctored.cache.clear()
    shown = read.fields._replace(state=met.fields.met, sent_ms=twin.t_ms - 3, status="ok")
    k = next(k for k, e in enumerate(doctored.events) if e.t_ms >= twin.t_ms)
    doctored.events.insert(k, event(twin.t_ms - 1, met.proc, "record_reply", shown))
    unexplained, found = classify(doctored, check_all(doctored))
    assert "F-3" not in found and "INV-10" in {v.invariant for v in unexplained}


class _SlowCadence(__import__("model.node", fromlist=["Model"]).Model):
    """NL-2 broken on purpose (a test's own graft), on node n0 only: its lease is written every P + 1 s."""

    name = "slow_cadence"

    def lease_tick(self, st, now, out):
        from model.frozen import replace
        from model.io import IF_MATCH, Mark, SetTimer

        if st.node_id != "n0":
            return super().lease_tick(st, now, out)
        out.append(Mark("NL-2"))
        next_send = now.mono_ms + st.params.period_ms + 1_000  # (the model's timers: on the monotonic clock)
        st = replace(st, lease=replace(st.lease, next_send_ms=next_send))
        out.append(SetTimer("lease_tick", next_send))
        return self.send_lease_write(st, now, IF_MATCH, st.lease.version, out)


def test_f4_a_node_writing_every_p_plus_a_second_is_not_f4():
    """Issue 44 audit 6: F-4's script (the blip at 33 s) with the fenced node n0 writing its lease every P + 1 s
    (NL-2 broken):
    it runs out in the blip and n1 fences it, as in F-4, but because it wrote too seldom, not because of where
    the blip fell in its cadence. F-4 never read the fenced node's cadence; now its lease writes before the blip
    (`record_reply`) must come every P on its clock, and this INV-9 fails the run."""
    p = Params(ttl_ms=10_000, grace_ms=0, safety_ms=2_000, max_skew_ms=1_000, heartbeat_period_ms=3_000,
               attempt_timeout_ms=2_000)
    w = ScriptedWorld(nodes=2, params=p, model=_SlowCadence(), clocks={"m0": [99_000, 0], "m1": [101_000, 0]})
    w.options.update(starts=[0, 1_500], blip=[33_000, 6_500, "blackhole"], blip_alone=True)
    w.rule(NetRule("delay_reply", node="n1", op="GET", key="nodes/n1", after_ms=11_000, ms=40, times=1))
    h = w.run(until_ms=60_000)
    fences = evs(h, "apply", where=lambda f: f.key == "nodes/n0" and f.state.startswith("fenced "))
    assert fences and 39_500 < fences[0].t_ms < 41_000  # (the old classifier took this fence for F-4)
    unexplained, found, failed = _judged(h)
    assert "F-4" not in found and "INV-9" in unexplained and failed


class _IgnoresFirstAck(__import__("model.node", fromlist=["Model"]).Model):
    """NL-7 broken on purpose (a test's own graft): a first write acknowledged is taken as failed."""

    name = "ignores_first_ack"

    def on_reply_lease_write(self, st, purpose, reply, now_ms, out):
        from model.node_lease import FIRST_WRITE

        if st.lease.phase == FIRST_WRITE and reply.status == "ok":
            return self.back_to_check(st, now_ms, out)
        return super().on_reply_lease_write(st, purpose, reply, now_ms, out)


def test_f5_a_node_that_got_its_reply_before_the_blip_is_not_f5():
    """Issue 44 audit 5 with a graft on the fenced process: F-5's script, n0 running a model that takes its
    first write's acknowledgement for a failure (NL-7 broken), the reply slowed so that the world delivers it
    just before the blip (`record_reply` ok at about 15.48 s, the blip at 15.5 s). n0 goes back to its check
    and is fenced in the blip as in F-5, but the blip swallowed nothing: the world delivered the reply. F-5 took
    the maximum delay for the reply's way back; now it reads the world's record, and the run fails."""
    w = ScriptedWorld(nodes=1, model=_IgnoresFirstAck(), clocks={"m1": [100_000, 0]})
    w.options.update(starts=[0], blip=[15_500, 5_000, "blackhole"], blip_alone=True)
    w.at(0, "start", "n1", "m1", __import__("broken_models", fromlist=["load_model"]).load_model("correct"))
    w.rule(NetRule("delay_reply", node="n0", op="PUT", key="nodes/n0", ms=450, times=1))
    h = w.run(until_ms=45_000)
    n0 = procs(h, "n0")[0]
    answer = evs(h, "record_reply", proc=n0, where=lambda f: f.key == "nodes/n0" and f.op == "PUT")[0]
    assert answer.fields.status == "ok" and answer.t_ms < 15_500
    unexplained, found, failed = _judged(h)
    assert "F-5" not in found and "INV-9" in unexplained and failed


def test_f2_over_its_own_record_is_a_release_not_an_unresolved_acquire():
    """Issue 44 audit 7: F-2 took a record frozen by the process's own never-retried release for an unresolved
    acquire. In the doctored copy of F-2's kept plan the record the lost acquisition would have replaced names
    the process itself (its own earlier hold): a release of its own (OR-5, retried until it lands) would end it, so
    a record frozen under its name is a release never retried, not F-2: its resolver's endless reads (CONV-1)
    are a violation."""
    h = _kept_plan("f2-acquire-write-failed-fast")
    (lost,) = evs(h, "fault", where=lambda f: f.target == "PUT owners/t0/c/a2" and f.what == "fail_fast")
    pr = h.processes[lost.proc]
    doctored = copy.deepcopy(h)
    doctored._sha = None
    doctored.cache.clear()
    own = ("owners/t0/c/a2", "PUT", "if-none-match", 0, 0, 999, f"held {pr.node_id} {pr.instance} 1", "", lost.t_ms - 50)
    k = next(k for k, e in enumerate(doctored.events) if e.t_ms >= lost.t_ms - 50)
    doctored.events.insert(k, event(lost.t_ms - 50, lost.proc, "apply", own))
    unexplained, found = classify(doctored, check_all(doctored))
    assert "F-2" not in found and "CONV-1" in {v.invariant for v in unexplained}  # (the old classifier: F-2)
