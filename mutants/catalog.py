"""The catalogue of one-rule mutants of the protocol model (model/*.py): what a reviewer would
write to test the checkers (a comparison flipped, a condition dropped, a write made unconditional,
a generation or a bound off by one, a statement removed), spread over every rule family.

Each mutant: an id, the file, an exact snippet of it (it must occur exactly once: a test keeps the
catalogue current with the model), its replacement, the rule it breaks and one line saying how.
`python -m mutants.probe` runs them (mutants/probe.py); the README's "Checking power" section has
the last measured table. Many survivors are equivalent (the model guards the same thing twice, or
a bound the world never reaches); the README says which are blind spots.
"""

M = []


def mut(mid, file, orig, repl, rule, desc):
    M.append(dict(id=mid, file=file, orig=orig, repl=repl, rule=rule, desc=desc))


NL, FE, OW, AD, CS, UP, OP, PA = (
    "model/node_lease.py", "model/fencing.py", "model/ownership.py", "model/actor_data.py",
    "model/clean_stop.py", "model/upgrade.py", "model/operator.py", "model/params.py")

# ---------------------------------------------------------------- NL: the node lease
mut("nl4_valid_le", NL,
    "not ls.invalidated and now.wall_ms < self.validity_end(st)",
    "not ls.invalidated and now.wall_ms <= self.validity_end(st)",
    "NL-4", "validity test < -> <= (valid at the very end instant)")
mut("nl4_ignore_lapsed", NL,
    "ls.phase == RUNNING and not ls.lapsed and not ls.invalidated",
    "ls.phase == RUNNING and not ls.invalidated",
    "NL-4/NL-11", "lease_valid ignores the lapsed flag")
mut("nl4_ignore_invalidated", NL,
    "ls.phase == RUNNING and not ls.lapsed and not ls.invalidated",
    "ls.phase == RUNNING and not ls.lapsed",
    "NL-4/CS-1", "lease_valid ignores the clean stop's invalidation")
mut("nl5_check_ttl_only", NL,
    "check_deadline_ms=self.check_deadline(st, now),\n",
    "check_deadline_ms=self.check_clock(now) + st.params.ttl_ms,\n",
    "NL-5", "start check waits ttl instead of ttl + grace")
mut("nl5_change_no_restart", NL,
    "ls = replace(ls, check_changes=changes, check_deadline_ms=self.check_deadline(st, now), check_free_at_ms=None)",
    "ls = replace(ls, check_changes=changes)",
    "NL-5", "a change seen during the start check does not restart its wait")
mut("nl5_shortcut_any_instance", NL,
    "            and rec.instance == ls.check_first_instance\n",
    "",
    "NL-5", "shortcut taken for a fence/release naming any instance, not the one first read")
mut("nl5_shortcut_no_grace", NL,
    "ls = replace(ls, check_free_at_ms=self.free_from_ms(st, rec.written_at_ms))",
    "ls = replace(ls, check_free_at_ms=rec.written_at_ms + st.params.lease_span_ms)",
    "NL-5", "shortcut ends at written_at + ttl - safety instead of + ttl + grace")
mut("nl5_failed_read_passes", NL,
    "if ls.check_seen and self.check_done(ls, now):",
    "if self.check_done(ls, now):",
    "NL-5", "a failed check read passes the check even if no read was ever answered")
mut("nl5_end_period_early", NL,
    "        if self.check_done(ls, now):\n            return self.first_write(st, now, out)\n        # read again",
    "        if self.check_clock(now) + p.period_ms >= ls.check_deadline_ms:\n            return self.first_write(st, now, out)\n        # read again",
    "NL-5", "start check ends one period before its deadline")
mut("nl6_threshold_3", NL,
    "if changes >= 2:",
    "if changes >= 3:",
    "NL-6", "twin refusal needs 3 changes instead of 2")
mut("nl6_never_counts", NL,
    "                changes += 1\n",
    "                changes += 0\n",
    "NL-6", "changes under another live instance are never counted (twin never refused at start)")
