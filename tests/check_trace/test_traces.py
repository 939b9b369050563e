"""Traces of a real implementation judged by the same checkers (issue 49): the format and its schema, the
loader's refusals (exit 2, one line), the three verdicts on hand-made traces whose clocks decide, the
access log, and the traces stored under tests/check_trace/data/ (three seeded bugs of examples/asyncio_node,
each caught by its invariant and named by the conformance replay; the correct example passing). No server
is run here: test_cluster.py runs the example against SeaweedFS (slow).
"""

from __future__ import annotations

import glob
import gzip
import json
import os

import pytest

from house.errors import Exit, UsageError
from nodelease.cli import main
from traces import format as fmt
from traces.bucket import rebuild
from traces.judge import judge
from traces.load import load

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
PARAMS = {"ttl_ms": 2000, "grace_ms": 1000, "safety_ms": 400, "max_skew_ms": 200, "heartbeat_period_ms": 600,
          "attempt_timeout_ms": 500}
BASE = 1_700_000_000_000


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# --- the format ---------------------------------------------------------------------------------------------


def test_the_schema_file_is_the_schema():
    """trace-v1.schema.json is what traces/format.py builds (regenerate it with format.schema_text())."""
    assert fmt.load_schema() == json.loads(fmt.schema_text())


def sample_lines() -> list[dict]:
    lines = []
    for path in sorted(glob.glob(os.path.join(DATA, "*", "*.gz")))[:2]:
        with gzip.open(path, "rt") as f:
            lines += [json.loads(x) for x in f][1:400]
    return lines


def test_the_stdlib_validator_agrees_with_jsonschema():
    """On valid lines of the stored traces and on broken copies of them, the loader's validator and the
    jsonschema package give the same answer."""
    jsonschema = pytest.importorskip("jsonschema")
    doc = fmt.load_schema()
    ref = {"$ref": "#/$defs/line", "$defs": doc["$defs"]}
    theirs = jsonschema.Draft202012Validator(ref)
    ours = fmt.Validator(doc)
    lines = sample_lines()
    assert len(lines) > 300
    broken = []
    for i, line in enumerate(lines[:60]):
        b = dict(line)
        if i % 4 == 0:
            b["kind"] = "no_such_kind"
        elif i % 4 == 1:
            b["extra"] = 1
        elif i % 4 == 2:
            b["wall_ms"] = "soon"
        else:
            del b["mono_ms"]
        broken.append(b)
    for line in lines + broken:
        assert (ours.errors(line, "#/$defs/line") == []) == theirs.is_valid(line), line
    assert all(ours.errors(b, "#/$defs/line") for b in broken)


def header(node="n1", instance="a1", machine="m1", wall=BASE, **over) -> dict:
    h = {"trace": "nodelease-trace", "version": 1, "node_id": node, "instance": instance, "machine": machine,
         "params": dict(PARAMS), "wall_ms": wall, "mono_ms": 0}
    h.update(over)
    return h


def write(directory: str, name: str, lines: list) -> None:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "w") as f:
        for x in lines:
            f.write((x if isinstance(x, str) else json.dumps(x)) + "\n")


def line(wall: int, kind: str, **fields) -> dict:
    return {"wall_ms": BASE + wall, "mono_ms": wall, "kind": kind, **fields}


@pytest.mark.parametrize("lines, says", [
    ([], "empty"),
    (['{"trace": "nodelease-trace", "version": 1, '], "not a JSON line"),
    ([{"hello": 1}], "not a nodelease-trace file"),
    ([header(version=2)], "version 2"),
    ([header(), '{"wall_ms": NaN, "mono_ms": 1, "kind": "crash"}'], "NaN is not a number JSON allows"),
    ([header(), line(1, "no_such_kind")], "no_such_kind"),
    ([header(), line(1, "served", actor="a", generation=1, request=1, colour="red")], "colour is not a field"),
    ([header(), line(1, "answer", id=7, status="ok")], "never sent"),
    ([header(), line(5, "check_began"), {"wall_ms": BASE + 6, "mono_ms": 2, "kind": "check_began"}], "runs back"),
    ([header(params={**PARAMS, "grace_ms": 0, "safety_ms": 0})], "T-2"),
])
def test_a_bad_trace_is_refused_in_one_line(tmp_path, capsys, lines, says):
    d = str(tmp_path / "t")
    write(d, "n1.ndjson", lines)
    status, out, err = run(capsys, "check-trace", d)
    assert status == Exit.USAGE
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in out + err
    assert says in err, err


