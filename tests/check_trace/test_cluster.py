"""Three example nodes (examples/asyncio_node) as OS processes against SeaweedFS on loopback, through a proxy
that delays and drops answers, with a kill -9 and a restart, a SIGSTOP/SIGCONT pause longer than the lease
(its peers fence it; it exits on its next write) and a clean stop: `check-trace` passes the correct node and
catches each seeded bug by its invariant, the conformance replay naming the first divergent effect (issue 49).
About 20 s a run: slow (`pytest -m slow tests/check_trace`).
"""

from __future__ import annotations

import os

import pytest

from house.errors import Exit
from nodelease.cli import main

from .cluster import FULL, INVARIANT_OF, run_cluster, why_not_acted

pytestmark = pytest.mark.slow

DIVERGENCE = {  # bug -> what the replay's first divergence says
    "unconditional_fence": " unconditional (",
    "stale_after_pause": "the model did not serve it",
    "reuse_generation": '1") instead',
}
EXPECTED = {bug: (INVARIANT_OF[bug], DIVERGENCE[bug]) for bug in INVARIANT_OF}  # bug -> (invariant, divergence)


@pytest.fixture(scope="module")
def server(seaweedfs_server):
    return seaweedfs_server


SEEDS = (7, 8, 9)  # a seeded bug's run is tried again, on the next seed, if the bug never acted in it


@pytest.mark.parametrize("bug", [None, *EXPECTED])
def test_three_nodes_judged_from_their_traces(server, tmp_path, capsys, bug):
    for seed in SEEDS:
        r = run_cluster(server.url, str(tmp_path / f"seed{seed}"), bug, seed=seed, plan=FULL)
        why = None if bug is None else why_not_acted(bug, r.trace_dir)
        if why is None:
            capsys.readouterr()
            status = main(["check-trace", r.trace_dir, "--access-log", r.access_log, "--faults", r.faults_log])
            out, err = capsys.readouterr()
            if not (bug and status == Exit.USAGE and "bodies written twice" in err):
                break
            # reuse_generation writes a body twice (against the format's promise, docs/traces.md): an answer
            # lost on one of them can leave no placement of the traces admissible, which check-trace says
            why = f"its traces cannot be placed: {err.strip()[:300]}"
        print(f"seed {seed}: {why}; the next seed")
    else:
        pytest.fail(f"{bug} did not act, or its traces could not be placed, in the runs of seeds {SEEDS}")
    # four processes: the killed one (-9), the one fenced in its pause (1), clean stops (0); a node whose first
    # write was held back in the network past its timeout may be fenced before it ever held its lease (1)
    assert len(r.exits) == 4 and set(r.exits.values()) <= {-9, 0, 1} and 1 in r.exits.values(), r
    assert r.proxy_counts["delayed"] and r.proxy_counts["dropped"], r.proxy_counts
    assert "faults log: 1 pauses" in out, f"exit {status}; stderr: {err}\n{out}"  # (the SIGSTOP/SIGCONT pause)
    if bug is None:
        assert status == Exit.PASSED, out + err
        assert "first divergent effect" not in out and out.count("conforms:") == 4, out
    else:
        invariant, divergence = EXPECTED[bug]
        assert status == Exit.VIOLATION, out + err
        assert f"  {invariant:<9} violated" in out, out
        assert "first divergent effect" in out and divergence in out, out


@pytest.mark.parametrize("bug", list(EXPECTED))
def test_a_bug_not_acting_is_told_apart(bug):
    """why_not_acted reads the traces alone: on the stored traces of the correct example no seeded bug acts;
    on each bug's own stored traces, that bug does (so a retry above is never a checker's miss)."""
    import gzip
    import shutil
    import tempfile

    from .cluster import DATA

    def unpacked(name: str) -> str:
        d = tempfile.mkdtemp(prefix=f"traces-{name}-")
        for f in sorted(os.listdir(os.path.join(DATA, name))):
            with gzip.open(os.path.join(DATA, name, f), "rb") as src, open(os.path.join(d, f[:-3]), "wb") as dst:
                shutil.copyfileobj(src, dst)
        return d

    correct, own = unpacked("correct"), unpacked(bug)
    try:
        assert why_not_acted(bug, correct) is not None
        assert why_not_acted(bug, own) is None
    finally:
        shutil.rmtree(correct)
        shutil.rmtree(own)
