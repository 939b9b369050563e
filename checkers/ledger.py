"""The request ledger (issue 48): every request a process sent, by operation, key class, outcome, phase and cause.

The world records each request as it leaves a process and what became of it (`History.requests`, rows of
history.schema.Sent: the network's route and the bucket's answer, never the model's word). This module reads
those rows with the history's events and gives each its place:

- its **key class** from the key and the sender's id: `nodes/<own>`, `nodes/<peer>`, the `nodes/` listing,
  `owners/`, `leases/`, a data segment (`wal/... PUT`), a data listing (`wal/<actor>/ LIST`);
- its **outcome** from the world's fate: `2xx`, `404`, `412`, `409`, `5xx` (answered by the bucket), `lost`
  (it never arrived: lost on the way, failed fast, refused by a cut-off), `unanswered` (still on its way at
  the end), and `, reply lost` after an answer that never came back;
- its **phase** from the world's events: `stop` once the world told its process to stop, `drain` while the
  world had it draining, else `quiet` from the quiet phase's start, else `fault`;
- its **cause** from the model's in-flight entry (`CAUSES`: the purpose the reply goes to), which is the
  model's word on *why* only, and is held to the request it labels (`SHAPES`): a purpose on a request of
  another shape is a loud error (a tool failure), so no model hides a request under another cause. A
  purpose this table does not know (a broken model's own) gets the cause of its key's class.

What a report sums per seed (`summary`): the count per (operation, key class, outcome, phase, cause), and the
node-time of each phase (the time a node process ran in it), for requests and dollars per node-day.

Must not know: any price (campaign/prices.py), any claim about the counts (checkers/cost.py judges them).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from history import History
from history.schema import Sent
from model.actor_data import DATA_PREFIX
from model.records import LEASES_PREFIX, NODES_PREFIX, OWNERS_PREFIX

from .registry import once

PHASES = ("fault", "quiet", "drain", "stop")

# the model's purposes (the first item of a request's in-flight entry) -> the cause of the request
CAUSES: dict[str, str] = {
    # the node lease's cadence: the tick and NL-3's retries, NL-9's re-read, the start check, a clean stop's write
    "lease_write": "lease cadence", "lease_reread": "lease cadence", "check_read": "lease cadence",
    "released_write": "lease cadence", "released_reread": "lease cadence",
    "listing": "listing", "listing_get": "listing",
    "fence_read": "fence", "fence_write": "fence", "cluster_fence": "fence",
    "acquire_read": "acquisition", "acquire_node_read": "acquisition", "acquire_write": "acquisition",
    "acquire_readback": "acquisition",
    "route_read": "routing",
    "release": "release", "pending_release": "release", "pending_read": "release",
    "resolve_read": "resolver", "resolve_release": "resolver",
    "restore": "restore",
    "upgrade_lease_read": "upgrade marker", "upgrade_seed_list": "upgrade marker", "upgrade_marker": "upgrade marker",
    "guard_list": "upgrade marker", "guard_get": "upgrade marker", "bucket_check": "upgrade marker",
    "data_write": "data",
    "start_read": "old binary", "heartbeat": "old binary", "old_read": "old binary", "old_seed": "old binary",
    "old_acquire": "old binary", "renewal": "old binary", "old_release": "old binary",
    "cluster_forget": "operator",
}
# a purpose no entry names (a broken model's own) -> the cause of its key's class
CAUSE_OF_CLASS = {"nodes/<own>": "lease cadence", "nodes/<peer>": "fence", "nodes/ list": "listing",
                  "owners/": "ownership (other)", "leases/": "upgrade marker", "wal/ segment": "data",
                  "wal/ list": "restore"}

KEY_CLASSES = ("nodes/<own>", "nodes/<peer>", "nodes/ list", "owners/", "leases/", "wal/ segment", "wal/ list")

# purpose -> (operations, key classes) it may label: what the world holds the model's word to
_NODE_READ = (("GET",), ("nodes/<peer>", "nodes/<own>"))
SHAPES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "lease_write": (("PUT",), ("nodes/<own>",)), "lease_reread": (("GET",), ("nodes/<own>",)),
    "check_read": (("GET",), ("nodes/<own>",)), "released_write": (("PUT",), ("nodes/<own>",)),
    "released_reread": (("GET",), ("nodes/<own>",)),
    "listing": (("LIST",), ("nodes/ list",)), "listing_get": _NODE_READ,
    "fence_read": (("GET",), ("nodes/<peer>",)), "fence_write": (("PUT",), ("nodes/<peer>",)),
    "acquire_read": (("GET",), ("owners/",)), "acquire_node_read": _NODE_READ,
    "acquire_write": (("PUT",), ("owners/",)), "acquire_readback": (("GET",), ("owners/",)),
    "route_read": (("GET",), ("owners/",)),
    "release": (("PUT",), ("owners/",)), "pending_release": (("PUT",), ("owners/",)),
    "pending_read": (("GET",), ("owners/",)), "resolve_read": (("GET",), ("owners/",)),
    "resolve_release": (("PUT",), ("owners/",)), "restore": (("LIST",), ("wal/ list",)),
    "upgrade_lease_read": (("GET",), ("leases/",)), "upgrade_seed_list": (("LIST",), ("wal/ list",)),
    "upgrade_marker": (("PUT",), ("leases/",)), "guard_list": (("LIST",), ("nodes/ list",)),
    "guard_get": _NODE_READ, "bucket_check": (("LIST",), ("nodes/ list",)),
    "data_write": (("PUT",), ("wal/ segment",)),
}


class MislabelledRequest(ValueError):
    """A model's purpose labels a request of another shape: the ledger cannot take its word for the cause."""


