"""The conformance replay (placeholder until the replay lands)."""

from __future__ import annotations


def replay_all(ts, bucket) -> list:
    return []
