"""Open entries met (issue 37, part 3: OR-5..OR-8, CS-3, OR-11): an acquisition's record write held back
past its sender's timeout, the read-back that follows it sometimes lost on the way, and a drain or a
move told to the node while its read-back is in flight or its entry unresolved.

A record is most easily left naming a node that no longer works for it where a drain or a move meets
an entry still open: the drain waits on it (CS-3), the resolver must read it until it decides (OR-8),
and a write that lands after its sender gave up names a node that never learned it (OR-7). Left to
chance, a drain or a move met a read-back in flight in 1.8 % of 2,000 swarm seeds and an unresolved entry
in 9.5 %; timed by this kind on what the world saw, in 22.5 % and 30.9 % (issue 37's closing note).

Honest: it does what a network and an operator can do, on what the world knows. A write held back and
applied after its sender's timeout (as `late` does), a read lost on the way (as `request_lost` does),
a drain or a move told at an instant of the operator's choosing. It picks the write by its body (an
acquisition's names its writer: `held <node> <instance> <g>`), the read by its key and sender, and the
instant by the answers the world delivered (`record_reply`: an acquisition's write answered with
anything but success, then the answer to the read of its record that follows); never the model's
state. Drawn in a share of the swarm's seeds from its own streams ("draw/open_entries",
"open_entries"), so no other part's draw moves; off in the quiet phase and while a race is shielded.
"""

from __future__ import annotations

from model.io import GET, OK, PUT, Command
from model.records import OWNERS_PREFIX, state_line

from . import FaultKind
from .drains import KIND as DRAINS

HELD = "\nheld "  # an acquisition's record body carries its writer on this state line
READBACK_LOST = 0.4  # the share of struck acquisitions whose read-back is lost on the way (OR-7's failed read)
# when the operator tells, once an acquisition's write failed: while its read-back is in flight, once the
# read-back found it unresolved, or not; after a write this kind held back, and after any other
WHEN_STRUCK = ("readback", "unresolved", "unresolved", "unresolved")
WHEN_OTHER = ("readback", "unresolved", None, None)


