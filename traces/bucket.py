"""The bucket's facts rebuilt from the writers' own requests and answers, and a History placed in time.

No server clock is needed to order one key's writes: every body is unique (a node lease's carries
its instance and written_at, a record's its holder and generation), so a version is known by its
ETag, and each conditional write names the version it replaced (`If-Match`), or none (`If-None-Match:
*`). Following those names from "no object" gives the key's chain of versions. A write whose answer
was lost still shows when it landed: a later read returned its ETag or its body, a later write named
its ETag, a listing showed it, or the access log answered it 200. Its ETag, when no answer gave it, is
the MD5 of its body, as S3 and the servers tested make a single PUT's ETag (used only when every
acknowledged write of the traces agrees). An unconditional write names nothing: it is placed after
the chain it cut, at its send time (INV-3 flags it anyway).

When the writes took effect is known only within bounds: a write applied after it was sent and
before its answer came; a read returned a version applied before the read was answered and
replaced only after it was sent; the chain orders one key's writes. And each process's clock is
within max_skew of true time, so a line stamped t happened in [t - max_skew, t + max_skew].

A *placement* picks one admissible timing: an offset per machine (every process of one machine
shares its clock) and, within those bounds, each write's instant, the earliest or the latest the
bounds allow (`place`). It returns a History the checkers read as they read a simulated one: the
processes with their clocks (offset = the machine's), every line of the traces at its true time,
and the world's events (`apply`, `refused`, `record_reply`, ...) the facts rebuild windows from.
A placement the bounds contradict (a read served before the write it returned was sent) is not
admissible: `place` returns None and why.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from dataclasses import dataclass, field

from history import History, Process
from model.observations import KINDS
from model.records import NODES_PREFIX, OWNERS_PREFIX, LEASES_PREFIX, state_line

from .load import ProcTrace, Request, TraceSet

DATA_PREFIX = "wal/"
NEVER = 1 << 62
STATUS_CODE = {"precondition_failed": 412, "not_found": 404}

# how late a traced process may have fired a timer (its scheduler: an asyncio loop on a shared machine): the
# tolerance the duration checks bounded from above (LEASE-2) add for a real implementation. The example nodes
# fire theirs up to 10 ms late on this machine at idle (tests/check_trace/data/correct: 603-610 ms for P = 600).
TIMER_SLACK_MS = 50


@dataclass
class Version:
    key: str
    etag: str | None
    write: Request | None  # None: a version no trace wrote (it was there before, or a process without a trace)
    body: str | None
    deleted: bool = False
    prev: "Version | None" = None
    serial: int = 0
    reads: list[Request] = field(default_factory=list)  # reads (GET, LIST) answered with this version

    @property
    def state(self) -> str:
        return state_line(self.body) if self.body else ""


@dataclass
class Bucket:
    """Each key's chain of versions, the writes no evidence shows landed, and how ETags were known."""

    chains: dict[str, list[Version]]
    by_etag: dict[tuple[str, str], Version]
    absent_reads: dict[str, list[Request]]  # GETs answered 404 before a key's first version
    not_landed: list[Request]  # writes with no evidence they took effect
    md5_etags: bool  # every acknowledged PUT's ETag was its body's MD5
    notes: list[str] = field(default_factory=list)
    twice: frozenset = frozenset()  # keys a body was written to more than once (against the format's promise)

    def serial_of(self, key: str, etag: str | None) -> int:
        v = self.by_etag.get((key, etag)) if etag is not None else None
        return v.serial if v is not None else -1


def md5_etag(body: str) -> str:
    return '"' + hashlib.md5(body.encode("utf-8")).hexdigest() + '"'


