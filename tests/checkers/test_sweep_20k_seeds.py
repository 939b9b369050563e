"""Seeds of the 20,000-seed sweeps (sessions of 2026-12-07), each kept as its shrunk plan.

- Swarm seed 6148, a fault of the model (CS-2): told to stop, n0 set the releases' bounded wait (CS-1,
  5 s), found nothing to release and sent its `released` write at once; the wait's timer stayed set. The
  process paused 14.5 s; at the resume the stale timer came due first and was taken for a retry of the
  `released` write, 14.6 s after the first (CS-2 retries for A + 1 s). The model now cancels the wait's
  timer when the lease is made invalid, and a retry whose timer is taken past the window is not sent.
- Swarm seed 3504, a fault of the checker (LEASE-2 (e)): n2's lease write was answered 409, NL-9's re-read
  went out; a listing read of its own `nodes/n2` was answered before the re-read, and the checker took it
  for the re-read's answer and forgot the failed write, so the next write (when the re-read ended, as
  NL-2 allows) was judged against max(P, A) instead of max(P, 2 A).
- Swarm seed 10064, a fault of the checker (INV-7's fence clause): the fencer's listing in flight as the faults
  ended had its reply lost; it ended by its timeout, A later, and the next listing a period after that, so
  its first sight of the dead node's object came up to A later than "a period after the faults". A listing
  whose request met a fault (a world fact) now moves the fencer's calm to that request's timeout.
- Swarm seed 10534, a fault of the checker (INV-5): a drain and a resume told during one long pause; the
  process paused again the instant it resumed, before its queue was worked, and handled both at the end of
  the second pause. The commands were taken to act at the first pause's end, before the drained report.
  A pause that begins as one ends now carries the command on to its own end.
- Swarm seeds 13145 and 14089, a fault of the checker (INV-11): a drain told 14.5 s into a 48.9 s pause was
  judged "with no fault around it": the pause's fault event lies at its start, before the window the
  check looked in. A pause of the process overlapping the window is now a fault around the drain.
- Swarm seed 17602, a fault of the model (NL-9 with NL-8): n0's lease write (sent at 70.2 s) landed with its
  reply lost; its retry failed fast across a +15 s step of its wall clock; the next write met 412 and NL-9's
  re-read showed the 70.2 s write. That write's written_at, mapped back through the stepped wall clock, read
  15 s older than the last acknowledgement, so the model took it for a stale write and never adopted its
  version: every later write met 412, the lease never came back, the actors stayed unserved (INV-4,
  CONV-1). A re-read sent after the last acknowledgement shows a state at least as new; it is adopted.
- Swarm seed 5708 (the sweep at b53834e), a fault of the world (CS-1's straggler): a stop armed with a
  straggler waited for the node's next event; a long pause ended as the quiet phase began, and the first event
  served then was taken for the straggler. The stop it brings is skipped in the quiet phase, so the event ran
  its 30 s cap with no stop to end it, the actor releasing into the quiet phase's last span (CONV-1). No
  straggler is claimed in the quiet phase now.
- Swarm seed 12614 (the same sweep), a fault of the world (409s, issue 47 part 4): n3 paused between OR-2's
  check and its acquire write, and was killed as it woke: the write never left. The world had counted it in
  flight from the check, so n0's acquire of the same record met a 409 "racing" it; its read-back found the
  record absent, and the resolver read it absent for ever (F-2's shape), holding n0's drain (INV-11). A write
  held in its stopped process is in flight only once it leaves.
  Its shrink first said "the plan does not fail": the plan's replay read the bucket's 409s in the quiet phase
  as calm, though a recording run draws them there; 4 of swarm seeds 0..149 replayed from their recorded
  plans as other runs (2 that way, 2 by an idle actor's skipped ask). Both fixed
  (scenarios/plan.py KEPT_IN_QUIET, scenarios/workload.py IDLE): every seed of 0..299 replays identically.
Each plan fails on the code before its fix and passes after it, with its faults in the run.
"""

from __future__ import annotations

import json
import os

import pytest

from checkers.verdict import judge
from counterexamples.shrink import run_plan

PLANS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "plans")


def _run(name: str):
    with open(os.path.join(PLANS, name)) as f:
        return run_plan(json.load(f))


def test_cs2_a_stale_stop_timer_after_a_pause_sends_no_late_released_write():
    h = _run("cs2-stop-timer-due-after-a-pause.json")
    assert judge(h).violations == []
    pauses = [e for e in h.events if e.kind == "fault" and e.fields.what == "pause"]
    assert pauses and max(e.fields.ms for e in pauses) > 10_000  # the pause is in the run, not removed
    sent = [e.t_ms for e in h.events if e.kind == "released_sent"]
    assert sent, "the stop's released write is in the run"
    # CS-2: every `released` write within A + 1 s (and its re-read) of the first
    assert max(sent) - min(sent) <= h.params["attempt_timeout_ms"] * 3 + 1_000