mut("nl7_absent_unconditional", NL,
    "cond, version = IF_NONE_MATCH, None",
    "cond, version = None, None",
    "NL-7", "first write over an absent object is unconditional (no If-None-Match)")
mut("nl7_present_unconditional", NL,
    "cond, version = IF_MATCH, ls.check_version",
    "cond, version = None, None",
    "NL-7", "first write over an existing object is unconditional (no If-Match)")
mut("nl8_tick_unconditional", NL,
    "return self.send_lease_write(st, now, IF_MATCH, st.lease.version, out)",
    "return self.send_lease_write(st, now, None, None, out)",
    "NL-8", "periodic lease write unconditional")
mut("nl3_retry_unconditional", NL,
    "return self.send_lease_write(st, now, IF_MATCH, ls.version, out)",
    "return self.send_lease_write(st, now, None, None, out)",
    "NL-3/NL-8", "retry of a lease write unconditional")
mut("nl3_no_retry", NL,
    "            out.append(SetTimer(\"lease_retry\", now.mono_ms + RETRY_MS))\n",
    "            pass\n",
    "NL-3", "a failed lease attempt is never retried within the period")
mut("nl7_timeout_no_reread", NL,
    "if status in FAILED_CONDITION or (status == io.TIMED_OUT and ls.phase == FIRST_WRITE):",
    "if status in FAILED_CONDITION:",
    "NL-7/NL-9", "a first write whose reply was lost goes back to the check without the NL-9 re-read")
mut("nl9_adopt_now", NL,
    "st = self.lease_acknowledged(st, reply.version, rec.written_at_ms, \"adopt\", now, out,",
    "st = self.lease_acknowledged(st, reply.version, now.wall_ms, \"adopt\", now, out,",
    "NL-9", "adopt takes validity from the re-read's arrival, not the stored written_at")
mut("nl9_adopt_old_version", NL,
    "st = self.lease_acknowledged(st, reply.version, rec.written_at_ms, \"adopt\", now, out,",
    "st = self.lease_acknowledged(st, st.lease.version, rec.written_at_ms, \"adopt\", now, out,",
    "NL-9", "adopt keeps the old version instead of the read's token")
mut("nl10_absent_not_lost", NL,
    "        elif reply.status != io.NOT_FOUND:\n            # the read failed",
    "        elif True:\n            # the read failed",
    "NL-10", "re-read finding nodes/<id> absent is treated as no proof (lease not lost)")
mut("nl10_no_drop_holds", NL,
    "        st = self.drop_all_holds(st, now, out)\n",
    "",
    "NL-10", "lost lease exits without dropping holds")
mut("nl11_stale_ack_le", NL,
    "if sent < ls.acked_mono_ms:",
    "if sent <= ls.acked_mono_ms:",
    "NL-4/NL-9", "an ack/adopt of the write sent at the same monotonic instant is ignored (version not updated)")
mut("nl11_until_ge", NL,
    "        if until > now.wall_ms:\n",
    "        if until >= now.wall_ms:\n",
    "NL-11", "an ack exactly at its validity end counts as valid")
mut("nl11_stale_deadline_timer", NL,
    "        if now.wall_ms < self.validity_end(st):\n            out.append(SetTimer(\"lease_deadline\", now.mono_at(self.validity_end(st))))\n            return st\n",
    "",
    "NL-11", "a stale deadline timer lapses the lease although validity was extended")
mut("nl11_no_ran_out_hook", NL,
    "        return self.on_lease_ran_out(st, now, out)\n",
    "        return st\n",
    "NL-11", "a lapse does not move holds to pending releases")
mut("nl2_tick_lost_when_busy", NL,
    "return replace(st, lease=replace(ls, tick_due=True))",
    "return st",
    "NL-2", "a tick that comes while an attempt is in flight is dropped (lease task stops)")
mut("nl2_double_period", NL,
    "next_send = now.mono_ms + p.period_ms",
    "next_send = now.mono_ms + 2 * p.period_ms",
    "NL-2/T-3", "lease writes every 2P instead of P")

# ---------------------------------------------------------------- FN: fencing
mut("fn1_fence_while_invalid", FE,
    "if not self.lease_valid(st, now) or st.watch_from_ms is None:",
    "if st.watch_from_ms is None:",
    "FN-1", "watch decides to fence without checking own lease validity (decision re-checks it)")