def rebuild(ts: TraceSet) -> Bucket:
    """The bucket's chains of versions (see the module's docstring)."""
    reqs = [r for pt in ts.procs for r in pt.requests.values()]
    writes = [r for r in reqs if r.op in ("PUT", "DELETE")]
    acked = [r for r in writes if r.op == "PUT" and r.status == "ok" and r.answer_version and r.body is not None]
    md5_ok = all(md5_etag(r.body) == r.answer_version for r in acked)
    etag: dict[int, str | None] = {}
    for r in writes:
        if r.op != "PUT":
            etag[id(r)] = None
        elif r.status == "ok" and r.answer_version:
            etag[id(r)] = r.answer_version
        else:
            etag[id(r)] = md5_etag(r.body) if md5_ok and r.body is not None else None
    # evidence that a version existed
    seen_etags: set[tuple[str, str]] = set()
    seen_bodies: dict[tuple[str, str], str] = {}  # (key, body) -> the etag a read gave it
    for r in reqs:
        if r.status != "ok":
            continue
        if r.op == "GET" and r.answer_version:
            seen_etags.add((r.key, r.answer_version))
            if r.answer_body is not None:
                seen_bodies[(r.key, r.answer_body)] = r.answer_version
        elif r.op == "LIST":
            for k, e in r.entries or ():
                seen_etags.add((k, e))
    for a in ts.access:
        if a.op == "PUT" and 200 <= a.status < 300 and a.etag:
            seen_etags.add((a.key, a.etag))
    for r in writes:  # a read's body names the write that made it, whatever its answer said
        if r.op == "PUT" and r.body is not None and (r.key, r.body) in seen_bodies:
            etag[id(r)] = seen_bodies[(r.key, r.body)]
    landed: dict[int, Request] = {}

    def lands(r: Request) -> bool:
        if r.status == "ok":
            return True
        if r.status == "failed_fast" or r.status in STATUS_CODE or r.status == "conflict":
            return False  # never sent, or refused by the bucket
        e = etag[id(r)]
        if r.op == "PUT" and e is not None and (r.key, e) in seen_etags:
            # shown by its ETag, unless another write made that ETag too (a body written twice): then only the
            # count of the ETag's names can say (_landed_by_count)
            return made_by.get((r.key, e), 0) == 1
        if r.op == "DELETE":
            return any(a.op == "DELETE" and a.key == r.key and 200 <= a.status < 300 and a.if_match == r.version
                       for a in ts.access)
        return False

    made_by: dict[tuple[str, str], int] = {}  # (key, etag) -> how many writes that may have landed carry it
    for r in writes:
        e = etag[id(r)]
        if r.op == "PUT" and e is not None and r.status not in ("failed_fast", "precondition_failed", "not_found",
                                                                 "conflict"):
            made_by[(r.key, e)] = made_by.get((r.key, e), 0) + 1
    forced: set[int] = set()  # landed by the count of their ETag's names (_landed_by_count)
    changed = True
    while changed:
        changed = False
        for r in writes:
            if id(r) not in landed and lands(r):
                landed[id(r)] = r
                changed = True
                if r.cond == "if-match" and r.version is not None and (r.key, r.version) not in seen_etags:
                    seen_etags.add((r.key, r.version))  # the version it named existed
        if not changed:
            changed = _landed_by_count(writes, landed, etag, forced) or \
                _landed_by_early_reads(ts, reqs, writes, landed, etag, forced)
    not_landed = [r for r in writes if id(r) not in landed]

    # the versions: one per landed write (a body written twice, against the format's promise, is two
    # versions with one ETag: the chain still orders them by their conditions)
    by_etag: dict[tuple[str, str], Version] = {}  # (key, etag) -> its version, when only one has that ETag
    twice: set[tuple[str, str]] = set()
    versions_of: dict[str, list[Version]] = {}
    notes: list[str] = []
    for r in sorted(landed.values(), key=lambda r: (r.send_wall, r.proc, r.id)):
        e = etag[id(r)]
        if r.op == "PUT" and e is not None and (r.key, e) in by_etag:
            if (r.key, e) not in twice:
                notes.append(f"{r.key}: {state_line(r.body)!r} written more than once (one ETag {e}; the format "
                             f"wants every body unique): reads of it cannot tell the writes apart")
            twice.add((r.key, e))
        v = Version(r.key, e, r, r.body, deleted=r.op == "DELETE")
        if e is not None:
            by_etag.setdefault((r.key, e), v)
        versions_of.setdefault(r.key, []).append(v)
    # versions no trace wrote: named by a landed write, or read
    for k, e in sorted(seen_etags):
        if (k, e) not in by_etag:
            body = next((b for (kk, b), ee in seen_bodies.items() if kk == k and ee == e), None)
            v = by_etag[(k, e)] = Version(k, e, None, body)
            versions_of.setdefault(k, []).append(v)

    chains = {k: _chain(k, vs, 2 * ts.params.max_skew_ms) for k, vs in sorted(versions_of.items())}
    serial = 0
    for k, chain in chains.items():
        for v in chain:
            serial += 1
            v.serial = serial
    for ke in twice:
        del by_etag[ke]  # ambiguous: no read is tied to either
    # reads: each answered GET or LIST entry to the version it returned; 404s before a first version
    absent_reads: dict[str, list[Request]] = {}
    for r in reqs:
        if r.status == "ok" and r.op == "GET" and r.answer_version:
            v = by_etag.get((r.key, r.answer_version))
            if v is not None:
                v.reads.append(r)
        elif r.status == "ok" and r.op == "LIST":
            for k, e in r.entries or ():
                v = by_etag.get((k, e))
                if v is not None:
                    v.reads.append(r)
        elif r.status == "not_found" and r.op == "GET":
            if not any(v.deleted for v in chains.get(r.key, ())):
                absent_reads.setdefault(r.key, []).append(r)
    return Bucket(chains, by_etag, absent_reads, not_landed, md5_ok, notes, frozenset(k for k, _e in twice))


