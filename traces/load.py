"""A directory of traces read: each file checked against the schema, line by line, its requests paired.

A trace that cannot be read is bad input (house.errors.UsageError: one line naming the file and the
line, exit 2): a missing directory, a file that is not NDJSON, a line the schema refuses (NaN and
Infinity included), an answer to a request never sent, a request sent twice under one id, a monotonic
clock that runs back, processes that disagree on the timing, two files of one instance; a faults log
line naming no process of the traces, or a pause that the process's own lines contradict.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass, field

from house.errors import UsageError
from model.params import Params, ParamsError, validate

from .format import PARAMS, TRACE, VERSION, Validator, load_schema, parse_line

TRACE_SUFFIXES = (".ndjson", ".jsonl", ".ndjson.gz", ".jsonl.gz")  # (gzip: as stored under tests/)


@dataclass
class Request:
    """One request of a process: its `send` line, and its `answer` line if one was written."""

    proc: int
    id: int
    op: str
    key: str
    cond: str | None
    version: str | None  # the If-Match token
    body: str | None
    timeout_ms: int | None
    send_wall: int
    send_line: int  # the line's index in the process's lines
    status: str | None = None  # None: no answer line (the process ended first)
    answer_version: str | None = None
    answer_body: str | None = None
    entries: list | None = None
    answer_wall: int | None = None
    answer_line: int | None = None


@dataclass
class Pause:
    """One pause of a process, as the environment that made it recorded it (docs/traces.md, "The faults
    log"): on the process's own monotonic clock, from when it was stopped to when it was let go on."""

    from_mono_ms: int
    to_mono_ms: int
    line: int  # its line in the faults log


# how far into a pause the process may still stamp a line: the harness reads its clock once the stop signal
# is sent, and the signal reaches the process a moment later (an interrupt to its CPU: well under a ms)
PAUSE_EDGE_MS = 5
FAULTS = ("pause",)  # the faults a faults log may name


@dataclass
class ProcTrace:
    index: int
    path: str
    header: dict
    lines: list[dict] = field(default_factory=list)  # every line after the header, in order
    requests: dict[int, Request] = field(default_factory=dict)  # by id
    pauses: list[Pause] = field(default_factory=list)  # from the faults log, in order

    @property
    def node_id(self) -> str:
        return self.header["node_id"]

    @property
    def instance(self) -> str:
        return self.header["instance"]

    @property
    def machine(self) -> str:
        return self.header["machine"]

    @property
    def exit_line(self) -> dict | None:
        return self.lines[-1] if self.lines and self.lines[-1]["kind"] == "exit" else None

    @property
    def last_wall(self) -> int:
        return self.lines[-1]["wall_ms"] if self.lines else self.header["wall_ms"]


@dataclass
class AccessEntry:
    """One line of an access log: a request the server answered (docs/traces.md, "Access log")."""

    op: str
    key: str
    status: int
    etag: str | None
    if_match: str | None
    if_none_match: str | None
    line: int


@dataclass
class TraceSet:
    directory: str
    params: Params
    procs: list[ProcTrace]
    access: list[AccessEntry] = field(default_factory=list)
    faults_log: str | None = None
    lines: int = 0  # lines read in all (headers included)

    @property
    def base_ms(self) -> int:
        """The earliest header's wall clock: true time 0 in the histories."""
        return min(pt.header["wall_ms"] for pt in self.procs)


def trace_files(directory: str) -> list[str]:
    if not os.path.isdir(directory):
        raise UsageError(f"{directory}: not a directory of traces")
    names = sorted(n for n in os.listdir(directory) if n.endswith(TRACE_SUFFIXES))
    if not names:
        raise UsageError(f"{directory}: no trace files in it (*.ndjson, one per process)")
    return [os.path.join(directory, n) for n in names]


def load(directory: str, access_log: str | None = None, faults_log: str | None = None) -> TraceSet:
    validator = Validator(load_schema())
    procs: list[ProcTrace] = []
    params: dict | None = None
    seen: dict[tuple[str, str], str] = {}
    total = 0
    for path in trace_files(directory):
        pt = _load_file(path, len(procs), validator)
        total += 1 + len(pt.lines)
        if params is None:
            params = pt.header["params"]
        elif pt.header["params"] != params:
            raise UsageError(f"{path}: its params {pt.header['params']} differ from another trace's {params}: "
                             f"one cluster runs with one timing")
        who = (pt.node_id, pt.instance)
        if who in seen:
            raise UsageError(f"{path}: process {pt.node_id}/{pt.instance} also wrote {seen[who]}: one file per process")
        seen[who] = path
        procs.append(pt)
    assert params is not None
    try:
        p = validate(Params(**{k: params[k] for k in PARAMS}))
    except ParamsError as e:
        raise UsageError(f"{directory}: the traces' params are refused: {e}") from None
    ts = TraceSet(directory, p, procs, lines=total)
    if access_log is not None:
        ts.access = load_access_log(access_log)
        ts.lines += len(ts.access)
    if faults_log is not None:
        ts.faults_log = faults_log
        load_faults(faults_log, procs)
    return ts


def _load_file(path: str, index: int, validator: Validator) -> ProcTrace:
    try:
        f = gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{path}: cannot read it: {e.strerror}") from None
    try:
        return _read(f, path, index, validator)
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: cannot read it: {e}") from None
    finally:
        f.close()


def _read(f, path: str, index: int, validator: Validator) -> ProcTrace:
    pt: ProcTrace | None = None
    last_mono = None
    for n, text in enumerate(f, 1):
        if not text.strip():
            continue
        try:
            value = parse_line(text)
        except ValueError as e:
            raise UsageError(f"{path}:{n}: not a JSON line: {e}") from None
        if pt is None:
            if not isinstance(value, dict) or value.get("trace") != TRACE:
                raise UsageError(f"{path}:{n}: not a {TRACE} file: its first line must be the header "
                                 f'({{"trace": "{TRACE}", "version": {VERSION}, ...}})')
            if value.get("version") != VERSION:
                raise UsageError(f"{path}:{n}: trace format version {value.get('version')!r}; this tool reads "
                                 f"version {VERSION}")
            errs = validator.errors(value, "#/$defs/header")
            if errs:
                raise UsageError(f"{path}:{n}: header: {errs[0]}")
            pt = ProcTrace(index, path, value)
            last_mono = value["mono_ms"]
            continue
        errs = validator.errors(value, "#/$defs/line")
        if errs:
            raise UsageError(f"{path}:{n}: {errs[0]}")
        if value["mono_ms"] < last_mono:
            raise UsageError(f"{path}:{n}: mono_ms {value['mono_ms']} runs back (the line before: {last_mono}): "
                             f"a monotonic clock never does")
        if pt.exit_line is not None:
            raise UsageError(f"{path}:{n}: a line after the process's exit")
        last_mono = value["mono_ms"]
        value["_line"] = n
        k = len(pt.lines)
        pt.lines.append(value)
        kind = value["kind"]
        if kind == "send":
            rid = value["id"]
            if rid in pt.requests:
                raise UsageError(f"{path}:{n}: request id {rid} sent twice (ids are unique per process)")
            pt.requests[rid] = Request(index, rid, value["op"], value["key"], value.get("cond"),
                                       value.get("version"), value.get("body"), value.get("timeout_ms"),
                                       value["wall_ms"], k)
        elif kind == "answer":
            r = pt.requests.get(value["id"])
            if r is None:
                raise UsageError(f"{path}:{n}: an answer to request {value['id']}, which was never sent")
            if r.status is not None:
                raise UsageError(f"{path}:{n}: request {value['id']} answered twice")
            r.status = value["status"]
            r.answer_version = value.get("version")
            r.answer_body = value.get("body")
            r.entries = value.get("entries")
            r.answer_wall = value["wall_ms"]
            r.answer_line = k
    if pt is None:
        raise UsageError(f"{path}: empty: a trace begins with its header line")
    return pt


def load_access_log(path: str) -> list[AccessEntry]:
    """The simple access log (docs/traces.md): one JSON object a line, a request the server answered."""
    out = []
    for n, v in _json_lines(path, "the access log"):
        if (not isinstance(v, dict) or v.get("op") not in ("GET", "PUT", "DELETE", "LIST")
                or not isinstance(v.get("key"), str) or type(v.get("status")) is not int):
            raise UsageError(f'{path}:{n}: an access log line is {{"op": "PUT", "key": "...", "status": 200, '
                             f'"etag": "...", "if_match": null, "if_none_match": null}}')
        out.append(AccessEntry(v["op"], v["key"], v["status"], v.get("etag"), v.get("if_match"),
                               v.get("if_none_match"), n))
    return out


def _json_lines(path: str, what: str):
    """(line number, value) of each JSON line of a log the environment wrote (blank lines skipped)."""
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{path}: cannot read {what}: {e.strerror}") from None
    with f:
        for n, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                yield n, parse_line(text)
            except ValueError as e:
                raise UsageError(f"{path}:{n}: not a JSON line: {e}") from None


def load_faults(path: str, procs: list[ProcTrace]) -> None:
    """The faults log (docs/traces.md): one JSON object a line, a fault the environment made, here a pause of
    one process (SIGSTOP to SIGCONT), given to that process's trace. Refused (one line, exit 2): a line naming
    no process of the traces, a pause that ends before it begins, and one that the process's own lines
    contradict (a line stamped inside it: a stopped process writes nothing)."""
    by_who = {(pt.node_id, pt.instance): pt for pt in procs}
    shape = ('a faults log line is {"fault": "pause", "node_id": "...", "instance": "...", "from_mono_ms": 0, '
             '"to_mono_ms": 0}')
    for n, v in _json_lines(path, "the faults log"):
        if not isinstance(v, dict) or set(v) != {"fault", "node_id", "instance", "from_mono_ms", "to_mono_ms"} \
                or not all(type(v[k]) is int for k in ("from_mono_ms", "to_mono_ms")):
            raise UsageError(f"{path}:{n}: {shape}")
        if v["fault"] not in FAULTS:
            raise UsageError(f"{path}:{n}: fault {v['fault']!r}: a faults log names {', '.join(FAULTS)}")
        pt = by_who.get((v["node_id"], v["instance"]))
        if pt is None:
            raise UsageError(f"{path}:{n}: {v['node_id']}/{v['instance']} is no process of the traces")
        lo, hi = v["from_mono_ms"], v["to_mono_ms"]
        if hi < lo:
            raise UsageError(f"{path}:{n}: a pause that ends ({hi}) before it begins ({lo})")
        inside = next((x for x in pt.lines if lo + PAUSE_EDGE_MS < x["mono_ms"] < hi), None)
        if inside is not None:
            raise UsageError(f"{path}:{n}: {pt.node_id}/{pt.instance} was paused from mono {lo} to {hi} ms, "
                             f"but {os.path.basename(pt.path)}:{inside['_line']} is stamped {inside['mono_ms']} "
                             f"ms: a stopped process writes nothing")
        pt.pauses.append(Pause(lo, hi, n))
    for pt in procs:
        pt.pauses.sort(key=lambda x: x.from_mono_ms)
