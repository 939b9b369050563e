"""Deliberately broken models: each differs from model/ in exactly one rule.

Every module states the rule it breaks (RULE) and the invariant that must
catch it (CATCHES); `python runner.py --broken` runs them all and a test pins
that each is caught.
"""

from __future__ import annotations

import importlib

# name -> module path; each module exposes MODEL, step, RULE, CATCHES and a docstring
BROKEN = {
    "unconditional_fence": "broken_models.unconditional_fence",  # BM-1
    "reused_generation": "broken_models.reused_generation",  # BM-2
    "unlocked_resolver": "broken_models.unlocked_resolver",  # BM-3
    "adopt_any_instance": "broken_models.adopt_any_instance",
    "drain_with_pending": "broken_models.drain_with_pending",
    "unchecked_data_ack": "broken_models.unchecked_data_ack",
    "dropped_pending_release": "broken_models.dropped_pending_release",
    "instant_start_check": "broken_models.instant_start_check",
    "seed_from_old_lease_only": "broken_models.seed_from_old_lease_only",
    # judged on world facts (acts, applied writes, listings, fences)
    "acts_after_lease": "broken_models.acts_after_lease",
    "validity_from_reply": "broken_models.validity_from_reply",
    "no_restore": "broken_models.no_restore",
    "adopt_own_fence": "broken_models.adopt_own_fence",
    "acquire_when_drained": "broken_models.acquire_when_drained",
    "act_while_releasing": "broken_models.act_while_releasing",
    "fenced_keeps_running": "broken_models.fenced_keeps_running",
    # the protocol's margins (T-2..T-5, FN-2, FN-7)
    "no_grace": "broken_models.no_grace",
    "early_takeover": "broken_models.early_takeover",
    "watch_not_restarted": "broken_models.watch_not_restarted",
    "absent_fence_no_written_at": "broken_models.absent_fence_no_written_at",
    "release_unconditional": "broken_models.release_unconditional",
    "guard_fails_open": "broken_models.guard_fails_open",
    "guard_ignores_old_heartbeats": "broken_models.guard_ignores_old_heartbeats",  # a survivor until UP-2's check
    "stop_without_cut": "broken_models.stop_without_cut",  # CS-1: events take time
    "unconditional_marker": "broken_models.unconditional_marker",  # UP-3: a one-rule mutant's blind spot
    "forget_fresh_heartbeat": "broken_models.forget_fresh_heartbeat",  # FN-8: forget drawn in upgrades
    "keeps_hold_after_failed_upload": "broken_models.keeps_hold_after_failed_upload",  # OR-5: the world's upload_failed
    "holds_survive_a_lapse": "broken_models.holds_survive_a_lapse",  # NL-11, OR-4: holds end at a lapse
    "unbounded_fences": "broken_models.unbounded_fences",  # BD-1: the world counts fences in flight
    "stop_retries_forever": "broken_models.stop_retries_forever",  # CS-2: a clean stop ends
    "fence_dated_zero": "broken_models.fence_dated_zero",  # NL-1: a fence keeps written_at
    "acquires_while_invalid": "broken_models.acquires_while_invalid",  # OR-2: judged on the record write's send
    "drain_keeps_holds": "broken_models.drain_keeps_holds",  # CS-3: drains judged with holds
    "short_start_check": "broken_models.short_start_check",  # NL-5: the first write's wait, on world facts
    "absent_frees": "broken_models.absent_frees",  # FN-5: judged on the bucket's states of nodes/A
    "short_watch": "broken_models.short_watch",  # FN-2: FENCE-1 judges each fence's decision
    "forget_any_format": "broken_models.forget_any_format",  # FN-8: forget asked of nodes gone for good
}

# Mutants this world does not catch (or only rarely): each docstring says what covers for
# it. `--broken` runs them and shows what happened, but their surviving fails nothing.
SURVIVORS = {
    "old_lease_own_id": "broken_models.old_lease_own_id",
}


def load(name: str):
    """The broken model's module."""
    return importlib.import_module(BROKEN.get(name) or SURVIVORS[name])