mut("fn1_decision_no_validity", FE,
    "if not self.lease_valid(st, now) or self.free_from_ms(st, rec.written_at_ms) >= now.wall_ms:",
    "if self.free_from_ms(st, rec.written_at_ms) >= now.wall_ms:",
    "FN-1", "fence decision skips own lease validity check")
mut("fn2_watch_ignores_lapse", FE,
    "and now.mono_ms - max(seen.since_ms, st.watch_from_ms) >= self.watch_ms(st))",
    "and now.mono_ms - seen.since_ms >= self.watch_ms(st))",
    "FN-2", "watch not counted from own first ack after a lapse")
mut("fn2_watch_P_only", FE,
    "return st.params.period_ms + st.params.attempt_timeout_ms",
    "return st.params.period_ms",
    "FN-2", "watch lasts P instead of P + A")
mut("fn3_decision_no_age", FE,
    "if not self.lease_valid(st, now) or self.free_from_ms(st, rec.written_at_ms) >= now.wall_ms:",
    "if not self.lease_valid(st, now):",
    "FN-3", "fence decision does not re-check written_at + ttl + grace on the fresh GET")
mut("fn3_restart_instance_only", FE,
    "if (rec.instance, rec.written_at_ms) != (watched.instance, watched.written_at_ms):",
    "if rec.instance != watched.instance:",
    "FN-3", "fresh GET with another written_at does not restart the watch")
mut("fn3_fence_now_written_at", FE,
    "fence = NodeRecord(FENCED, rec.instance, rec.written_at_ms, node)",
    "fence = NodeRecord(FENCED, rec.instance, now.wall_ms, node)",
    "FN-3/NL-1", "fence stores the fencer's clock instead of keeping A's written_at")
mut("fn3_fence_never_lands", FE,
    "return Request(PUT, node_key(node), IF_MATCH, version, encode_node(fence))",
    "return Request(PUT, node_key(node), io.IF_NONE_MATCH, None, encode_node(fence))",
    "FN-3", "fence written If-None-Match (never lands over an existing object)")
mut("fn4_no_reread", FE,
    "        return self.fence_read(st, node, watched, out)\n",
    "        return st\n",
    "FN-4", "a failed fence is not read again")
mut("fn2_view_ignores_written_at", FE,
    "new.fmt, new.state, new.instance, new.written_at_ms",
    "new.fmt, new.state, new.instance, old.written_at_ms",
    "FN-2", "view ignores a new written_at (watch not restarted, view keeps the old body)")
mut("bd1_limit_9", FE,
    "FENCE_CONCURRENCY = 8",
    "FENCE_CONCURRENCY = 9",
    "BD-1", "fence concurrency 8 -> 9")
mut("bd1_limit_1", FE,
    "FENCE_CONCURRENCY = 8",
    "FENCE_CONCURRENCY = 1",
    "BD-1", "fence concurrency 8 -> 1")
mut("or10_missing_stays_in_view", FE,
    "                view = view.without(node)  # missing from the view: not live (OR-10)\n",
    "                pass\n",
    "OR-10", "a node missing from the listing stays in the membership view")
mut("nl1_seen_nonlive_is_live", FE,
    "return self.fmt == 3 and self.state == LIVE",
    "return self.fmt == 3",
    "NL-1/OR-10", "view treats fenced/released objects as live")
mut("fn_listing_overlap", FE,
    "if st.listing_queue or st.listing_busy:",
    "if st.listing_queue:",
    "BD-1/NL-2", "a new listing starts while the previous LIST is in flight")

# ---------------------------------------------------------------- FN-5 / OR: ownership
mut("fn5_live_same_instance_frees", OW,
    "if node_rec.instance != rec.instance:",
    "if node_rec.instance == rec.instance:",
    "FN-5", "live naming the SAME instance frees (flipped)")
mut("fn5_age_le", OW,
    "if self.free_from_ms(st, node_rec.written_at_ms) < now.wall_ms:",
    "if self.free_from_ms(st, node_rec.written_at_ms) <= now.wall_ms:",
    "FN-5", "fenced/released frees at written_at + ttl + grace inclusive")