def test_a_missing_or_empty_directory_is_refused(tmp_path, capsys):
    for d in (str(tmp_path / "nothing"), str(tmp_path)):
        status, _out, err = run(capsys, "check-trace", d)
        assert status == Exit.USAGE and len(err.strip().splitlines()) == 1, err


# --- the three verdicts: clocks decide -------------------------------------------------------------------


def owner(node, inst, g):
    return f"wasmkeep-owner 1\nheld {node} {inst} {g}\n" if node else f"wasmkeep-owner 1\nnobody {g}\n"


def two_processes(directory: str, act_at: int) -> None:
    """n1 (machine m1) holds actor x from 1.01 s, its node lease valid until 2.6 s on its clock, and serves a
    request at `act_at`; n2 (machine m2) writes x's record naming nobody, unconditionally, sent at 2.0 s and
    answered at 2.005 s. Nothing links the two machines' clocks: the act falls after the record changed (INV-1:
    acting without a hold) by as much as the clocks allow."""
    live = f"wasmkeep-node 3\nlive a1\nwritten_at_ms {BASE + 1000}\nnode n1\n"
    write(directory, "n1.ndjson", [
        header(),
        line(1000, "send", id=1, op="PUT", key="nodes/n1", cond="if-none-match", body=live, timeout_ms=500),
        line(1005, "answer", id=1, status="ok", version='"e1"'),
        line(1005, "lease_valid", written_at_ms=BASE + 1000, until_ms=BASE + 2600, how="ack"),
        line(1010, "send", id=2, op="PUT", key="owners/x", cond="if-none-match", body=owner("n1", "a1", 1),
             timeout_ms=500),
        line(1015, "answer", id=2, status="ok", version='"r1"'),
        line(1015, "hold_began", actor="x", generation=1, version='"r1"', how="ack"),
        line(act_at, "served", actor="x", generation=1, request=1),
        line(act_at + 1, "answered", actor="x", generation=1, request=1),
        line(2550, "exit", status=0, reason="done"),
    ])
    write(directory, "n2.ndjson", [
        header("n2", "b1", "m2"),
        line(2000, "send", id=1, op="PUT", key="owners/x", cond=None, body=owner(None, None, 1), timeout_ms=500),
        line(2005, "answer", id=1, status="ok", version='"r2"'),
        line(2500, "exit", status=0, reason="done"),
    ])


@pytest.mark.parametrize("act_at, verdict", [
    (1200, "held"),  # 0.8 s before the write was sent: no skew within 200 ms each puts it after
    (2100, "possibly violated"),  # 0.1 s after it was sent: the clocks decide (2 x max_skew = 0.4 s)
    (2500, "violated"),  # 0.5 s after it was sent, 0.495 s after it was answered: whatever the clocks did
])
def test_inv1_across_two_clocks_is_violated_possibly_or_held(tmp_path, act_at, verdict):
    """INV-1 (OR-4): an act after the record changed, on another machine's clock: the three verdicts."""
    d = str(tmp_path / "t")
    two_processes(d, act_at)
    v = judge(load(d))
    assert v.status["INV-1"] == verdict, [s.message for s in v.seen if s.invariant == "INV-1"]
    assert v.status["INV-3"] == "violated"  # the unconditional write, whatever the clocks (not a time rule)
    if verdict == "possibly violated":
        s = next(s for s in v.seen if s.invariant == "INV-1")
        assert 0 < len(s.placements) < len(v.placements)
        assert s.lo_ms < s.hi_ms  # the interval of true time its events span where it is a violation


