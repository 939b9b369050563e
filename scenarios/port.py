"""The port: what a fault kind may use of the world (issue 46, part 2). Nothing else.

A kind is handed the world (`w`, or `world`) in its `schedule`, its fate hooks, its event hooks (methods of
FaultKind it overrides) and its own steps (`w.later(ms, w.fault_step, self.id, "method", *args)`). It uses
the members named here, and the attributes it declares itself in its `state` (its own per-run state, set on
the world at the start of a run). tests/scenarios/test_port.py reads every kind's code and fails on any other
member, a private one above all: the world's insides can change without a kind noticing.

To act on processes a kind needs only this port: `crash`, `pause`, `stop_node`, `command_node` and
`start_twin` act on them, `live_proc` finds them, `fault_event` records what struck (faults.FAULT_EVENTS
names what it may say). The recipe's demonstration is `pauses.py`, written from this page alone.
"""

from __future__ import annotations

PORT: dict[str, str] = {
    # --- time and chance
    "now": "true time, ms",
    "later": "later(ms, fn, *args): call a world method (a kind's own step: fault_step) ms from now",
    "fault_step": "fault_step(kind_id, method, *args): the kind's own step, as a world method (the explorer's need)",
    "rngs": "rngs[kind id]: the kind's own random stream (never another part's)",
    "choose": "choose(site, who, draw, *args): a decision of the kind's, drawn, or read from a plan",
    "delay": "a network delay, from the network's stream (the kinds that redraw one: slow replies)",
    "tg": "ttl + grace, ms: T-5's takeover span (a race's scale)",
    "liveness_ms": "the quiet phase's span",
    "quiet_at_ms": "when the quiet phase begins (None: no quiet phase)",
    "in_quiet": "the quiet phase has begun",
    "lazy_timeouts": "the world schedules a timeout only once the answer will not come first",
    "forget_after_ms": "forget_after_ms(): when the operator may `cluster forget` a node gone",
    "drain_bound_ms": "drain_bound_ms(): the longest a drain may take (INV-11)",
    # --- what the run is
    "options": "the run's drawn options (the kind's own among them)",
    "params": "the run's configuration (model.params.Params)",
    "history": "the history being written (read only: record through record, fault_event, note_fault)",
    "node_ids": "the nodes' ids", "request_ids": "where clients send requests", "actors": "the actors",
    "slots": "where a supervisor keeps each node id running", "old_slots": "an upgrade's old binaries' slots",
    "procs": "every process started so far", "operator": "the operator's process, or None",
    "clocks": "machine -> its clock",
    "holders": "actor -> the node its record names, as the bucket applied it",
    "fault": "the fault rates in force (zero once quiet)", "fault_target": "[op, key prefix] the rates aim at",
    "targeted": "targeted(req): the request is of the kind the rates aim at",
    # --- what it records
    "record": "record(proc index, kind, fields): a history event (-1: the world's)",
    "fault_event": "fault_event(proc index, what, target, ms, detail, state): a `fault` event; what must be "
                   "registered in faults.FAULT_EVENTS (anything else is a loud error naming it)",
    "note_fault": "note_fault(proc, what, req, ms, detail): a fault that struck a request (checked the same way)",
    # --- the network: what faults share
    "cut": "machine or '*' -> the mode of its cut-off, while one lasts",
    "is_cut": "is_cut(machine): its cut-off's mode, or None",
    "cut_off": "cut_off(who, ms, mode): cut a machine ('*': every one) off the bucket ('blackhole', 'refuse', 'lease')",
    "outage": "outage(who, ms, mode): a drawn outage (skipped while a race plays out on its node)",
    "lose_next": "lose_next(node, prefix): the node's next write under prefix is lost",
    "racing_write": "racing_write(proc index, request id, key): another conditional write to key in flight now "
                    "((its process index, its send time), or None): what a 409 races (issue 47)",
    "flies": "flies(proc, request id, key, now): a conditional write a kind held in its process leaves now: in "
             "flight until its answer is back (what racing_write sees)",
    "store": "the store the bucket answers as ('aws', 'r2': swarm.STORES); R2 never answers 409",
    "shield_until": "shield_until(node, until): no random network fault on its requests (not in quiet)",
    "set_shield": "set_shield(node, until): the shield set anew, any phase",
    "extend_shield": "extend_shield(node, until): the shield lasts at least until, any phase",
    "shielded": "shielded(node): no random network fault touches it now",
    "keep_calm": "keep_calm(node, until): no fault but a race's own touches it, at least until",
    "set_calm": "set_calm(node, until): calm set anew",
    "busy_until": "busy_until(node, until): its actors stay busy (no hibernation or move reaches them)",
    "disturbs_a_race": "disturbs_a_race(node or None): a drawn fault aimed there would disturb a race (skip it)",
    "await_answer": "await_answer(proc, rid, timeout, ms): a held request's answer comes ms from now (lazy timeouts)",
    "to_bucket": "to_bucket(proc, rid, req, fate, sent_ms): a held request reaches the bucket now",
    "read_bucket": "read_bucket(then): every leases/ key with its body, every wal/ key",
    "delete_record": "delete_record(key): an operator's mistaken delete of an object",
    # --- processes
    "live_proc": "live_proc(node): the live process serving the node, or None",
    "start_process": "start_process(slot, step=None, instance=None): start a process in a slot",
    "crash": "crash(proc): kill it without any write (its supervisor restarts it)",
    "crash_node": "crash_node(node): crash the node's live process",
    "pause": "pause(proc, ms, detail): stop it for ms (SIGSTOP, a GC pause): its inputs wait, its clocks run on",
    "resumed": "resumed(proc): a paused process resumes: a `resumed` event says what queued meanwhile",
    "stop_node": "stop_node(node, restart_after_ms): a clean stop (CS-1..CS-4), started again after",
    "start_twin": "start_twin(node, machine, life_ms, silence=False): a second process under the node's id",
    "tell": "tell(proc, command): an instruction to a process (the world notes drains and resumes)",
    "command_node": "command_node(node, command): tell the node's live process",
    "command_node_any": "command_node_any(node, command): tell any live process of the node",
    "operator_command": "operator_command(command): the operator runs a `cluster` command",
    "deliver": "deliver(proc, input): an input straight to a process's model (a kind's scripted moment)",
    # --- the workload
    "ask_new": "ask_new(node, actor): a client request for the actor reaches the node",
    "ask_proc": "ask_proc(proc, actor): a client request for the actor reaches that process (a twin's own machine)",
    "keep_idle": "keep_idle(actor, until): no client of the workload asks for the actor until then",
    "move_to": "move_to(actor, node): the operator moves an actor",
}