mut("fn5_absent_frees", OW,
    "return f\"held by {rec.node_id}: nodes/{rec.node_id} is absent, which frees nothing\"",
    "return True",
    "FN-5", "an absent nodes/A frees the record")
mut("fn5_oldformat_frees", OW,
    "return f\"held by {rec.node_id}: nodes/{rec.node_id} is in an old format, which frees nothing\"",
    "return True",
    "FN-5", "an old-format nodes/A frees the record")
mut("fn5_fenced_as_live", OW,
    "        if node_rec.state == LIVE:\n",
    "        if node_rec.state != 'released':\n",
    "FN-5", "a fence is judged like a live object (another instance frees at once)")
mut("or2_no_validity_check", OW,
    "        # OR-2: only while the node lease is valid, checked right before the record write\n        if not self.may_acquire(st, now):",
    "        # OR-2: only while the node lease is valid, checked right before the record write\n        if False:",
    "OR-2", "acquire writes the record without checking the node lease")
mut("or3_own_node_any_instance", OW,
    "if rec.nobody or rec.instance == st.instance and rec.node_id == st.node_id:",
    "if rec.nobody or rec.node_id == st.node_id:",
    "OR-3", "a record naming this node id under ANY instance is taken without FN-5")
mut("or3_gen_plus0", OW,
    "return rec.generation + 1",
    "return rec.generation + 0",
    "OR-3", "acquire reuses the record's generation (+0)")
mut("or3_new_gen_0", OW,
    "return self.acquire_write(st, actor, 1, now, out)",
    "return self.acquire_write(st, actor, 0, now, out)",
    "OR-3", "first generation 0 in the base acquire_new")
mut("or3_create_unconditional", OW,
    "req = Request(PUT, owner_key(actor), IF_NONE_MATCH, None, body)",
    "req = Request(PUT, owner_key(actor), None, None, body)",
    "OR-3", "record creation without If-None-Match")
mut("or3_ifmatch_unconditional", OW,
    "req = Request(PUT, owner_key(actor), IF_MATCH, acq.version, body)",
    "req = Request(PUT, owner_key(actor), None, None, body)",
    "OR-3", "record acquire without If-Match r")
mut("or4_isvalid_no_lease", OW,
    "return actor in st.holds and self.lease_valid(st, now)",
    "return actor in st.holds",
    "OR-4", "is_valid ignores the node lease")
mut("or4_hold_began_no_recheck", OW,
    "        if not self.lease_valid(st, now):\n            # the lease ran out (or was made invalid) while the write was in flight:",
    "        if False:\n            # the lease ran out (or was made invalid) while the write was in flight:",
    "OR-4/NL-11", "a hold that begins after a lapse is kept")
mut("cs3_hold_began_during_drain_kept", OW,
    "        if st.stop is not None or st.draining:\n            st = replace(st, acquiring=st.acquiring.without(actor))",
    "        if st.stop is not None:\n            st = replace(st, acquiring=st.acquiring.without(actor))",
    "CS-3/OR-4", "a hold that lands while draining is kept")
mut("or5_release_not_waiting_events", OW,
    "        if self.running(st, actor):\n            if actor not in st.after_events:",
    "        if False:\n            if actor not in st.after_events:",
    "OR-5", "release does not wait for the actor's running events")
mut("or5_release_gen_minus1", OW,
    "encode_owner(OwnerRecord(None, None, generation)))",
    "encode_owner(OwnerRecord(None, None, generation - 1)))",
    "OR-5", "release writes nobody at generation - 1 (generation not kept)")
mut("or5_pending_adopts_later_version", OW,
    "        return self.pending_backoff(st, k, e, now, out, refused=reply.status != io.OK)",
    "        return self.pending_backoff(st, k, replace(e, version=reply.version) if reply.status == io.OK else e, now, out, refused=reply.status != io.OK)",
    "OR-5", "a pending release adopts a version read later")
