"""INV-8 nothing lost: every hold restores before it acts, and every data write acknowledged by
a valid owner is seen by every later owner's restore.

World facts only: a hold is a record write that took effect (checkers/facts.py); a restore is
a listing of `wal/<actor>/` that the world delivered to the holder (`listed`), sent after the
hold's record write took effect and delivered before the hold's first act (a request served,
a data write sent, an acknowledgement). Every segment acknowledged to a client before that
listing was sent, or acknowledged at any time by an earlier owner (its hold began before this
one), must be in it: the acknowledgement came after the bucket applied the segment (OR-4),
and an earlier owner's validity ended before this hold began (INV-1), so a listing sent later
sees it. (Whether the process that acknowledged it was a valid
owner is INV-1's question; the client was told it is durable either way.)

Every hold is judged on its own: a later hold's violation is reported beside an earlier one's (issue 44).

And a failed upload abandons its hold (OR-5, ADR: a hold ends with a release, "a failed upload"):
once the world answered a segment upload with a failure (`upload_failed`: an error, or the
timeout), the process starts no new work in that hold (its generation, which the segment's name
carries): it serves no request and sends no segment. (Its running events may end, and uploads
already in flight may be acknowledged: the release waits for the actor to stop, as today.) The segment may be missing or land later: the actor's state in memory runs ahead of
what a restore would see, and a later acknowledgement would promise data built on it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import islice

from history import History, Violation

from .facts import DATA, Facts, act_actor, facts, segment_generation
from .registry import invariant

INVARIANT = "INV-8"

# the acts that start new work for a hold: serving a request, sending a segment. Its running events
# may still end (`answered`) and uploads already in flight may still be acknowledged: the release
# waits for the actor to stop, as today (OR-5), and stops acting as owner before it is sent
NEW_WORK = ("served", "apply")


@invariant(INVARIANT, "nothing lost", kind="safety", rules=("OR-3", "OR-4", "OR-5"))
def check(history: History, fx: Facts | None = None) -> list[Violation]:
    fx = facts(history) if fx is None else fx
    events = history.events
    listings: dict[tuple[int, str], list[tuple[int, int, set, int]]] = {}  # (proc, actor) -> [(sent, at, keys, event)]
    for i in history.of_kind("listed"):
        t, p, _kind, f = events[i]
        if str.startswith(f.prefix, DATA):
            listings.setdefault((p, f.prefix[len(DATA):].rstrip("/")), []).append((f.sent_ms, t, set(f.keys), i))
    acts: dict[tuple[int, str], list[tuple[int, int]]] = {}
    # actor -> [(t, segment, event, when the acknowledging hold began)] acknowledged to a client
    acked: dict[str, list[tuple[int, str, int, int]]] = {}
    for t, p, actor, what, i in fx.acts:
        acts.setdefault((p, actor), []).append((t, i))
    act_times = {key: [t for t, _i in v] for key, v in acts.items()}
    for i in history.of_kind("data_acked"):  # a client was told it is durable (whether the teller was owner is INV-1's)
        t, p, _kind, f = events[i]
        began = max((h.start_ms for h in fx.by_proc_actor.get((p, f.actor), ()) if h.start_ms <= t), default=t)
        acked.setdefault(f.actor, []).append((t, f.segment, i, began))
    out = []
    # each hold judged on its own (issue 44: reported once per actor, a later hold's lost data hid behind
    # an earlier one, and behind a finding that explained the earlier one)
    for h in fx.holds:
        if h.end_ms <= h.start_ms:
            continue
        if h.renewal:
            continue  # an old binary renewing its own unchanged old lease after its validity ran out on its wall
            # clock (a step forward, issue 47): nobody held the actor in between (a taker changes the record), so
            # the restore of the hold it renews still covers it (as INV-2 counts no new generation for it)
        # its first act (acts in time order), not every one; none before the hold began (valid_at), so looked for
        # from there (bisection), not from the process's first act for the actor in every hold
        mine = acts.get((h.proc, h.actor), ())
        k = bisect_left(act_times[(h.proc, h.actor)], h.start_ms) if mine else 0
        first = next(((t, i) for t, i in islice(mine, k, None) if fx.valid_at(h, t)), None)
        if first is None:
            continue  # a hold that never acts needs no restore
        first_t, first_i = first
        restore = next((x for x in listings.get((h.proc, h.actor), ()) if x[0] >= h.start_ms and x[1] <= first_t), None)
        if restore is None:
            out.append(Violation(
                INVARIANT,
                f"{h.describe(history)} acted at {first_t / 1000:.3f} s without restoring first: no listing of "
                f"{DATA}{h.actor}/ sent after its record write took effect reached it before",
                (h.opened, first_i)))
            continue
        sent, _at, keys, j = restore
        for t, seg, k, began in acked.get(h.actor, ()):
            # acknowledged before this listing was sent, or by an owner that came before this one
            if (t < sent or began < h.start_ms) and seg not in keys:
                out.append(Violation(
                    INVARIANT,
                    f"actor {h.actor}: segment {seg}, acknowledged at {t / 1000:.3f} s, is missing from the restore "
                    f"of the {h.describe(history)} (listing sent at {sent / 1000:.3f} s)",
                    tuple(sorted((k, j)))))
                break
    out.extend(_acts_after_failed_uploads(history, fx, acts, act_times))
    return out


def _acts_after_failed_uploads(history: History, fx: Facts, acts: dict, act_times: dict) -> list[Violation]:
    """OR-5: no new work in a hold after the world answered one of its uploads with a failure."""
    out = []
    events = history.events
    # one judgement per hold (its process, actor and generation), not per actor, and per hold only from its first
    # failed upload: a later one's acts (those after it, in time order) are some of the first's, judged already
    seen: dict[tuple[int, str, int], int] = {}  # hold -> the time of the failed upload it was judged from
    for i in history.of_kind("upload_failed"):
        t, p, _kind, f = events[i]
        actor = act_actor(f.key)
        gen = segment_generation(f.key.rsplit("/", 1)[1])
        if seen.get((p, actor, gen), 1 << 62) <= t:
            continue
        seen[(p, actor, gen)] = t
        holds = fx.by_proc_actor.get((p, actor), ())
        mine = acts.get((p, actor), ())
        # the acts after t (in time order: found by bisection), those that start new work
        for t_act, j in islice(mine, bisect_right(act_times[(p, actor)], t) if mine else 0, None):
            if events[j].kind not in NEW_WORK:
                continue
            h = max((h for h in holds if h.start_ms <= t_act), key=lambda h: h.start_ms, default=None)
            if h is not None and h.generation == gen:
                out.append(Violation(
                    INVARIANT,
                    f"{history.processes[p].label} acted for {actor} at generation {gen} at {t_act / 1000:.3f} s "
                    f"({events[j].kind}), after its upload of {f.key} failed ({f.status}) at {t / 1000:.3f} s: a failed "
                    f"upload abandons the hold (OR-5)", (i, j)))
                seen[(p, actor, gen)] = -1  # reported: once per hold
                break
    return out