def _landed_by_early_reads(ts: TraceSet, reqs: list[Request], writes: list[Request], landed: dict[int, Request],
                           etag: dict[int, str | None], forced: set[int]) -> bool:
    """A body written twice, the first write's answer lost (a seeded bug's generation written again, then
    released again: "nobody 2" twice): a read answered before every landed write of its ETag was sent must
    have seen an earlier write of that body, one whose answer never came ("after": on the reader's own
    clock when the writer ran on its machine, else by more than 2 x max_skew). The earliest such write
    that may have been sent before the read is taken as landed. True if one was added."""
    machine = {pt.index: pt.machine for pt in ts.procs}
    slack = 2 * ts.params.max_skew_ms
    makers: dict[tuple[str, str], list[Request]] = {}
    for r in writes:
        e = etag[id(r)]
        if r.op == "PUT" and e is not None and r.status not in ("failed_fast", "precondition_failed", "not_found",
                                                                 "conflict") and r.status not in STATUS_CODE:
            makers.setdefault((r.key, e), []).append(r)

    def before(w: Request, r: Request, t: int) -> bool:
        """w may have been sent before r's answer at t (r's clock)."""
        return w.send_wall <= t if machine[w.proc] == machine[r.proc] else w.send_wall < t + slack

    def after(w: Request, r: Request, t: int) -> bool:
        """w was surely sent after r's answer at t."""
        return w.send_wall > t if machine[w.proc] == machine[r.proc] else w.send_wall > t + slack

    for r in reqs:
        if r.status != "ok" or r.answer_wall is None:
            continue
        if r.op == "GET" and r.answer_version:
            seen = [(r.key, r.answer_version)]
        elif r.op == "LIST":
            seen = [(k, e) for k, e in r.entries or ()]
        else:
            continue
        for ke in seen:
            ws = makers.get(ke, [])
            done = [w for w in ws if id(w) in landed]
            if not done or not all(after(w, r, r.answer_wall) for w in done):
                continue
            if _force_earliest([w for w in ws if id(w) not in landed and before(w, r, r.answer_wall)], landed,
                               forced):
                return True
    return False


def _force_earliest(cands: list[Request], landed: dict[int, Request], forced: set[int]) -> bool:
    """Take the earliest-sent of `cands` as landed (by evidence other than its own answer); False if none."""
    if not cands:
        return False
    w = min(cands, key=lambda w: (w.send_wall, w.proc, w.id))
    landed[id(w)] = w
    forced.add(id(w))
    return True