mut("or5_names_us_any_gen", OW,
    "        return (isinstance(rec, OwnerRecord) and rec.node_id == st.node_id and rec.instance == st.instance\n                and rec.generation == generation)",
    "        return (isinstance(rec, OwnerRecord) and rec.node_id == st.node_id and rec.instance == st.instance)",
    "OR-5", "pending release survives while the record names this instance at ANY generation")
mut("or5_pending_ends_on_failure", OW,
    "if reply.status in (io.PRECONDITION_FAILED, io.NOT_FOUND):",
    "if reply.status in (io.PRECONDITION_FAILED, io.NOT_FOUND, io.TIMED_OUT):",
    "OR-5", "a timed-out pending retry is followed by a read (instead of backing off)")
mut("or6_no_pause", OW,
    "        if not self.lease_valid(st, now):\n            out.append(Mark(\"OR-6\"))",
    "        if False:\n            out.append(Mark(\"OR-6\"))",
    "OR-6", "pending work does not pause while the node lease is invalid")
mut("bd2_limit_33", OW,
    "PENDING_CONCURRENCY = 32",
    "PENDING_CONCURRENCY = 33",
    "BD-2", "pending concurrency 32 -> 33")
mut("bd3_refusals_never_stop", OW,
    "        if n >= self.refusals_per_pass:\n",
    "        if False:\n",
    "BD-3", "a pass never stops after refusals in a row")
mut("or7_readback_any_gen", OW,
    "if rec.node_id == st.node_id and rec.instance == st.instance and rec.generation == acq.generation:",
    "if rec.node_id == st.node_id and rec.instance == st.instance:",
    "OR-7", "readback takes a record naming this instance at any generation as ours")
mut("or7_unchanged_is_lost", OW,
    "if reply.version != acq.version and not rec.nobody:",
    "if not rec.nobody:",
    "OR-7", "readback of an UNCHANGED record naming another holder counts as a lost race (no unresolved entry)")
mut("or7_absent_after_create_fails", OW,
    "elif reply.status == io.NOT_FOUND and acq.version is not None:",
    "elif reply.status == io.NOT_FOUND:",
    "OR-7", "readback finding no record after an If-None-Match create ends the acquire (no unresolved entry)")
mut("or8_release_existing_hold", OW,
    "if ours and actor not in st.holds:",
    "if ours:",
    "OR-8", "resolver releases the record even when a hold exists here")
mut("or8_changed_keeps_reading", OW,
    "if ours or reply.version != e.read_version:",
    "if ours:",
    "OR-8", "resolver keeps reading when the record changed to another holder")
mut("or8_release_wrong_version", OW,
    "Request(PUT, owner_key(actor), IF_MATCH, reply.version, body), out)",
    "Request(PUT, owner_key(actor), IF_MATCH, e.read_version, body), out)",
    "OR-8", "resolver release If-Match the pre-acquire version instead of the read's")
mut("or9_resolver_never_unlocks", OW,
    "        st = self.unlock_resolver(st, actor, now, out)  # OR-9: held until the release's reply\n",
    "",
    "OR-9", "resolver never unlocks after its release")
mut("or10_forward_any_instance", OW,
    "if seen is not None and seen.live and seen.instance == rec.instance:",
    "if seen is not None and seen.live:",
    "OR-10", "routing forwards to the named node even if live under another instance")
mut("or10_no_lease_gate", OW,
    "        if not self.lease_valid(st, now):\n            return self.fail_requests(st, actor, ((req, hops),), \"not ready: node lease not valid\", out)",
    "        if False:\n            return self.fail_requests(st, actor, ((req, hops),), \"not ready: node lease not valid\", out)",
    "OR-10/OR-2", "routing starts an acquisition while the node lease is invalid")

# ---------------------------------------------------------------- acting as owner
mut("or4_data_ack_any_gen", AD,
    "return hold is not None and hold.generation == gen and self.is_valid(st, actor, now)",
    "return hold is not None and self.is_valid(st, actor, now)",
    "OR-4/INV-8", "data ack accepted for an older hold's generation")