class Row(NamedTuple):
    """One request of the ledger with its place."""

    sent: Sent
    node: str  # the sender's node id ("operator" for the operator's process)
    key_class: str
    outcome: str
    phase: str
    cause: str

    @property
    def actor(self) -> str | None:
        """The actor the request is about: from its key (owners/, leases/, wal/), else the purpose's detail."""
        key = self.sent.key
        for prefix in (OWNERS_PREFIX, LEASES_PREFIX):
            if str.startswith(key, prefix):
                return key[len(prefix):]
        if str.startswith(key, DATA_PREFIX):
            rest = key[len(DATA_PREFIX):]
            return rest[:rest.rfind("/")] if "/" in rest else rest
        return self.sent.detail if self.cause == "acquisition" else None


def key_class(op: str, key: str, node_id: str) -> str:
    """The class of a request's key, as the ledger counts it."""
    if str.startswith(key, NODES_PREFIX):
        if op == "LIST" or key == NODES_PREFIX:
            return "nodes/ list"
        return "nodes/<own>" if key[len(NODES_PREFIX):] == node_id else "nodes/<peer>"
    if str.startswith(key, OWNERS_PREFIX):
        return "owners/"
    if str.startswith(key, LEASES_PREFIX):
        return "leases/"
    if str.startswith(key, DATA_PREFIX):
        return "wal/ list" if op == "LIST" else "wal/ segment"
    return "other"


def outcome(s: Sent) -> str:
    if s.answer is None:
        return "unanswered"
    what = "lost" if s.answer == "never_arrived" else s.answer
    return what + ", reply lost" if s.reply_lost else what


def billing_status(outcome: str) -> str:
    """An outcome as a price table's status key (campaign/prices.py): what the bucket answered, reply lost or
    not; a request that never arrived, or whose fate the run did not see, is not billed."""
    what = outcome.split(",")[0]
    return "never_arrived" if what in ("lost", "unanswered") else what


def _phases(history: History) -> tuple[int | None, dict[int, list[tuple[int, str]]]]:
    """The quiet phase's start, and per process the world's instructions (true time, drain/resume/stop)."""
    events = history.events
    quiet = history.of_kind("quiet")
    quiet_at = events[quiet[0]].t_ms if quiet else None
    told: dict[int, list[tuple[int, str]]] = {}
    for i in history.of_kind("told"):
        e = events[i]
        told.setdefault(e.proc, []).append((e.t_ms, e.fields.command))
    return quiet_at, told


def phase_at(t_ms: int, quiet_at: int | None, told: list[tuple[int, str]] | None) -> str:
    """The phase of a request its process sent at `t_ms`."""
    draining = False
    if told:
        for at, command in told:
            if at > t_ms:
                break
            if command == "stop":
                return "stop"
            draining = command == "drain"
    if draining:
        return "drain"
    return "quiet" if quiet_at is not None and t_ms >= quiet_at else "fault"


def cause_of(s: Sent, kc: str) -> str:
    """The request's cause: its purpose's, held to the request's shape (`SHAPES`); a purpose the table does not
    know, its key class's."""
    shape = SHAPES.get(s.purpose)
    if shape is not None and (s.op not in shape[0] or kc not in shape[1]):
        raise MislabelledRequest(f"the model labels {s.op} {s.key} as {s.purpose!r}, which labels "
                                 f"{'/'.join(shape[0])} of {' or '.join(shape[1])} only")
    cause = CAUSES.get(s.purpose)
    if cause is None and str.startswith(s.purpose, "resolve_"):
        cause = "resolver"  # an amendment's own resolver request (f2_resolver_resends' resend, its seeding read)
    return cause if cause is not None else CAUSE_OF_CLASS.get(kc, "other")


def rows(history: History) -> list[Row]:
    """Every request of the history's ledger with its place (computed once per history); [] without a ledger."""
    return once(history, "ledger_rows", lambda: _rows(history))[0]