def _landed_by_count(writes: list[Request], landed: dict[int, Request], etag: dict[int, str | None],
                     forced: set[int]) -> bool:
    """A body written twice (against the format's promise) makes two versions with one ETag, and a read or a
    name of that ETag cannot say which landed. What can: more landed writes name the ETag (If-Match) than
    landed writes made it, so one more of its writes landed: the earliest sent not yet counted. True if one
    was added."""
    made: dict[tuple[str, str], int] = {}
    named: dict[tuple[str, str], int] = {}
    for r in landed.values():
        e = etag[id(r)]
        if r.op == "PUT" and e is not None:
            made[(r.key, e)] = made.get((r.key, e), 0) + 1
        if r.cond == "if-match" and r.version is not None:
            named[(r.key, r.version)] = named.get((r.key, r.version), 0) + 1
    for ke, n in sorted(named.items()):
        if n > made.get(ke, 0) and made.get(ke, 0) > 0:
            cands = [r for r in writes if id(r) not in landed and r.op == "PUT" and (r.key, etag[id(r)]) == ke
                     and r.status not in ("failed_fast", "precondition_failed", "not_found", "conflict")]
            if _force_earliest(cands, landed, forced):
                return True
    return False


def _chain(key: str, versions: list[Version], slack: int = 0) -> list[Version]:
    """One key's versions in the order they took effect (see the module's docstring): from no object, each
    next version the earliest-sent landed write whose condition names the current one's ETag, among those
    not sent before the current one's write surely was (more than `slack`, 2 x max_skew, earlier: when a
    body was written twice, by a seeded bug, two versions share an ETag and a write naming it may follow
    either; it follows the one it can)."""
    succ: dict[str | None, list[Version]] = {}  # the ETag a conditional write named (None: no object) -> writes
    heads: list[Version] = []  # versions with no known predecessor: foreign ones, unconditional writes
    for v in versions:
        w = v.write
        if w is None or w.cond is None:
            heads.append(v)
        else:
            succ.setdefault(None if w.cond == "if-none-match" else w.version, []).append(v)

    def send(v: Version) -> int:
        return -NEVER if v.write is None else v.write.send_wall

    for vs in succ.values():
        vs.sort(key=send)

    def follow(start: Version | None, out: list[Version]) -> None:
        cur = start
        while True:
            tag = None if cur is None or cur.deleted else cur.etag
            nxt = succ.get(tag)
            if not nxt:
                return
            k = 0
            if cur is not None and cur.write is not None:
                k = next((i for i, x in enumerate(nxt) if send(x) >= cur.write.send_wall - slack), 0)
            v = nxt.pop(k)
            v.prev = cur
            out.append(v)
            cur = v

    segments: list[list[Version]] = []
    first: list[Version] = []
    follow(None, first)
    if first:
        segments.append(first)
    for h in sorted(heads, key=send):
        seg = [h]
        follow(h, seg)
        segments.append(seg)
    segments.sort(key=lambda s: send(s[0]))
    out: list[Version] = []
    for seg in segments:
        if out and seg[0].write is not None and seg[0].write.cond is None:
            seg[0].prev = out[-1]
        out.extend(seg)
    placed = {id(v) for v in out}
    for v in sorted((v for vs in succ.values() for v in vs if id(v) not in placed), key=send):
        # a second successor of one version (a fork): after the rest (INV-3 flags it)
        v.prev = next((u for u in out if u.etag == v.write.version), None) if v.write.cond == "if-match" else None
        out.append(v)
    return out


# --- placement -------------------------------------------------------------------------------------------


@dataclass
class Placement:
    """An admissible timing: each machine's offset (its clock minus true time) and the write policy."""

    offsets: dict[str, int]
    policy: str  # "earliest" or "latest": each write at the first or the last instant its bounds allow
    name: str = ""

    def describe(self) -> str:
        offs = ", ".join(f"{m} {o:+d} ms" for m, o in sorted(self.offsets.items()) if o)
        return f"{self.name or 'placement'}: clocks {offs or 'all on true time'}, writes at their {self.policy}"


def offsets(ts: TraceSet, pl: Placement) -> list[int]:
    """Each process's clock offset in the History: its machine's offset under `pl`, plus the traces' base (the
    earliest header's wall clock), so that true time starts near 0 while every clock reads its trace's wall
    clock (the bodies' written_at compare with it, as the checkers do)."""
    return [ts.base_ms + pl.offsets.get(pt.machine, 0) for pt in ts.procs]