def test_the_same_act_against_its_own_clock_is_judged_exactly(tmp_path):
    """n1 serves at 2.65 s, after its own lease ran out at 2.6 s on its own clock (NL-4, OR-4): violated in every
    placement, however the clocks are placed (a placement moves a process's lines and its clock together)."""
    d = str(tmp_path / "t")
    two_processes(d, 1200)
    with open(os.path.join(d, "n1.ndjson")) as f:
        rows = f.read().splitlines()[:-3]  # up to its hold
    rows += [json.dumps(line(2650, "served", actor="x", generation=1, request=2)),
             json.dumps(line(2700, "exit", status=0, reason="done"))]
    with open(os.path.join(d, "n1.ndjson"), "w") as f:
        f.write("\n".join(rows) + "\n")
    write(d, "n2.ndjson", [header("n2", "b1", "m2"), line(2690, "exit", status=0, reason="done")])
    v = judge(load(d))
    assert v.status["INV-1"] == "violated"
    s = next(s for s in v.seen if s.invariant == "INV-1")
    assert "node lease was not valid" in s.message and len(s.placements) == len(v.placements)


def test_the_access_log_adds_a_write_whose_answer_was_lost(tmp_path):
    """A write answered timed_out that nothing later showed is not known to have landed; the access log's 200
    for its key and ETag (the MD5 of its body) says it did."""
    d = str(tmp_path / "t")
    body = owner("n1", "a1", 1)
    from traces.bucket import md5_etag

    write(d, "n1.ndjson", [
        header(),
        line(10, "send", id=1, op="PUT", key="owners/x", cond="if-none-match", body=body, timeout_ms=500),
        line(510, "answer", id=1, status="timed_out"),
        line(600, "exit", status=0, reason="done"),
    ])
    assert rebuild(load(d)).chains == {}
    log = str(tmp_path / "access.ndjson")
    with open(log, "w") as f:
        f.write(json.dumps({"op": "PUT", "key": "owners/x", "status": 200, "etag": md5_etag(body), "if_match": None,
                            "if_none_match": "*"}) + "\n")
    chains = rebuild(load(d, log)).chains
    assert [v.state for v in chains["owners/x"]] == ["held n1 a1 1"]


def test_a_bad_access_log_is_refused(tmp_path, capsys):
    d = str(tmp_path / "t")
    two_processes(d, 1200)
    log = str(tmp_path / "access.ndjson")
    with open(log, "w") as f:
        f.write('{"op": "PUT"}\n')
    status, _out, err = run(capsys, "check-trace", d, "--access-log", log)
    assert status == Exit.USAGE and "access log line" in err


# --- the faults log: the environment's pauses ---------------------------------------------------------------


def lease_writer(directory: str, at: list[int]) -> None:
    """n1 writes its node lease at each of `at` (ms), each acknowledged, each If-Match on the one before."""
    rows: list = [header()]
    version = None
    for k, t in enumerate(at, 1):
        body = f"wasmkeep-node 3\nlive a1\nwritten_at_ms {BASE + t}\nnode n1\n"
        rows.append(line(t, "send", id=k, op="PUT", key="nodes/n1", cond="if-match" if version else "if-none-match",
                         version=version, body=body, timeout_ms=500))
        version = f'"e{k}"'
        rows.append(line(t + 5, "answer", id=k, status="ok", version=version))
    rows.append(line(at[-1] + 100, "exit", status=0, reason="done"))
    write(directory, "n1.ndjson", rows)


def pause_log(path: str, lo: int, hi: int, instance: str = "a1") -> str:
    with open(path, "w") as f:
        f.write(json.dumps({"fault": "pause", "node_id": "n1", "instance": instance, "from_mono_ms": lo,
                            "to_mono_ms": hi}) + "\n")
    return path