class OpenEntries(FaultKind):
    id = "open_entries"
    title = ("an acquisition's write applied past its timeout, its read-back sometimes lost, and a drain or a move "
             "told while the read-back is in flight or the entry unresolved")
    rules = ("OR-5", "OR-7", "OR-8", "OR-11", "CS-3")
    options = {"p_open_entry": 0.0}  # the share of acquisition writes held back past their timeout
    settings = {"open_entry_tells": 0}  # the drains and moves it may tell in a run, at most
    rates = ("p_open_entry",)
    # per (proc, owners/ key): its read-back is to be lost; the answer to the read that follows its failed
    # acquisition is awaited (the serial the write named, when to tell); its write was held back by this kind.
    # And the instants of the tells so far.
    state = {"entry_reads_lost": dict, "entry_reads": dict, "entry_tells": list, "entry_struck": dict}

    def draw_main(self, ctx) -> None:
        rng, o = ctx.rng, ctx.o
        on = ctx.preset.mix and not ctx.alone and not o.get("mass") and rng.random() < 0.6
        o["p_open_entry"] = ctx.choice((0.1, 0.3, 0.5)) if on else 0.0
        o["open_entry_tells"] = rng.randint(4, 12) if on else 0

    @staticmethod
    def send_early(world, proc, req, f):
        """The read-back of a struck acquisition is lost on the way (never applied, never answered)."""
        lost = world.entry_reads_lost
        if lost and req.op == GET and lost.pop((proc.index, req.key), False) and f is world.fault:
            return "lost", 0
        return None

    @staticmethod
    def send_late(world, proc, req, f, delay):
        """An acquisition's record write held back past its sender's timeout, then applied: its outcome
        unknown to its sender, its read-back meets the record unchanged, and it lands while the entry is
        unresolved (OR-7, OR-8)."""
        p = f["p_open_entry"]
        if (p and req.op == PUT and str.startswith(req.key, OWNERS_PREFIX) and HELD in req.body
                and world.rngs["open_entries"].random() < p):
            rng = world.rngs["open_entries"]
            a = world.params.attempt_timeout_ms
            world.entry_struck[(proc.index, req.key)] = True
            if rng.random() < READBACK_LOST:
                # its read-back lost too: the write lands soon after its timeout (before a peer may take the
                # actor), while the read-back waits for its own
                world.entry_reads_lost[(proc.index, req.key)] = True
                return "late", rng.randint(1, a // 8)
            # its read-back, and the resolver's first read A/8 later, meet the record unchanged (each way
            # takes up to delay_ms_max); it lands soon after, while the resolver reads on (OR-8)
            first = a // 8 + 3 * world.options["delay_ms_max"]
            return "late", rng.randint(first + 1, first + a // 4)
        return None

    @staticmethod
    def on_record_reply(world, proc, req, status, serial, named):
        """What a process learned of a record: an acquisition's write answered with anything but success
        (its read-back leaves now, OR-7), then the answer to that read (unchanged or failed: the entry is
        unresolved). The operator may tell the node a drain, or move an actor of its, at either moment."""
        if world.in_quiet or len(world.entry_tells) >= world.options.get("open_entry_tells", 0):
            return
        k = (proc.index, req.key)
        if req.op == PUT:
            if status != OK and str.startswith(req.key, OWNERS_PREFIX) \
                    and str.startswith(state_line(req.body), "held "):
                struck = world.entry_struck.pop(k, False)  # (a planned run reads `when` from its plan)
                when = world.choose("entry_tell", f"{proc.machine} {req.key}", _when, world.rngs["open_entries"], struck)
                if when == "readback":
                    world.later(1, world.fault_step, "open_entries", "tell", proc.index)
                world.entry_reads[k] = (named, when)
            return
        asked = world.entry_reads.pop(k, None)
        if asked is not None and asked[1] == "unresolved" and (status != OK or serial == asked[0]):
            world.later(1, world.fault_step, "open_entries", "tell", proc.index)

    def tell(self, w, index: int) -> None:
        proc = w.procs[index]
        if w.in_quiet or not proc.alive or proc.draining or len(w.entry_tells) >= w.options.get("open_entry_tells", 0):
            return
        w.entry_tells.append(w.now)
        drain_or_move(w, proc, w.rngs["open_entries"])

    def quiet(self, w) -> None:
        w.entry_reads_lost.clear()
        w.entry_reads.clear()
        w.entry_struck.clear()


def drain_or_move(w, proc, rng, ours: bool = False) -> None:
    """The operator tells `proc`'s node a drain (resumed a while later), or moves one of the actors its
    records name (as the bucket applied them) to another node. `ours`: the race playing out on the node
    (if one does) is the caller's own, and the drain is part of it (else a drain waits for no race)."""
    mine = [a for a in w.actors if w.holders.get(a) == proc.node_id]
    others = [n for n in w.node_ids if n != proc.node_id]
    move = w.choose("entry_move", proc.machine, _move, rng, mine, others)
    if move is not None and move[0] in mine and move[1] in others:
        w.move_to(*move)
        return
    if ours and str.startswith(proc.machine, "m"):
        w.tell(proc, Command("drain"))
    else:
        w.command_node(proc.node_id, Command("drain"))
    if proc.draining:  # (not if a race plays out on the node: the drain waits for no race, it is skipped)
        # resumed within the drain's bound (INV-11 judges no drain resumed inside it), long enough for a
        # record left naming the node to outlast the resolver's bound (CONV-2)
        after = w.choose("entry_resume", proc.machine, rng.randint, w.tg // 2, w.tg)
        DRAINS.after_drain(w, proc.node_id, w.now + after, "resume")


def _when(rng, struck: bool) -> str | None:
    return rng.one_of(WHEN_STRUCK if struck else WHEN_OTHER)


def _move(rng, mine: list, others: list):
    """[actor, target]: one of the node's actors moved, in a quarter of the tells (None: a drain)."""
    if mine and others and rng.below(4) == 0:
        return [rng.one_of(mine), rng.one_of(others)]
    return None


KIND = OpenEntries()