mut("or4_restore_serves_unchecked", AD,
    "            if not self.is_valid(st, actor, now):\n                return self.fail_requests",
    "            if False:\n                return self.fail_requests",
    "OR-4", "requests waiting on a restore are served without is_valid")
mut("or5_restore_fail_kept", AD,
    "            st = self.release(st, actor, \"restore failed\", now, out)\n",
    "",
    "OR-5/INV-8", "a failed restore keeps the hold (no release)")

# ---------------------------------------------------------------- CS: clean stop and drain
mut("cs1_no_wait_releases", CS,
    "if stop.stage == \"releasing\" and not st.holds and not self.releases_outstanding(st):",
    "if stop.stage == \"releasing\" and not st.holds:",
    "CS-1", "clean stop does not wait for its releases to land")
mut("cs1_no_invalidate", CS,
    "st = replace(st, lease=replace(st.lease, invalidated=True))",
    "st = st",
    "CS-1", "clean stop does not make the lease locally invalid")
mut("cs1_released_now", CS,
    "body = encode_node(NodeRecord(RELEASED, st.instance, ls.written_at_ms, st.node_id))",
    "body = encode_node(NodeRecord(RELEASED, st.instance, now.wall_ms, st.node_id))",
    "CS-1/NL-1", "released stores the stop's clock, not the last written_at")
mut("cs1_released_unconditional", CS,
    "Request(PUT, node_key(st.node_id), IF_MATCH, ls.version, body), out)",
    "Request(PUT, node_key(st.node_id), None, None, body), out)",
    "CS-1", "released written unconditionally")
mut("cs1_released_while_attempt", CS,
    "if stop.stage == \"finishing_attempt\" and st.lease.attempt_rid is None and st.lease.reread_rid is None:",
    "if stop.stage == \"finishing_attempt\" and st.lease.reread_rid is None:",
    "CS-1", "released written while a lease attempt is still in flight")
mut("cs2_no_adopt", CS,
    "                st = replace(st, lease=replace(st.lease, version=reply.version, written_at_ms=rec.written_at_ms))\n",
    "",
    "CS-2", "conflict re-read of own live object does not adopt its version")
mut("cs3_drain_ignores_unresolved", CS,
    "if st.holds or st.acquiring or st.unresolved or self.releases_outstanding(st):",
    "if st.holds or st.acquiring or self.releases_outstanding(st):",
    "CS-3", "drained reported with unresolved acquires outstanding")
mut("cs3_drain_ignores_acquiring", CS,
    "if st.holds or st.acquiring or st.unresolved or self.releases_outstanding(st):",
    "if st.holds or st.unresolved or self.releases_outstanding(st):",
    "CS-3", "drained reported with an acquisition in flight")
mut("cs3_drain_ignores_foreground", CS,
    "if purpose[0] in (\"release\", \"resolve_release\"):",
    "if purpose[0] in (\"resolve_release\",):",
    "CS-3", "drained reported while a foreground release is in flight")
mut("cs3_drain_releases_nothing", CS,
    "        for actor in tuple(st.holds):\n            st = self.release(st, actor, \"drain\", now, out)\n",
    "",
    "CS-3", "drain does not release the resident actors")

# ---------------------------------------------------------------- UP: upgrading
mut("up2_horizon_2P", UP,
    "return 3 * params.heartbeat_period_ms",
    "return 2 * params.heartbeat_period_ms",
    "UP-2", "guard horizon 2 heartbeat periods instead of 3")
mut("up2_future_no_skew", UP,
    "left = min(left, first_read_ms + span + p.max_skew_ms - now.mono_ms)",
    "left = min(left, first_read_ms + span - now.mono_ms)",
    "UP-2", "future-dated heartbeat lapses without the + max_skew")
mut("up2_takes_older_body", UP,
    "elif seen.body != reply.body and hb.written_at_ms < seen.written_at_ms:",
    "elif False:",
    "UP-2", "guard adopts an older heartbeat applied late over a fresher one")
mut("up2_rewrite_threshold_3", UP,
    "if seen.changes >= 2:",
    "if seen.changes >= 3:",
    "UP-2", "old node running detected after 3 rewrites instead of 2")