def test_a_pause_in_the_faults_log_excuses_the_lease_cadence(tmp_path):
    """LEASE-2 (e), NL-2: a 3 s gap between two lease writes (P = 600 ms) is a violation, unless the environment
    says it stopped the process then (SIGSTOP: a paused process sends nothing), as a simulated world's pause is."""
    d = str(tmp_path / "t")
    lease_writer(d, [3100, 3700, 4300, 7300, 7900])
    v = judge(load(d))
    assert v.status["LEASE-2"] == "violated"
    assert "3000 ms on its clock" in next(s.message for s in v.seen if s.invariant == "LEASE-2")
    faults = pause_log(str(tmp_path / "faults.ndjson"), 4400, 7250)
    assert judge(load(d, None, faults)).status["LEASE-2"] == "held"
    # a pause elsewhere excuses nothing
    other = pause_log(str(tmp_path / "other.ndjson"), 7400, 7850)
    assert judge(load(d, None, other)).status["LEASE-2"] == "violated"


@pytest.mark.parametrize("fault, says", [
    ({"fault": "pause", "node_id": "n1", "instance": "zz", "from_mono_ms": 4400, "to_mono_ms": 7250},
     "n1/zz is no process of the traces"),
    ({"fault": "pause", "node_id": "n1", "instance": "a1", "from_mono_ms": 4000, "to_mono_ms": 5000},
     "a stopped process writes nothing"),  # its line at 4.3 s contradicts it
    ({"fault": "pause", "node_id": "n1", "instance": "a1", "from_mono_ms": 5000, "to_mono_ms": 4500}, "before it begins"),
    ({"fault": "gc", "node_id": "n1", "instance": "a1", "from_mono_ms": 4400, "to_mono_ms": 7250}, "fault 'gc'"),
    ({"fault": "pause", "node_id": "n1", "instance": "a1", "from_mono_ms": 4400.5, "to_mono_ms": 7250},
     "a faults log line is"),
])
def test_a_bad_faults_log_is_refused_in_one_line(tmp_path, capsys, fault, says):
    d = str(tmp_path / "t")
    lease_writer(d, [3100, 3700, 4300, 7300, 7900])
    faults = str(tmp_path / "faults.ndjson")
    with open(faults, "w") as f:
        f.write(json.dumps(fault) + "\n")
    status, out, err = run(capsys, "check-trace", d, "--faults", faults)
    assert status == Exit.USAGE and len(err.strip().splitlines()) == 1 and "Traceback" not in out + err, err
    assert says in err, err


# --- the stored traces of the example: three seeded bugs, and the correct node ----------------------------
# (recorded by `python -m tests.check_trace.cluster --record NAME`: docs/traces.md, "The stored traces")


def stored(name: str) -> list[str]:
    """check-trace's arguments for the stored traces `name`, with their faults log when they have one."""
    faults = os.path.join(DATA, f"{name}.faults.ndjson")
    return ["check-trace", os.path.join(DATA, name), *(["--faults", faults] if os.path.exists(faults) else [])]



@pytest.mark.parametrize("bug, invariant, divergence", [
    # BM-1: the fence written without If-Match; the replay names the fence the model writes If-Match
    ("unconditional_fence", "INV-3", "PUT nodes/n3 unconditional"),
    # acting after a pause on the validity checked before it: the model, given the same request, refuses it
    ("stale_after_pause", "INV-1", "the model did not serve it"),
    # BM-2: a wake writes the record's generation again; the model writes generation + 1
    ("reuse_generation", "INV-2", '1") instead'),
])
def test_check_trace_catches_each_seeded_bug(capsys, bug, invariant, divergence):
    """`check-trace` on the stored traces of each seeded bug exits 1 naming its invariant, violated in every
    admissible placement, and the conformance replay names the first divergent effect (issue 49)."""
    status, out, err = run(capsys, *stored(bug))
    assert status == Exit.VIOLATION, out + err
    assert f"  {invariant:<9} violated" in out, out
    assert "first divergent effect" in out and divergence in out, out
    assert "repro: python runner.py check-trace" in out