def test_lease2_a_listing_read_answered_first_is_not_taken_for_nl9s_reread():
    """Seed 3504's shape as a hand-made history of world facts (its plan's 409 is no longer drawn since 409s
    need a racing write): a lease write refused at 5.5 s, NL-9's re-read sent on that answer; a listing read
    of the same object, sent earlier, answered first; the re-read answered at 7.4 s and the next write sent
    then, 3.4 s after the refused one: within max(P, 2 A) = 4 s (NL-2 lets a tick wait out the re-read)."""
    from factkit import ev, finish, history

    from checkers import lease_attempts

    h = history(("n0", "i0"), end_ms=12_000)

    def reply(at, op, status, sent):
        ev(h, at, 0, "record_reply", key="nodes/n0", op=op, status=status, state=f"live i0 {sent}", serial=1,
           named_serial=0 if op == "PUT" else None, sent_ms=sent)

    reply(1_030, "PUT", "ok", 1_000)
    reply(5_500, "PUT", "precondition_failed", 4_000)  # refused: NL-9's re-read goes out at 5.5 s
    reply(5_600, "GET", "ok", 5_000)  # the listing's read of its own object, sent before, answered first
    reply(7_400, "GET", "ok", 5_500)  # the re-read
    reply(7_420, "PUT", "ok", 7_400)
    reply(10_420, "PUT", "ok", 10_400)
    assert lease_attempts.check(finish(h)) == []


def test_inv7_a_listing_lost_as_the_faults_end_delays_the_fencers_first_sight_by_its_timeout():
    h = _run("inv7-listing-in-flight-at-calm-times-out.json")
    assert judge(h).violations == []
    assert any(e.kind == "fenced" for e in h.events)  # the takeover is in the run, judged
    lost = [e for e in h.events if e.kind == "fault" and (e.fields.target or "").startswith("LIST nodes/")]
    assert lost  # the listing's lost reply is in the run


def test_inv5_commands_told_in_a_pause_act_at_the_end_of_a_pause_that_follows_at_once():
    from checkers.facts import pauses

    h = _run("inv5-drain-and-resume-across-two-pauses.json")
    assert judge(h).violations == []
    chained = [(a, b) for spans in pauses(h).values() for a, b in zip(spans, spans[1:]) if b[0] == a[1]]
    assert chained  # a pause began as one ended: the case is in the run
    told = [e.fields.command for e in h.events if e.kind == "told"]
    assert "drain" in told and "resume" in told


def test_inv11_a_drain_told_inside_a_long_pause_has_a_fault_around_it():
    from checkers.facts import pauses

    h = _run("inv11-drain-told-inside-a-long-pause.json")
    assert judge(h).violations == []
    drains = [e for e in h.events if e.kind == "told" and e.fields.command == "drain"]
    assert drains and any(s < drains[0].t_ms < e for s, e in pauses(h).get(drains[0].proc, ()))


def test_nl9_a_reread_adopts_an_earlier_write_of_ours_across_a_wall_clock_step():
    h = _run("nl9-adopt-an-earlier-write-across-a-clock-step.json")
    assert judge(h).violations == []
    adopted = [e for e in h.events if e.kind == "lease_valid" and e.fields.how in ("adopt", "recovered")]
    assert adopted  # NL-9 adopted its own write
    steps = [p.clock.steps for p in h.processes if p.clock.steps]
    assert steps  # the wall clock's step is in the run


def test_cs1_no_straggler_is_claimed_once_the_quiet_phase_has_begun():
    """Seed 5708: a pause that ends as the quiet phase begins; no event then runs to the straggler's 30 s cap."""
    h = _run("sweep-5708-conv1.json")
    assert judge(h).violations == []
    pauses = [e for e in h.events if e.kind == "fault" and e.fields.what == "pause"]
    assert pauses, "the pause is in the run, not removed"
    quiet = next(e.t_ms for e in h.events if e.kind == "quiet")
    served = {(e.proc, e.fields.request): e.t_ms for e in h.events if e.kind == "served"}
    lengths = [e.t_ms - served[(e.proc, e.fields.request)] for e in h.events
               if e.kind == "answered" and e.t_ms >= quiet and (e.proc, e.fields.request) in served]
    assert lengths, "requests are served in the quiet phase"
    assert max(lengths) <= h.options["long_event_ms"][1], "an event in the quiet phase ran past the longest drawn"


def test_409_never_races_a_write_its_paused_sender_still_holds():
    """Seed 12614: n3's acquire write held by a pause between its check and the write, its process killed
    as it woke (the write never left); n0's acquire of the same record is not answered 409 against it."""
    h = _run("sweep-12614-inv11.json")
    assert judge(h).violations == []
    held = [e for e in h.events if e.kind == "fault" and e.fields.what == "pause"
            and "between its check and its write" in e.fields.detail]
    assert held, "the pause between the check and the write is in the run"
    assert not [e for e in h.events if e.kind == "conflicted"], "a 409 raced a write that never left"


@pytest.mark.parametrize("seed", [45, 66, 111, 12614])
def test_a_recorded_plan_replays_as_the_same_run(seed):
    """Record a seed's plan, replay it: the same history, hash for hash (seeds 45 and 12614: a 409 drawn in
    the quiet phase; 66 and 111: a client's ask skipped for an idle actor, then two steps at one instant)."""
    from counterexamples.shrink import record_seed

    plan, history = record_seed(seed, "correct", "swarm", {})
    assert run_plan(plan).sha256() == history.sha256()