def schedule(ts: TraceSet, bucket: Bucket, pl: Placement) -> tuple[dict[int, int] | None, str]:
    """Each version's apply instant (true ms) under `pl`, by id(version); or None and why it is not admissible."""
    procs = ts.procs
    off = offsets(ts, pl)
    end = max(pt.last_wall - off[pt.index] for pt in procs) + 1

    def t_send(r: Request) -> int:
        return r.send_wall - off[r.proc]

    def t_ans(r: Request) -> int:
        return NEVER if r.answer_wall is None else r.answer_wall - off[r.proc]

    applies: dict[int, int] = {}
    for key, chain in bucket.chains.items():
        n = len(chain)
        lo = [-NEVER] * n
        hi = [NEVER] * n
        for i, v in enumerate(chain):
            if v.write is not None:
                # a request takes a millisecond at least to reach the bucket (ms stamps: unless its answer came
                # in the same one): what its writer did in the ms it sent it, it did before it took effect
                lo[i] = t_send(v.write) + (1 if t_ans(v.write) > t_send(v.write) else 0)
                if v.write.status == "ok":
                    hi[i] = t_ans(v.write)
            for r in v.reads:  # applied before a read of it was answered
                hi[i] = min(hi[i], t_ans(r))
        orders = [list(range(n))]
        if key in bucket.twice:
            # a body written twice: the chain's order was a guess (see Constraints' `loose`); under this
            # placement the versions may take effect in the order their writes reached the bucket at the
            # earliest, or earliest deadline first (the last instant each can, by its answer and its reads)
            orders += [sorted(range(n), key=lambda i: (lo[i], i)), sorted(range(n), key=lambda i: (hi[i], lo[i], i))]
        why = ""
        for order in orders:
            got, why = _schedule_key(key, [chain[i] for i in order], [lo[i] for i in order], [hi[i] for i in order],
                                     bucket.absent_reads.get(key, ()), pl.policy, t_send, t_ans, end)
            if got is not None:
                applies.update(got)
                break
        else:
            return None, why
        # a foreign version (no trace wrote it) was there before: no instant to check
    return applies, ""


def _schedule_key(key: str, chain: list[Version], lo: list[int], hi: list[int], before_first, policy: str,
                  t_send, t_ans, end: int) -> tuple[dict[int, int] | None, str]:
    """One key's versions, in this order, at the earliest (or latest) instants their bounds allow."""
    n = len(chain)
    applies: dict[int, int] = {}
    # reads of a version are served before the next version takes effect; 404s before the first
    if policy == "earliest":
        prev = -NEVER
        for i, v in enumerate(chain):
            floor = lo[i]
            reads_before = chain[i - 1].reads if i else before_first
            for r in reads_before:
                floor = max(floor, max(t_send(r), prev) + 1)
            t = max(floor, prev + 1)
            if t > hi[i]:
                return None, _why(key, v, t, hi[i])
            applies[id(v)] = t
            prev = t
    else:
        nxt = NEVER
        for i in range(n - 1, -1, -1):
            v = chain[i]
            ceil = min(hi[i], nxt - 1)
            for r in v.reads:
                ceil = min(ceil, t_ans(r))
            if ceil >= NEVER - 1:
                ceil = max(lo[i], end)  # no answer bounds it: the end of the traces
            if i + 1 < n:
                for r in v.reads:
                    if t_send(r) >= nxt:
                        return None, (f"{key}: a read sent at {t_send(r)} ms returned a version replaced at "
                                      f"{nxt} ms")
            if ceil < lo[i]:
                return None, _why(key, v, lo[i], ceil)
            applies[id(v)] = ceil
            nxt = ceil
        if before_first and chain:
            first = applies[id(chain[0])]
            if any(t_send(r) >= first for r in before_first):
                return None, f"{key}: a read sent after its first version took effect found no object"
    return applies, ""


def _why(key: str, v: Version, need: int, bound: int) -> str:
    who = "a version no trace wrote" if v.write is None else f"the write of process {v.write.proc} (id {v.write.id})"
    return f"{key}: {who} cannot take effect at or after {need} ms and by {bound} ms"