def test_the_correct_example_passes_and_conforms(capsys, tmp_path):
    report, page = str(tmp_path / "r.json"), str(tmp_path / "p.html")
    status, out, err = run(capsys, *stored("correct"), "--strict", "--report", report, "--html", page)
    assert status == Exit.PASSED, out + err
    assert "faults log: 1 pauses" in out, out  # (recorded with SIGSTOP/SIGCONT: a pause longer than the lease)
    assert "first divergent effect" not in out and out.count("conforms:") == 3, out
    with open(report) as f:
        r = json.load(f)
    assert r["verdicts"]["INV-1"] == "held" and len(r["placements"]) >= 2
    assert all(c["divergence"] is None for c in r["conformance"])
    with open(page) as f:
        assert "Verdicts over the admissible placements" in f.read()


def test_a_restarted_process_listing_after_its_first_write_conforms(capsys):
    """A correct run of the slow cluster test (kept from a failure of 2026-12-07): the restarted n2 wrote its
    first lease write at once (the fenced object's written_at + ttl + grace long past, NL-5's shortcut) and then
    listed nodes/. The replay paired the model's first listing (the start guard's, before its first write) with
    that later listing and waited for its answer, so the model's first write came over 150 ms after the
    implementation's: "first divergent effect" on a correct node. A read the implementation made after writing
    a key under its prefix is not the model's read of before the write."""
    status, out, err = run(capsys, *stored("restart_listing"))
    assert status == Exit.PASSED, out + err
    assert "first divergent effect" not in out and out.count("conforms:") == 4, out


@pytest.mark.parametrize("name", ["reuse_twice_1c", "reuse_twice_3c"])
def test_a_body_written_twice_still_places_the_traces(capsys, name):
    """Two runs of the slow cluster test's reuse_generation (kept from 2026-12-07, three clusters at once): the
    bug writes "nobody 2" and "held n1 ... 1" more than once, against the format's promise of unique bodies.
    In the first, the earlier write of a body had no answer and a read showed that body before its only
    acknowledged write was sent: the earlier write landed (traces/bucket.py, _landed_by_early_reads). In the
    second, the chain guessed which of two versions with one ETag a write followed, wrongly: the order of such a
    key is left free (Constraints' `loose`, and schedule's orders). Both exited 2 ("no placement admissible")
    before; INV-2 is violated in each."""
    status, out, err = run(capsys, *stored(name))
    assert status == Exit.VIOLATION, out + err
    assert "  INV-2     violated" in out, out
    assert "written more than once" in out or "written twice" in out, out


def test_outputs_are_never_overwritten(capsys, tmp_path):
    report = str(tmp_path / "r.json")
    with open(report, "w") as f:
        f.write("{}")
    status, _out, err = run(capsys, "check-trace", os.path.join(DATA, "correct"), "--report", report)
    assert status == Exit.USAGE and "exists already" in err
    with open(report) as f:
        assert f.read() == "{}"


def test_max_skew_override_is_validated(capsys):
    status, _out, err = run(capsys, "check-trace", os.path.join(DATA, "correct"), "--max-skew-ms", "5000")
    assert status == Exit.USAGE and "T-2" in err
    status, _out, err = run(capsys, "check-trace", os.path.join(DATA, "correct"), "--max-skew-ms", "nan")
    assert status == Exit.USAGE


def test_the_example_shares_no_code_with_the_model():
    """examples/asyncio_node is written from the ADR: it imports nothing of the checker."""
    import ast

    root = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "asyncio_node")
    from house import packages

    for path in glob.glob(os.path.join(root, "*.py")):
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            assert not any(n.split(".")[0] in packages.PACKAGES for n in names), (path, names)


def test_usage_error_is_a_usage_error():
    with pytest.raises(UsageError):
        load("/nonexistent/dir")
