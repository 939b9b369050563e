"""The observation kinds a history can hold, with the names of their fields.

Observations come from the model (through the Observe effect) and from the
world (process starts, crashes, exits, bucket writes applied). Events in a
history carry values only; this table names them for timelines and checkers.
"""

KINDS: dict[str, tuple[str, ...]] = {
    # --- from the model -----------------------------------------------------
    "check_began": (),
    "check_passed": ("cond",),  # NL-7: the first write's condition
    "check_refused": ("reason",),  # NL-6
    "lease_valid": ("written_at_ms", "until_ms", "how"),  # NL-4 / NL-9 / NL-11; until on the node's clock
    "lease_ran_out": ("until_ms",),  # NL-11
    "lease_lost": ("reason",),  # NL-10
    "fenced": ("node", "instance"),  # FN-3: this node's fence landed
    "served": ("actor", "generation", "request"),  # OR-4: acted as owner; the request's event begins
    "answered": ("actor", "generation", "request"),  # OR-4: the event ended acting as owner (its answer)
    "event_cut": ("actor", "generation", "request", "why"),  # CS-1, NL-11: the lost-lease cut ended it
    "forwarded": ("actor", "request", "to"),  # OR-10
    "request_failed": ("actor", "request", "reason"),
    "hold_began": ("actor", "generation", "version", "how"),  # OR-3 (ack) / OR-7 (readback)
    "hold_ended": ("actor", "generation", "reason"),  # OR-5 / NL-10 / NL-11
    "released": ("actor", "generation"),  # OR-5 landed
    "release_pending": ("actor", "generation"),  # OR-5 / OR-11
    "release_dropped": ("actor", "generation"),  # OR-5: the record no longer names us at g
    "acquire_unresolved": ("actor", "generation"),  # OR-7
    "resolver_release": ("actor", "generation"),  # OR-8
    "unresolved_ended": ("actor", "generation"),  # OR-8
    "operator_done": ("command", "node", "outcome"),  # FN-7 / FN-8
    "data_acked": ("actor", "generation", "segment"),  # OR-4: the acknowledgement rule held
    "restored": ("actor", "generation", "segments"),  # OR-3: the new owner's listing
    "drain_began": (),
    "drained": (),  # CS-3
    "stop_began": (),
    "lease_invalidated": (),  # CS-1
    "lease_released": (),  # CS-1: the released write landed
    "hold_valid": ("actor", "generation", "until_ms"),  # an old per-actor lease acknowledged (section 6)
    "guard_waiting": ("left_ms",),  # UP-2
    "guard_passed": (),  # UP-2
    "old_version_running": ("node",),  # UP-2, after the switch
    "old_retired": ("node",),  # UP-2, after the switch
    "marked": ("actor", "generation"),  # UP-3: the leases/ marker landed
    # --- from the world ----------------------------------------------------
    "start": ("node_id", "instance", "machine"),
    "crash": (),
    "exit": ("status", "reason"),
    # a bucket write or delete that took effect: the serial of the object it
    # replaced (0: none), the serial the writer's condition named as it knew
    # it (None: unconditional; 0: If-None-Match), the new serial (0: deleted),
    # the states written and replaced, and when (true time) its writer sent it
    "apply": ("key", "op", "cond", "prev_serial", "named_serial", "serial", "state", "prev_state", "sent_ms"),
    # a listing of an actor's data delivered to a process (a restore, a seeding), or of nodes/ to a
    # process none of whose own live writes has taken effect yet (its start guard's, UP-2): the
    # prefix, the keys after it, and when (true time) the process sent the LIST
    "listed": ("prefix", "keys", "sent_ms"),
    # the bucket's answer to a request on a `leases/` key, delivered to the process (UP-3: what a first
    # acquisition learned: the old lease or marker its read found, its marker write acknowledged): the key,
    # the op, the reply's status, the state it carried (a GET's object; a PUT's own body), and when (true
    # time) the process sent it. Not recorded: a reply that never reached it (lost, or past its timeout)
    "leases_reply": ("key", "op", "status", "state", "sent_ms"),
    # the answer to a request on an ownership record (`owners/...`) or on the process's own node lease
    # (`nodes/<its id>`), delivered to the process: the bucket's reply, or its timeout (status `timed_out`: the
    # world answers for the bucket once the attempt is over). The key, the op, the status, the state (a GET's
    # object as read; a PUT's own body, whatever its fate), the serial (a GET answered `ok`: the object it read;
    # a PUT answered `ok`: the object it wrote; else -1), the serial a PUT's condition named as the process knew
    # it (as `apply`'s named_serial), and when (true time) the process sent it. What a process sent on its
    # records and learned of them (CONV-2: a release sent, an acquisition's outcome, a read; its node lease as
    # it knew it, NL-4, NL-9)
    "record_reply": ("key", "op", "status", "state", "serial", "named_serial", "sent_ms"),
    # a GET of nodes/ answered to a process none of whose own live writes has taken effect yet (its start
    # check's and start guard's reads, UP-1, UP-2): the serial it read (0: absent; -1: failed or no answer),
    # when (true time) the process sent it; the event's time is the answer's
    "read": ("key", "serial", "sent_ms"),
    # the world answered a segment upload with a failure (an error, or its timeout): OR-5's abandon
    "upload_failed": ("key", "status"),
    # a process sent a fence write (PUT nodes/<another id>): the fence writes it had in flight then, this one
    # included (a fence is in flight until the world delivers its reply or its timeout; BD-1)
    "fence_sent": ("key", "in_flight"),
    # a process sent a fence's read (FN-3's fresh GET of nodes/<another id>, as the world tells it from the
    # listing's reads and an acquisition's, scenarios/core.py `_is_fence`): its fences' requests in flight then,
    # reads and writes, this one included (BD-1)
    "fence_read_sent": ("key", "in_flight"),
    # the answer (a reply, or the timeout) to a fence's read or write delivered to the process: its op, key and
    # status, and when it was sent (BD-1, SLOT-1)
    "fence_answered": ("op", "key", "status", "sent_ms"),
    # a listing of nodes/ ended (the answer to its last GET, or to the LIST when it listed no peer, delivered: the
    # model decides its fences then) while the process had BD-1's cap of fences' requests in flight: the peers
    # it listed, those requests in flight (reads and writes; this pass's not yet sent), when the LIST was sent
    # (recorded only at the cap: a pass whose due fences wait for a later one, issue 45)
    "listing_ended": ("keys", "in_flight", "sent_ms"),
    # a claim: the slots of a bounded task the process holds (BD-1: "BD-1", the nodes/ keys of its fences; BD-2:
    # "BD-2", the owners/ keys of the entries it works), said as its listing ends and as its background timer
    # fires. SLOT-1 cross-checks it: each slot's request is in flight, or ended less than a period ago
    "slots": ("bound", "keys"),
    "released_sent": (),  # a process sent a `released` write of its own node lease (CS-1, CS-2)
    # a request of the process's background task (OR-5, OR-8; BD-2, BD-3) left: sent when its `background`
    # timer fired (a pending release's retry, a PUT; the resolver's read, a GET) or on the answer to a retry
    # (the read of its key that follows its refusal); the If-Match token of a retry (of a read that follows
    # one: that retry's; the resolver's read: None), the state a retry writes, the time the process gave the
    # request, and how many of the task's requests it had in flight then, this one included
    "background_sent": ("op", "key", "version", "state", "timeout_ms", "in_flight"),
    # the answer (a reply, or the timeout) delivered to one of those: its token as sent, its status, the state
    # a read found, when it was sent (true time)
    "background_answered": ("op", "key", "version", "status", "state", "sent_ms"),
    # any other write naming nobody (a release): "told" when sent on a command of the world's (hibernate,
    # move, stop, drain, an event's end: a foreground release, BD-4), else "" (the resolver's, OR-8; one after
    # an acquisition or an upload): and the time the process gave it
    "release_sent": ("key", "how", "timeout_ms"),
    "told": ("command",),  # the world told the process to drain, resume or stop
    # a request the process sent to the bucket, recorded only in the quiet phase's last liveness span,
    # where convergence is judged (CONV-1: what a settled process still sends), and while it drains
    "sent": ("op", "key"),
    # a forwarded request reached this process (recorded in the quiet phase: CONV-1 judges its answer)
    "arrived": ("actor", "request"),
    # the process answered a request the world delivered to it in the quiet phase (a `client` or `arrived`):
    # the world passed the answer on to the client (`how`: served, failed, or forwarded to <node>, handed to
    # the world to deliver there). CONV-1 judges "every request is answered" on these, never on the process's
    # own `served` / `request_failed` / `forwarded` observations
    "answer": ("actor", "request", "how"),
    "running": ("until_ms",),  # told to drain, the process had events running: the world ends them by then
    "moved": ("actor", "target"),  # the world asked whoever holds the actor to hand it to the target node
    # the bucket refused a conditional write (412; 404: an If-Match on an absent object): the state
    # it met (as far as the world knows), when it was sent, and the status
    # and the serial its condition named as the writer knew it (as `apply`'s named_serial)
    "refused": ("key", "op", "cond", "met", "sent_ms", "status", "named_serial"),
    # the bucket answered a conditional write 409 (a concurrent write: not applied, no condition judged), with
    # the state the write carried (as `apply`'s), and the conditional write to that key in flight meanwhile, which
    # it raced (issue 47: AWS answers 409 only then): its process and its send time (None: none the world saw)
    "conflicted": ("key", "op", "sent_ms", "state", "racing_proc", "racing_sent_ms"),
    "outage": ("machine", "until_ms"),
    "twin": ("node_id", "machine"),
    "client": ("actor", "node", "request"),  # a client request reached a node
    "quiet": (),  # the fault phase ended: faults stop, the quiet phase begins
    "final_round": ("actors",),  # these actors are requested once more before the end (INV-4)
    "operator": ("command", "node"),
    "fault_delete": ("key",),  # an object deleted outside the protocol (an operator's mistake)
    "fault_put": ("key", "header", "written_at_ms"),  # bytes written outside the protocol (an old binary)
    # a fault the world gave a request or a machine: what kind (scenarios/faults.py: "request_lost", "late",
    # "outage", ...), what it hit ("PUT owners/t0/c/a1", a machine, "*"), a length or delay in ms (None: none),
    # a word for people ("refused: cut off", the reply's status, an outage's mode), and for a write of a
    # protocol record (nodes/, owners/, leases/) the state it carried (as `apply`'s `state`: an acquisition's
    # "held <node> <instance> <g>" told from a release's "nobody <g>"; None otherwise)
    "fault": ("what", "target", "ms", "detail", "state"),
}

# Fields on the observing process's own clock (ms); every event's time, and every other time
# field, is true time. Timelines mark them so that no one compares the two by mistake.
LOCAL_CLOCK_FIELDS: dict[str, tuple[str, ...]] = {
    "lease_valid": ("written_at_ms", "until_ms"),
    "lease_ran_out": ("until_ms",),
    "hold_valid": ("until_ms",),
}