def _rows(history: History) -> tuple[list[Row], Counter]:
    """The rows, and their count per (operation, key class, outcome, phase, cause): `table`'s, counted as each
    row is made (a second pass read five fields of every row again, two of them through its request)."""
    if not history.requests:
        return [], Counter()
    counted: list[tuple[str, str, str, str, str]] = []  # (counted at the end: a Counter counts in C)
    quiet_at, told = _phases(history)
    node_of = [p.node_id for p in history.processes]
    causes: dict[tuple[str, str, str], str] = {}  # (purpose, op, key class) -> cause, each checked once
    new = tuple.__new__
    out = []
    append = out.append
    for s in history.requests:
        # (its fields unpacked at once: compiled, each `s.field` is a generic attribute read, seven a request)
        t, p, op, key, purpose, answer, reply_lost, _entries, _sdk, _detail = s
        node = node_of[p]
        kc = key_class(op, key, node)
        k = (purpose, op, kc)
        cause = causes.get(k)
        if cause is None:
            cause = causes[k] = cause_of(s, kc)
        ts = told.get(p)
        ph = phase_at(t, quiet_at, ts) if ts else ("quiet" if quiet_at is not None and t >= quiet_at else "fault")
        oc = "2xx" if answer == "2xx" and not reply_lost else outcome(s)
        append(new(Row, (s, node, kc, oc, ph, cause)))
        counted.append((op, kc, oc, ph, cause))
    return out, Counter(counted)


def node_ms(history: History) -> dict[str, int]:
    """The time node processes ran in each phase (the operator's process apart), in ms: a phase's node-time.
    `fault` and `quiet` by the quiet phase's start; drain and stop are counted in the phase they fall in."""
    events = history.events
    quiet_at, _told = _phases(history)
    end = history.end_ms
    began: dict[int, int] = {}
    ended: dict[int, int] = {}
    for i in history.of_kind("start"):
        began.setdefault(events[i].proc, events[i].t_ms)
    for i in history.of_kind("exit", "crash"):
        ended.setdefault(events[i].proc, events[i].t_ms)
    out = {"fault": 0, "quiet": 0}
    q = end if quiet_at is None else quiet_at
    for p, t0 in began.items():
        if history.processes[p].node_id == "operator":
            continue
        t1 = min(ended.get(p, end), end)
        out["fault"] += max(0, min(t1, q) - t0)
        out["quiet"] += max(0, t1 - max(t0, q))
    return out


def table(history: History) -> Counter:
    """(operation, key class, outcome, phase, cause) -> requests."""
    return Counter(once(history, "ledger_rows", lambda: _rows(history))[1])  # (a copy: the caller's own)


SEP = " | "


def summary(history: History) -> dict | None:
    """What a report sums of one seed: {"requests": {"OP | class | outcome | phase | cause": n}, "node_ms":
    {phase: ms}}; None without a ledger (a trace's history)."""
    if history.requests is None:
        return None
    return {"requests": {SEP.join(k): n for k, n in sorted(table(history).items())}, "node_ms": node_ms(history)}


def split(key: str) -> tuple[str, str, str, str, str]:
    """A summary's key as (operation, key class, outcome, phase, cause)."""
    op, kc, oc, ph, cause = key.split(SEP)
    return op, kc, oc, ph, cause


def lines(history: History, width: int = 100) -> list[str]:
    """The ledger as a table for people: one line per (operation, key class, outcome, phase, cause)."""
    t = table(history)
    if not t:
        return ["(no requests recorded)"]
    out = [f"{'op':<6} {'key class':<13} {'outcome':<18} {'phase':<6} {'cause':<17} {'requests':>8}"]
    for (op, kc, oc, ph, cause), n in sorted(t.items(), key=lambda x: (PHASES.index(x[0][3]), x[0][4], x[0])):
        out.append(f"{op:<6} {kc:<13} {oc:<18} {ph:<6} {cause:<17} {n:>8}")
    out.append(f"{'':<6} {'':<13} {'':<18} {'':<6} {'total':<17} {sum(t.values()):>8}")
    return out


def by_cause_lines(history: History) -> list[str]:
    """The ledger for people in a few lines: per cause, the requests of each phase and the outcomes that were
    not a plain 2xx."""
    rs = rows(history)
    if not rs:
        return ["(no requests recorded)"]
    phases = [ph for ph in PHASES if any(r.phase == ph for r in rs)]
    per: dict[str, Counter] = {}
    odd: dict[str, Counter] = {}
    for r in rs:
        per.setdefault(r.cause, Counter())[r.phase] += 1
        if r.outcome != "2xx":
            odd.setdefault(r.cause, Counter())[r.outcome] += 1
    out = [f"{'cause':<18}" + "".join(f"{ph:>8}" for ph in phases) + "  not 2xx"]
    for cause in sorted(per, key=lambda c: -sum(per[c].values())):
        bad = ", ".join(f"{k} {v}" for k, v in odd.get(cause, Counter()).most_common(4)) or "-"
        out.append(f"{cause:<18}" + "".join(f"{per[cause].get(ph, 0):>8}" for ph in phases) + f"  {bad}")
    total = Counter(r.phase for r in rs)
    out.append(f"{'total':<18}" + "".join(f"{total.get(ph, 0):>8}" for ph in phases))
    return out