mut("up1_first_write_ignores_guard", UP,
    "        if not st.guard_passed:\n",
    "        if False:\n",
    "UP-1", "first write does not wait for the start guard")
mut("up3_no_grace", UP,
    "return lease.expires_at_ms + st.params.grace_ms >= now",
    "return lease.expires_at_ms >= now",
    "UP-3", "old lease live only until expires_at (no grace)")
mut("up3_seed_keys_only", UP,
    "return max(old_gen, keys_gen)",
    "return keys_gen",
    "UP-3", "seed ignores the old lease / marker generation")
mut("up3_marker_path_seed", UP,
    "return self.acquire_write(st, actor, seed + 1, now, out)  # owners/ at seed + 1",
    "return self.acquire_write(st, actor, seed, now, out)  # owners/ at seed + 1",
    "UP-3", "owners/ created at the seed, not seed + 1 (after writing the marker)")
mut("up3_existing_marker_seed", UP,
    "        if marker is None:\n            return self.acquire_write(st, actor, seed + 1, now, out)",
    "        if marker is None:\n            return self.acquire_write(st, actor, seed, now, out)",
    "UP-3", "owners/ created at the seed, not seed + 1 (existing marker)")
mut("up3_marker_gen_ignored", UP,
    "marker = None  # a crash between the two writes: seed the same way from it\n                old_gen = rec.generation",
    "marker = None  # a crash between the two writes: seed the same way from it\n                old_gen = 0",
    "UP-3", "an existing marker's generation is ignored when seeding")
mut("up3_no_marker_when_absent", UP,
    "marker = (IF_NONE_MATCH, None)",
    "marker = None",
    "UP-3", "no marker created when leases/ is absent")

mut("up1_guard_pass_no_reread", UP,
    "return self.on_timer_check_read(st, \"check_read\", now, out)",
    "return super().first_write(st, now, out)",
    "UP-1", "a guard that passes after the check's wait writes on the check's old read")
mut("up2_failed_read_skips_key", UP,
    "            out.append(SetTimer(\"guard\", now.mono_ms + st.params.period_ms // 2))\n            return st\n        if reply.status == io.OK and isinstance",
    "            return self.guard_next(st, now, out)\n        if reply.status == io.OK and isinstance",
    "UP-2", "a guard read that failed skips that heartbeat instead of holding the round")
mut("up2_failed_listing_decides", UP,
    "        if reply.status != io.OK:\n            out.append(SetTimer(\"guard\", now.mono_ms + st.params.period_ms // 2))\n            return st\n        st = replace(st, guard_queue=",
    "        if reply.status != io.OK:\n            return self.guard_decide(st, now, out)\n        st = replace(st, guard_queue=",
    "UP-2", "a failed guard listing decides on what earlier rounds saw")
mut("up2_rewrite_keeps_first_read", UP,
    "seen = OldSeen(reply.body, now.mono_ms, hb.written_at_ms, seen.changes + 1, hb.written_at_ms > now.wall_ms)",
    "seen = OldSeen(reply.body, seen.first_read_ms, hb.written_at_ms, seen.changes + 1, seen.ahead)",
    "UP-2", "a rewritten heartbeat keeps the first read of the body before it")
mut("up3_failed_listing_is_empty", UP,
    "        if reply.status != io.OK:\n            return self.acquire_failed(st, actor, \"segment listing failed\", out)\n        # (a snapshot/",
    "        reply = reply if reply.status == io.OK else io.Reply(io.OK, entries=())\n        # (a snapshot/",
    "UP-3", "a failed seeding listing is read as an empty one")
mut("up3_marker_unknown_assumed", UP,
    "        if reply.status != io.OK:\n            # the marker may have landed",
    "        if reply.status not in (io.OK, io.TIMED_OUT):\n            # the marker may have landed",
    "UP-3", "a marker write whose outcome is unknown is taken as landed")
mut("up3_replace_unconditional", UP,
    "marker = (IF_MATCH, reply.version)",
    "marker = (None, None)",
    "UP-3", "the marker replaces a dead old lease unconditionally")