def place(ts: TraceSet, bucket: Bucket, pl: Placement) -> tuple[History | None, str]:
    """The History of the traces under placement `pl` (None and why, if `pl` is not admissible)."""
    applies, why = schedule(ts, bucket, pl)
    if applies is None:
        return None, why
    procs = ts.procs
    off = offsets(ts, pl)
    h = History(seed=0, model="trace", scenario="trace", params=ts.params.to_dict(),
                options={"trace": ts.directory, "placement": pl.describe(), "clock_base": ts.base_ms})
    h.processes = [Process(pt.node_id, pt.instance, pt.machine, off[pt.index], 0) for pt in procs]
    h.timing_slack_ms = TIMER_SLACK_MS
    rows: list[tuple] = []  # (t, order, proc, kind, fields, ref); ref: (proc, line) of the trace
    seq_of: dict[tuple[int, int], int] = {}  # (proc, index of its line) -> the row's order

    def add(t: int, p: int, kind: str, values: tuple, ref, order: float | None = None) -> None:
        rows.append((t, len(rows) if order is None else order, p, kind, values, ref))

    first_live: dict[int, int] = {}
    for pt in procs:
        own = NODES_PREFIX + pt.node_id
        for v in bucket.chains.get(own, ()):
            if v.write is not None and v.write.proc == pt.index and v.state.startswith("live " + pt.instance):
                first_live[pt.index] = applies[id(v)]
                break
    current: dict[str, tuple[list[int], list[Version]]] = {}
    for key, chain in bucket.chains.items():
        current[key] = ([applies[id(v)] for v in chain], chain)

    def state_at(key: str, t: int) -> str:
        c = current.get(key)
        if c is None:
            return ""
        k = bisect_right(c[0], t) - 1
        return c[1][k].state if k >= 0 else ""

    # every line of every process, at its true time
    for pt in procs:
        p = pt.index
        o = off[p]
        own = NODES_PREFIX + pt.node_id
        add(pt.header["wall_ms"] - o, p, "start", (pt.node_id, pt.instance, pt.machine), (p, 1))
        fences_in_flight: set[int] = set()
        for k, line in enumerate(pt.lines):
            t = line["wall_ms"] - o
            kind = line["kind"]
            ref = (p, line["_line"])
            seq_of[(p, k)] = len(rows)
            if kind == "send":
                r = pt.requests[line["id"]]
                if r.op == "PUT" and r.key.startswith(NODES_PREFIX) and r.key != own:
                    fences_in_flight.add(r.id)
                    add(t, p, "fence_sent", (r.key, len(fences_in_flight)), ref)
                elif r.op == "PUT" and r.key == own and state_line(r.body).startswith("released "):
                    add(t, p, "released_sent", (), ref)
                elif r.op == "PUT" and r.key.startswith(OWNERS_PREFIX) and state_line(r.body).startswith("nobody "):
                    add(t, p, "release_sent", (r.key, "", r.timeout_ms), ref)
                else:
                    seq_of[(p, k)] = len(rows) - 0.5
            elif kind == "answer":
                r = pt.requests[line["id"]]
                fences_in_flight.discard(r.id)
                n = len(rows)
                _answered(add, bucket, r, t, r.send_wall - o, p, own, state_at, first_live, ref)
                if len(rows) == n:
                    seq_of[(p, k)] = n - 0.5
            elif kind in ("timer", "command"):
                seq_of[(p, k)] = len(rows) - 0.5
            elif kind == "exit":
                add(t, p, "exit", (line["status"], line.get("reason") or ""), ref)
            else:
                add(t, p, kind, tuple(line.get(f) for f in KINDS[kind]), ref)
        if pt.exit_line is None:
            add(pt.last_wall - o + 1, p, "crash", (), (p, None))
        for pause in pt.pauses:  # the environment's pauses (the faults log), as the simulated worlds record theirs
            t, line_no = _mono_to_true(pt, pause.from_mono_ms, o)
            add(t, p, "fault", ("pause", pt.machine, pause.to_mono_ms - pause.from_mono_ms,
                                f"the process was stopped (faults log line {pause.line})", None), (p, line_no))
    # the bucket's versions: when each took effect; at the instant of its send or its answer, between the two
    for key, chain in bucket.chains.items():
        for v in chain:
            w = v.write
            if w is None:
                continue
            t = applies[id(v)]
            o = off[w.proc]
            if t == w.send_wall - o:
                order = seq_of[(w.proc, w.send_line)] + 0.25
            elif w.answer_line is not None and t == w.answer_wall - o:
                order = seq_of[(w.proc, w.answer_line)] - 0.25
            else:
                order = -1
            prev = v.prev
            named = (0 if w.cond == "if-none-match" else None if w.cond is None
                     else prev.serial if prev is not None and prev.etag == w.version
                     else bucket.serial_of(key, w.version))
            add(t, w.proc, "apply", (key, w.op, w.cond, prev.serial if prev is not None and not prev.deleted else 0,
                                     named, 0 if v.deleted else v.serial, v.state,
                                     prev.state if prev is not None else "", w.send_wall - o),
                (w.proc, procs[w.proc].lines[w.send_line]["_line"]), order)
    rows.sort(key=lambda x: (x[0], x[1]))
    refs = []
    for t, _order, p, kind, values, ref in rows:
        h.add(t, p, kind, values)
        refs.append(ref)
    h.end_ms = (rows[-1][0] + 1) if rows else 0
    h.counts = {"processes": len(procs), "trace_lines": ts.lines}
    h.cache["trace_refs"] = refs
    return h, ""


