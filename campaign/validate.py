"""Every configuration validated before any seed runs, and every report read back checked against
its schema before anything uses it.

A configuration is what the user pinned (`--param KEY=MS`) over what a world fills in: the
simulated world draws the rest per seed (scenarios.swarm.draw_params), the real-S3 world fits it
around its short timing (scenarios.s3.S3_PARAMS). Both are judged here by the same rules: the
protocol's (NL-4, T-2, T-3, T-4, T-6, model/params.py) and what the world's own draws need (a range a
`randint` draws from must not be empty). A refusal is one line that names the parameters the
user set, never one a world derived from them (the user cannot see those); it may name an unset
one as what to pin.

A report (`replay`, `shrink`, `merge`, `run --resume`) is checked for the fields and types those
read, so that a hand-edited or truncated one is one line and exit 2, never a traceback.

This module knows the rules and the report's schema; it must not know the parser (nodelease/cli.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from history.record import check_hash_version
from house.errors import UsageError

# --- the rules a configuration must hold ------------------------------------------------------------

POSITIVE = ("ttl_ms", "heartbeat_period_ms", "attempt_timeout_ms")
DEFAULT_TAKEOVER_MS = 15_000  # scenarios.swarm.DEFAULT_TAKEOVER_MS: the draw's times are written for it


def _scaled(ms: int, d: dict) -> int:
    """scenarios.swarm.DrawContext.S: a time written for the default timing, scaled with ttl + grace."""
    return ms * (d["ttl_ms"] + d["grace_ms"]) // DEFAULT_TAKEOVER_MS


@dataclass(frozen=True)
class Rule:
    id: str
    params: tuple[str, ...]  # the parameters it reads
    holds: Callable[[dict], bool]
    text: str  # what it asks, in the parameters' names


RULES = (
    Rule("NL-4", ("safety_ms", "ttl_ms"), lambda d: d["safety_ms"] < d["ttl_ms"],
         "safety_ms must be below ttl_ms"),
    Rule("T-2", ("grace_ms", "safety_ms", "max_skew_ms"),
         lambda d: d["grace_ms"] + d["safety_ms"] >= 2 * d["max_skew_ms"],
         "grace_ms + safety_ms must be at least 2 * max_skew_ms"),
    Rule("T-3", ("heartbeat_period_ms", "ttl_ms"), lambda d: 3 * d["heartbeat_period_ms"] <= d["ttl_ms"],
         "heartbeat_period_ms must be at most ttl_ms / 3"),
    Rule("T-4", ("attempt_timeout_ms", "ttl_ms", "safety_ms"),
         lambda d: 0 < 3 * d["attempt_timeout_ms"] <= d["ttl_ms"] - d["safety_ms"],
         "attempt_timeout_ms must be positive and at most (ttl_ms - safety_ms) / 3"),
    Rule("T-6", ("heartbeat_period_ms", "attempt_timeout_ms", "ttl_ms", "safety_ms"),
         lambda d: min(d["heartbeat_period_ms"], d["ttl_ms"] // 3) + d["attempt_timeout_ms"] <= d["ttl_ms"] - d["safety_ms"],
         "the lease period min(heartbeat_period_ms, ttl_ms / 3) plus attempt_timeout_ms must be at most ttl_ms - "
         "safety_ms (else the lease runs out between two writes; docs/findings.md Q-8)"),
    # what the world's draws need (scenarios/swarm.py, scenarios/faults/): each a range that must not be empty
    Rule("the world's draw of blips", ("ttl_ms", "grace_ms"), lambda d: _scaled(3_000, d) <= d["ttl_ms"],
         "ttl_ms must be at least (ttl_ms + grace_ms) / 5, that is grace_ms at most 4 * ttl_ms (a blip's length is "
         "drawn between the two)"),
    Rule("the world's draw of mistaken deletes", ("heartbeat_period_ms", "ttl_ms"),
         lambda d: min(d["heartbeat_period_ms"], d["ttl_ms"] // 3) >= 16,
         "the lease period min(heartbeat_period_ms, ttl_ms / 3) must be at least 16 ms (instants are drawn within "
         "a sixteenth of it)"),
    Rule("the world's draw of long events", ("ttl_ms", "grace_ms"), lambda d: _scaled(1_000, d) <= 10_000,
         "ttl_ms + grace_ms must be at most 150 s (a long event's length is drawn between (ttl_ms + grace_ms) / 15 "
         "and 10 s)"),
)
# a value a world moved to a bad one names the rule that moved it (scenarios.swarm.fit_params)
_MOVED_BY = {"attempt_timeout_ms": "T-4", "heartbeat_period_ms": "T-3", "safety_ms": "T-2", "grace_ms": "T-2",
             "max_skew_ms": "T-2", "ttl_ms": "T-4"}
BY_ID = {r.id: r for r in RULES}


def _given(pins: dict, names) -> str:
    return " ".join(f"--param {k}={pins[k]}" for k in names if k in pins)


def _refusal(rule: Rule, pins: dict, where: str = "", values: dict | None = None) -> UsageError:
    """One line: the rule, the user's parameters it reads, and (when the user set only some of them)
    which others to pin."""
    mine = [k for k in rule.params if k in pins]
    others = [k for k in rule.params if k not in pins]
    head = _given(pins, mine) if mine else "the configuration"
    msg = f"{head}: {rule.id}: {rule.text}"
    if others and mine:
        them = "it" if len(others) == 1 else "them"
        seen = ", ".join(f"{k} {values[k]}" for k in others) if values else " and ".join(others)
        msg += (f"; with {seen} ({where or 'as the world gives ' + them}) it does not hold: pin {' and '.join(others)} "
                f"too, or change {' and '.join(mine)}")
    return UsageError(msg)


def check_pinned(pins: dict, known: dict) -> None:
    """The pinned values alone: known names, integers, in range, and every rule whose parameters
    are all pinned."""
    for k, v in pins.items():
        if k not in known:
            raise UsageError(f"--param: unknown parameter {k!r} (known: {', '.join(sorted(known))})")
        if not isinstance(v, int) or isinstance(v, bool):
            raise UsageError(f"--param {k}={v!r}: not an integer number of ms")
        if v < 0 or (v == 0 and k in POSITIVE):
            raise UsageError(f"--param {k}={v}: must be {'positive' if k in POSITIVE else 'at least 0'}")
    for rule in RULES:
        if all(k in pins for k in rule.params) and not rule.holds(pins):
            raise _refusal(rule, pins)


def _rule_behind(e) -> Rule:
    """The rule a ParamsError of model/params.py names, or the one that moved a value out of range
    ("<name> must not be negative": a world moved it there, scenarios.swarm.fit_params)."""
    text = str(e)
    rid = text.split(":", 1)[0]
    if rid not in BY_ID:
        rid = _MOVED_BY.get(text.split(" ", 1)[0], "T-4")
    return BY_ID[rid]


def _fitted(pins: dict, base: dict, where: str, fit) -> dict:
    """`fit(base + pins, pins)` (scenarios.swarm.fit_params), its refusal named by the rule behind it."""
    from model.params import ParamsError

    d = {**base, **pins}
    try:
        p = fit(d, pins)
    except ParamsError as e:
        raise _refusal(_rule_behind(e), pins, where, d) from None
    return p.to_dict()


def check_config(d: dict, pins: dict, where: str) -> None:
    """Every rule over one whole configuration `d` (pins and what a world filled in)."""
    for rule in RULES:
        if not rule.holds(d):
            raise _refusal(rule, pins, where, d)


SEEDS_CHECKED = 10_000  # a campaign's seeds whose drawn configuration is checked before it runs (~70 us each)


def check_sim(pins: dict, scenario: str, start: int = 0, count: int = 2_000) -> None:
    """The simulated world: the configuration each seed would draw around `pins` (its first
    SEEDS_CHECKED seeds), checked before any runs. Each is drawn exactly as the seed will draw it
    (from its own stream, "draw/params": scenarios/streams.py), so a seed the world cannot draw is
    refused here, never a crash in a seed."""
    from model.params import Params, ParamsError
    from scenarios.swarm import draw_params, fit_params

    check_pinned(pins, Params().to_dict())
    _fitted(pins, Params().to_dict(), "the defaults", fit_params)
    for seed in range(start, start + min(count, SEEDS_CHECKED)):
        try:
            p, family = draw_params(seed, pins, scenario)
        except ParamsError as e:
            raise _refusal(_rule_behind(e), pins, f"seed {seed}'s draw") from None
        check_config(p.to_dict(), pins, f"seed {seed}'s draw, {family} timing")


def check_s3(pins: dict, base: dict):
    """The real-S3 world: its short timing with the pins fitted in, as the simulation fits them
    (the values not pinned move only as far as the rules demand). Returns the Params."""
    from model.params import Params
    from scenarios.swarm import fit_params

    check_pinned(pins, base)
    d = _fitted(pins, base, "the real-S3 world's timing", fit_params)
    check_config(d, pins, "the real-S3 world's timing")
    return Params(**d)


# --- a report's schema ------------------------------------------------------------------------------------


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), "a number" if isinstance(v, (int, float)) else type(v).__name__)


# field -> (its test, what it must be): the fields replay, shrink, merge and --resume read
_INT, _STR, _BOOL, _LIST, _DICT = ((_is_int, "an integer"), (lambda v: isinstance(v, str), "a string"),
                                   (lambda v: isinstance(v, bool), "true or false"),
                                   (lambda v: isinstance(v, list), "a list"),
                                   (lambda v: isinstance(v, dict), "an object"))
_NUM = (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number")
SCHEMA = {
    "model": _STR, "scenario": _STR, "params": _DICT, "seeds": _DICT,
    "world?": _STR, "strict?": _BOOL, "seed_hashes?": _LIST, "failing_seeds?": _LIST, "failures?": _LIST,
    "tool_failures?": _LIST, "history_digest?": _STR, "partial?": _DICT, "fault_kinds?": _LIST,
    "hash_version?": _INT,
}
MERGE_SCHEMA = {"counts": _DICT, "rules_hit": _DICT, "coverage": _DICT, "not_judged": _DICT,
                "protocol_findings": _DICT, "configurations": _DICT, "seed_params": _LIST, "raw": _DICT,
                "elapsed_s": _NUM, "seed_hashes": _LIST, "failures": _LIST, "failing_seeds": _LIST,
                "tool_failures": _LIST, "margins": _DICT}


def check_report(report, path: str, merging: bool = False) -> dict:
    """`report` if it has the fields (and types) a replay, a shrink, a merge or a resume reads;
    UsageError, one line naming the first bad field, otherwise."""
    from model.params import Params

    def bad(field: str, want: str, got) -> UsageError:
        return UsageError(f"the report {path} is malformed: {field} must be {want}, got {_kind(got)} {got!r}"[:300])

    if not isinstance(report, dict):
        raise UsageError(f"the report {path} is not a report (expected a JSON object, got {_kind(report)})")
    schema = dict(SCHEMA, **(MERGE_SCHEMA if merging else {}))
    for key, (test, want) in schema.items():
        name = key.rstrip("?")
        if name not in report:
            if key.endswith("?"):
                continue
            raise UsageError(f"the report {path} has no {name!r} field: not a report of this tool")
        if not test(report[name]):
            raise bad(name, want, report[name])
    s = report["seeds"]
    for k in ("start", "count"):
        if not _is_int(s.get(k)) or s.get(k) < 0:
            raise bad(f"seeds.{k}", "an integer of at least 0", s.get(k))
    known = Params().to_dict()
    for k, v in report["params"].items():
        if k not in known:
            raise UsageError(f"the report {path} is malformed: params.{k} is not a parameter "
                             f"(known: {', '.join(sorted(known))})")
        if not _is_int(v):
            raise bad(f"params.{k}", "an integer number of ms", v)
    check_hash_version(report, f"the report {path}")
    if "seed_hashes" in report and not all(isinstance(h, str) for h in report["seed_hashes"]):
        raise UsageError(f"the report {path} is malformed: seed_hashes must be a list of strings")
    for name in ("failing_seeds",):
        if not all(_is_int(x) for x in report.get(name, [])):
            raise UsageError(f"the report {path} is malformed: {name} must be a list of integers")
    for name in ("failures", "tool_failures"):
        for i, f in enumerate(report.get(name, [])):
            if not isinstance(f, dict) or not _is_int(f.get("seed")):
                raise UsageError(f"the report {path} is malformed: {name}[{i}] must be an object with an integer "
                                 f"'seed'")
            if name == "failures" and not isinstance(f.get("invariant"), str):
                raise UsageError(f"the report {path} is malformed: failures[{i}].invariant must be a string")
    if merging:
        raw = report["raw"]
        for k in ("failover_ms", "takeover_margin_ms"):
            if not isinstance(raw.get(k), list):
                raise bad(f"raw.{k}", "a list", raw.get(k))
        if not isinstance(raw.get("finding_seeds"), dict):
            raise bad("raw.finding_seeds", "an object", raw.get("finding_seeds"))
        for k in ("families", "on_bounds"):
            if not isinstance(report["configurations"].get(k), dict):
                raise bad(f"configurations.{k}", "an object", report["configurations"].get(k))
        for name in ("counts", "rules_hit", "coverage"):
            for k, v in report[name].items():
                if not _is_int(v):
                    raise bad(f"{name}.{k}", "an integer", v)
    if "margins" in report:
        check_margins(report["margins"], path)
    return report


def check_margins(margins, path: str) -> None:
    """A report's `margins` block (campaign/report.py, MarginSums): each entry's sums of the right types,
    or UsageError naming the first that is not."""
    def bad(field: str, want: str, got) -> UsageError:
        return UsageError(f"the report {path} is malformed: {field} must be {want}, got {_kind(got)} {got!r}"[:300])

    if not isinstance(margins, dict):
        raise bad("margins", "an object", margins)
    for name, m in margins.items():
        if not isinstance(m, dict):
            raise bad(f"margins.{name}", "an object", m)
        if not _is_int(m.get("seeds")) or m["seeds"] < 0:
            raise bad(f"margins.{name}.seeds", "an integer of at least 0", m.get("seeds"))
        for k in ("min", "seed"):
            if not (m.get(k) is None or _is_int(m.get(k))) or (m["seeds"] and m.get(k) is None):
                raise bad(f"margins.{name}.{k}", "an integer" + ("" if m["seeds"] else " or null"), m.get(k))
        for k in ("histogram", "explained"):
            d = m.get(k, {}) if k == "explained" else m.get(k)
            if not isinstance(d, dict) or not all(_is_int(v) for v in d.values()):
                raise bad(f"margins.{name}.{k}", "an object of integers", d)
