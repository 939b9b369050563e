"""SeaweedFS on loopback for the example nodes' runs (test_cluster.py): the conformance tests' fixture."""

from conformance.conftest import seaweedfs_server  # noqa: F401  (a fixture: pytest finds it here)