def _mono_to_true(pt: ProcTrace, mono_ms: int, offset: int) -> tuple[int, int]:
    """The true instant of a reading of the process's monotonic clock, through its last line at or before it
    (its wall and monotonic clocks run at one rate between two lines), and that line's number."""
    wall, mono, line_no = pt.header["wall_ms"], pt.header["mono_ms"], 1
    for x in pt.lines:
        if x["mono_ms"] > mono_ms:
            break
        wall, mono, line_no = x["wall_ms"], x["mono_ms"], x["_line"]
    return wall + (mono_ms - mono) - offset, line_no


def _answered(add, bucket: Bucket, r: Request, t: int, sent: int, p: int, own: str, state_at, first_live, ref):
    """The world's events for one answer: what the process learned (record_reply, leases_reply, listed,
    read), and what the bucket refused (refused, conflicted), as the simulated worlds record them."""
    key, status = r.key, r.status
    if r.op in ("PUT", "DELETE"):
        named = bucket.serial_of(key, r.version) if r.cond == "if-match" else 0 if r.cond else None
        if status in STATUS_CODE and (r.cond is not None):
            add(t, p, "refused", (key, r.op, r.cond, state_at(key, t), sent, STATUS_CODE[status], named), ref)
        elif status == "conflict":
            add(t, p, "conflicted", (key, r.op, sent, state_line(r.body)), ref)
        elif status != "ok" and key.startswith(DATA_PREFIX):
            add(t, p, "upload_failed", (key, status), ref)
    if key.startswith(OWNERS_PREFIX) or key == own:
        if r.op == "PUT":
            serial = bucket.serial_of(key, r.answer_version) if status == "ok" else -1
            named = bucket.serial_of(key, r.version) if r.cond == "if-match" else 0 if r.cond else None
            add(t, p, "record_reply", (key, r.op, status, state_line(r.body), serial, named, sent), ref)
        elif r.op == "GET":
            serial = (bucket.serial_of(key, r.answer_version) if status == "ok" else 0 if status == "not_found"
                      else -1)
            add(t, p, "record_reply", (key, r.op, status, state_line(r.answer_body) if status == "ok" else "",
                                          serial, None, sent), ref)
    if key.startswith(LEASES_PREFIX) and r.op in ("GET", "PUT"):
        add(t, p, "leases_reply", (key, r.op, status, state_line(r.answer_body if r.op == "GET" else r.body),
                                      sent), ref)
    if r.op == "LIST" and status == "ok" and key.startswith(DATA_PREFIX):
        add(t, p, "listed", (key, [k[len(key):] for k, _e in r.entries or ()], sent), ref)
    if r.op == "GET" and key.startswith(NODES_PREFIX) and t <= first_live.get(p, NEVER):
        serial = bucket.serial_of(key, r.answer_version) if status == "ok" else 0 if status == "not_found" else -1
        add(t, p, "read", (key, serial, sent), ref)


