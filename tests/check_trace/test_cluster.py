"""Three example nodes (examples/asyncio_node) as OS processes against SeaweedFS on loopback, through a proxy
that delays and drops answers, with a kill -9 and a restart, a SIGSTOP/SIGCONT pause longer than the lease
(its peers fence it; it exits on its next write) and a clean stop: `check-trace` passes the correct node and
catches each seeded bug by its invariant, the conformance replay naming the first divergent effect (issue 49).
About 20 s a run: slow (`pytest -m slow tests/check_trace`).
"""

from __future__ import annotations

import pytest

from house.errors import Exit
from nodelease.cli import main

from .cluster import FULL, INVARIANT_OF, run_cluster

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


@pytest.mark.parametrize("bug", [None, *EXPECTED])
def test_three_nodes_judged_from_their_traces(server, tmp_path, capsys, bug):
    r = run_cluster(server.url, str(tmp_path), bug, seed=7, plan=FULL)
    # four processes: the killed one (-9), the one fenced in its pause (1), clean stops (0); a node whose first
    # write was held back in the network past its timeout may be fenced before it ever held its lease (1)
    assert len(r.exits) == 4 and set(r.exits.values()) <= {-9, 0, 1} and 1 in r.exits.values(), r
    assert r.proxy_counts["delayed"] and r.proxy_counts["dropped"], r.proxy_counts
    status = main(["check-trace", r.trace_dir, "--access-log", r.access_log, "--faults", r.faults_log])
    out, err = capsys.readouterr()
    assert "faults log: 1 pauses" in out, out  # (the SIGSTOP/SIGCONT pause, excused as a world's pause is)
    if bug is None:
        assert status == Exit.PASSED, out + err
        assert "first divergent effect" not in out and out.count("conforms:") == 4, out
    else:
        invariant, divergence = EXPECTED[bug]
        assert status == Exit.VIOLATION, out + err
        assert f"  {invariant:<9} violated" in out, out
        assert "first divergent effect" in out and divergence in out, out