mut("up3_own_id_taken_over", UP,
    "if self.old_lease_refuses(st, rec, now):",
    "if self.old_lease_refuses(st, rec, now) and rec.node_id != st.node_id:",
    "UP-3", "a live old lease naming this node's own id is taken over")
mut("up4_old_takes_a_marker", "model/old_lease.py",
    "            return self.old_failed(st, actor, \"leases/ record unreadable (corrupt)\", out)",
    "            return self.old_write(st, actor, 1, IF_MATCH, reply.version, now, out)",
    "UP-4", "an old binary takes over a marker as a free lease")

# ---------------------------------------------------------------- FN-7 / FN-8: the operator
mut("fn7_fence_unconditional", OP,
    "req = io.Request(PUT, node_key(node), IF_MATCH, reply.version, encode_node(fence))",
    "req = io.Request(PUT, node_key(node), None, None, encode_node(fence))",
    "FN-7", "operator fence over an existing object unconditional")
mut("fn7_absent_unconditional", OP,
    "req = io.Request(PUT, node_key(node), IF_NONE_MATCH, None, encode_node(fence))",
    "req = io.Request(PUT, node_key(node), None, None, encode_node(fence))",
    "FN-7", "operator fence over an absent object without If-None-Match")
mut("fn7_fence_over_nonlive", OP,
    "if not isinstance(rec, NodeRecord) or rec.state != LIVE:",
    "if not isinstance(rec, NodeRecord):",
    "FN-7", "operator writes a fence over a fence or a release")
mut("fn7_fence_now_written_at", OP,
    "fence = NodeRecord(FENCED, rec.instance, rec.written_at_ms, node)",
    "fence = NodeRecord(FENCED, rec.instance, now.wall_ms, node)",
    "FN-7", "operator fence stores the operator's clock instead of keeping written_at")
mut("fn8_no_horizon", OP,
    "return wall_ms - written_at_ms >= 3 * params.heartbeat_period_ms + params.takeover_ms",
    "return wall_ms - written_at_ms >= params.takeover_ms",
    "FN-8/UP-2", "forget's staleness test drops the horizon")
mut("fn8_forget_any_format", OP,
    "return isinstance(rec, OldHeartbeat) and old_heartbeat_stale(st.params, rec.written_at_ms, now.wall_ms)",
    "return isinstance(rec, (OldHeartbeat, NodeRecord)) and old_heartbeat_stale(st.params, rec.written_at_ms, now.wall_ms)",
    "FN-8/FN-6", "forget also deletes a stale format-3 object")
mut("fn8_delete_unconditional", OP,
    "req = io.Request(DELETE, node_key(node), IF_MATCH, reply.version)",
    "req = io.Request(DELETE, node_key(node), None, None)",
    "FN-8", "forget's DELETE unconditional")

# ---------------------------------------------------------------- T: timing
mut("t2_skew_once", PA,
    "if p.grace_ms + p.safety_ms < 2 * p.max_skew_ms:",
    "if p.grace_ms + p.safety_ms < p.max_skew_ms:",
    "T-2", "T-2 validation accepts grace + safety >= max_skew (not 2 * max_skew)")
mut("t3_refuse_2x", PA,
    "if 3 * p.heartbeat_period_ms > p.ttl_ms:",
    "if 2 * p.heartbeat_period_ms > p.ttl_ms:",
    "T-3", "T-3 validation accepts heartbeat periods up to ttl / 2")
mut("t4_refuse_2x", PA,
    "if 3 * p.attempt_timeout_ms > p.ttl_ms - p.safety_ms:",
    "if 2 * p.attempt_timeout_ms > p.ttl_ms - p.safety_ms:",
    "T-4", "T-4 validation accepts A up to (ttl - safety) / 2")
mut("t_span_no_safety", PA,
    "return self.ttl_ms - self.safety_ms",
    "return self.ttl_ms",
    "NL-4/T-1", "lease valid ttl after send (no safety)")
mut("t5_takeover_minus_skew", PA,
    "return self.ttl_ms + self.grace_ms",
    "return self.ttl_ms + self.grace_ms - self.max_skew_ms",
    "T-5/FN-5", "takeover at ttl + grace - max_skew")

MUTANTS = M