# --- the clocks' admissible offsets: a system of difference constraints ------------------------------------


class Constraints:
    """The bounds of the module's docstring as difference constraints x - y <= c, over one variable per
    machine (T_m: true time = wall + T_m, |T_m| <= max_skew) and one per version (the instant it took
    effect), with a reference Z = 0. Feasible iff the constraint graph has no negative cycle; the largest
    T_b - T_a is the shortest path from a to b (Bellman-Ford, as a queue: SPFA)."""

    def __init__(self, ts: TraceSet, bucket: Bucket, max_skew_ms: int, loose: frozenset = frozenset()) -> None:
        """`loose`: keys whose versions' order is not bound (a body written twice: which of two versions with
        one ETag a write followed, the chain could only guess)."""
        self.ms = sorted({pt.machine for pt in ts.procs})
        self.var = {m: k + 1 for k, m in enumerate(self.ms)}  # 0 is Z
        n = len(self.ms) + 1
        base = ts.base_ms
        mach = [self.var[pt.machine] for pt in ts.procs]
        edges: list[tuple[int, int, int]] = []  # (y, x, c): x - y <= c

        def le(x: int, y: int, c: int) -> None:
            edges.append((y, x, c))

        for m in self.ms:
            le(self.var[m], 0, max_skew_ms)
            le(0, self.var[m], max_skew_ms)
        for key, chain in bucket.chains.items():
            ids = list(range(n, n + len(chain)))
            n += len(chain)
            for i, v in enumerate(chain):
                a = ids[i]
                w = v.write
                if w is not None:
                    gap = 1 if w.answer_wall is None or w.answer_wall > w.send_wall else 0  # (as `schedule`)
                    le(mach[w.proc], a, -(w.send_wall - base) - gap)  # a >= send + T
                    if w.status == "ok" and w.answer_wall is not None:
                        le(a, mach[w.proc], w.answer_wall - base)  # a <= answer + T
                if i and key not in loose:
                    le(ids[i - 1], a, -1)  # after the version before it
                for r in v.reads:
                    if r.answer_wall is not None:
                        le(a, mach[r.proc], r.answer_wall - base)  # applied before the read was answered
                    if i + 1 < len(chain) and key not in loose:
                        le(mach[r.proc], ids[i + 1], -(r.send_wall - base) - 1)  # replaced after it was sent
            if chain:
                for r in bucket.absent_reads.get(key, ()):
                    le(mach[r.proc], ids[0], -(r.send_wall - base) - 1)
        self.n = n
        self.adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for y, x, c in edges:
            self.adj[y].append((x, c))

    def _spfa(self, sources: list[int], extra: tuple | None = None) -> list[int] | None:
        from collections import deque

        inf = 1 << 62
        dist = [inf] * self.n
        edges = [0] * self.n  # how many edges the shortest path found so far has: n or more is a cycle
        q = deque()
        inq = [False] * self.n
        for s in sources:
            dist[s] = 0
            q.append(s)
            inq[s] = True
        adj = self.adj
        if extra is not None:
            adj = [list(a) for a in adj]
            y, x, c = extra
            adj[y].append((x, c))
        n = self.n
        while q:
            u = q.popleft()
            inq[u] = False
            du = dist[u]
            for v, c in adj[u]:
                nd = du + c
                if nd < dist[v]:
                    dist[v] = nd
                    edges[v] = edges[u] + 1
                    if edges[v] >= n:
                        return None  # a path of n edges repeats a vertex: a negative cycle, not feasible
                    if not inq[v]:
                        q.append(v)
                        inq[v] = True
        return dist

    def solve(self, extra: tuple | None = None) -> dict[str, int] | None:
        """A feasible T per machine (true = wall + T), with the extra constraint if given; None if none."""
        dist = self._spfa(list(range(self.n)), extra)
        if dist is None:
            return None
        return {m: dist[self.var[m]] - dist[0] for m in self.ms}

    def widest(self, a: str, b: str) -> int | None:
        """The largest T_b - T_a: how much later b's lines can be placed than a's (None: infeasible)."""
        dist = self._spfa([self.var[a]])
        if dist is None:
            return None
        return dist[self.var[b]]
