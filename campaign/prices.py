"""Requests into dollars: a bucket's bill under a provider's price table (issue 48, part 3's data).

The tables are data, campaign/price_tables/*.json (installed with the package: house/packages.py's DATA), one
per provider and storage class, each with its billing rules, the URL every rule was read from, the date it was
read and how sure it is (`confirmed`: "primary" read on the provider's own page, "secondary" read on pages
quoting it, "logic" true by definition, "unconfirmed" assumed). A table says

- what each class of request costs (`classes`: USD per million),
- which class each operation is in (`operations`: GET, PUT, LIST, DELETE, the bucket requests the model sends),
- whether a request answered with each status is billed (`statuses`: 2xx, 404, 409, 412, 4xx for the other
  client errors, 5xx, and never_arrived for a request lost before the bucket),
- and the exceptions (`overrides`: R2 bills a 412 PutObject as Class A).

`bill` turns a count of requests by (operation, status) into dollars, line by line, and names every line whose
rule is unconfirmed, so that no figure hides a guess. `month` applies a table's free tier and billing unit to a
month of such counts. `listing_per_day` counts the ADR's heartbeat listing (docs/cost.md checks the ADR's
dollars with it). Pure: it reads its tables and computes; it knows neither a history nor a report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

OPERATIONS = ("GET", "PUT", "LIST", "DELETE")
STATUSES = ("2xx", "404", "409", "412", "4xx", "5xx", "never_arrived")
CONFIRMED = ("primary", "secondary", "logic", "unconfirmed")
TABLES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "price_tables")
DAY_MS = 86_400_000


@dataclass(frozen=True)
class Table:
    """One provider's price table, as read from its JSON file (the raw data kept in `data`)."""

    id: str
    title: str
    read_on: str
    per_million: dict  # class -> USD per million requests
    operation_class: dict  # operation -> class
    billed: dict  # status -> bool
    overrides: dict  # (operation, status) -> class
    unconfirmed: frozenset  # the rules assumed: ("operation", op), ("status", status), ("class", c), ...
    data: dict = field(repr=False, compare=False)

    def rule(self, op: str, status: str) -> tuple[str | None, float]:
        """(the class billed, USD per request) of one request (None, 0: not billed)."""
        if (op, status) in self.overrides:
            c = self.overrides[(op, status)]
        elif self.billed[status]:
            c = self.operation_class[op]
        else:
            return None, 0.0
        return c, self.per_million[c] / 1e6

    def guesses(self, op: str, status: str) -> list[str]:
        """The unconfirmed rules one request's price rests on."""
        if (op, status) in self.overrides:
            keys = [("override", f"{op} {status}")]
        else:
            keys = [("status", status)] + ([("operation", op)] if self.billed[status] else [])
        c, _ = self.rule(op, status)
        keys += [("class", c)] if c is not None else []
        return [f"{kind} {name}" for kind, name in keys if (kind, name) in self.unconfirmed]


def names() -> list[str]:
    """The tables shipped with the tool (their ids), sorted."""
    return sorted(f[:-5] for f in os.listdir(TABLES_DIR) if f.endswith(".json"))


def load(name: str) -> Table:
    """A table by id (campaign/price_tables/<id>.json) or by path; ValueError, one line, if it is malformed."""
    path = name if name.endswith(".json") else os.path.join(TABLES_DIR, name + ".json")
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"no price table {name!r} (known: {', '.join(names())})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"the price table {path} is not valid JSON (line {e.lineno}: {e.msg})") from None
    return parse(data, path)


def parse(data: dict, where: str = "the price table") -> Table:
    """A table from its JSON data, every rule checked: a class per operation, a price per class, a billing
    rule per status, each with its `confirmed` and its sources (named in `sources`) unless it is logic."""
    def bad(what: str) -> ValueError:
        return ValueError(f"{where}: {what}")

    for key in ("id", "title", "read_on", "sources", "classes", "operations", "statuses"):
        if key not in data:
            raise bad(f"no {key!r}")
    sources = data["sources"]
    unconfirmed = set()

    def check(kind: str, name: str, rule: dict) -> None:
        conf = rule.get("confirmed")
        if conf not in CONFIRMED:
            raise bad(f"{kind} {name}: 'confirmed' must be one of {', '.join(CONFIRMED)} (got {conf!r})")
        if conf != "logic" and not rule.get("sources"):
            raise bad(f"{kind} {name}: a rule read somewhere names its sources")
        missing = [s for s in rule.get("sources", ()) if s not in sources]
        if missing:
            raise bad(f"{kind} {name}: source {missing[0]!r} is not in 'sources'")
        if conf == "unconfirmed":
            unconfirmed.add((kind, name))

    per_million = {}
    for c, rule in data["classes"].items():
        if not isinstance(rule.get("usd_per_million"), (int, float)) or rule["usd_per_million"] < 0:
            raise bad(f"class {c}: usd_per_million must be a number of at least 0")
        check("class", c, rule)
        per_million[c] = float(rule["usd_per_million"])
    op_class = {}
    for op in OPERATIONS:
        rule = data["operations"].get(op)
        if rule is None:
            raise bad(f"no rule for the operation {op}")
        if rule.get("class") not in per_million:
            raise bad(f"operation {op}: class {rule.get('class')!r} has no price")
        check("operation", op, rule)
        op_class[op] = rule["class"]
    billed = {}
    for st in STATUSES:
        rule = data["statuses"].get(st)
        if rule is None:
            raise bad(f"no rule for the status {st}")
        if not isinstance(rule.get("billed"), bool):
            raise bad(f"status {st}: 'billed' must be true or false")
        check("status", st, rule)
        billed[st] = rule["billed"]
    overrides = {}
    for rule in data.get("overrides") or ():
        op, st = rule.get("operation"), rule.get("status")
        if op not in OPERATIONS or st not in STATUSES or rule.get("class") not in per_million:
            raise bad(f"override {rule!r}: an operation, a status and a priced class")
        check("override", f"{op} {st}", rule)
        overrides[(op, st)] = rule["class"]
    return Table(data["id"], data["title"], data["read_on"], per_million, op_class, billed, overrides,
                 frozenset(unconfirmed), data)


def status_class(code: int | str) -> str:
    """An HTTP status (or never_arrived) as a table's status key: 2xx, 404, 409, 412, 4xx, 5xx."""
    if code == "never_arrived":
        return code
    c = int(code)
    if 200 <= c < 300:
        return "2xx"
    if c in (404, 409, 412):
        return str(c)
    if 400 <= c < 500:
        return "4xx"
    if 500 <= c < 600:
        return "5xx"
    raise ValueError(f"no billing rule for the status {code!r}")


@dataclass(frozen=True)
class Line:
    operation: str
    status: str
    count: int
    billed_as: str | None  # the class, None: not billed
    usd: float
    guesses: tuple[str, ...]  # the unconfirmed rules its price rests on


@dataclass(frozen=True)
class Bill:
    table: str
    usd: float
    lines: tuple[Line, ...]

    @property
    def unconfirmed(self) -> list[str]:
        """'GET 404 x 12: status 404' for every line of requests whose price rests on an unconfirmed rule."""
        return [f"{x.operation} {x.status} x {x.count}: {', '.join(x.guesses)}" for x in self.lines
                if x.guesses and x.count]

    def by_class(self) -> dict[str, int]:
        """class -> requests billed in it ('not billed' for the rest)."""
        out: dict[str, int] = {}
        for x in self.lines:
            k = x.billed_as or "not billed"
            out[k] = out.get(k, 0) + x.count
        return out


def bill(counts: Mapping[tuple[str, str], int], table: Table) -> Bill:
    """What `counts` ((operation, status) -> requests) cost at `table`'s list prices, line by line (free tier
    and billing unit aside: `month` applies them)."""
    lines = []
    for (op, st), n in sorted(counts.items()):
        if op not in OPERATIONS:
            raise ValueError(f"no price for the operation {op!r} (known: {', '.join(OPERATIONS)})")
        if st not in STATUSES:
            raise ValueError(f"no billing rule for the status {st!r} (known: {', '.join(STATUSES)})")
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"a count of requests is an integer of at least 0 (got {n!r} for {op} {st})")
        c, each = table.rule(op, st)
        lines.append(Line(op, st, n, c, n * each, tuple(table.guesses(op, st))))
    return Bill(table.id, sum(x.usd for x in lines), tuple(lines))


def month(per_day: Mapping[tuple[str, str], int], table: Table, days: int = 30) -> dict:
    """A month of `per_day` counts on the invoice: each class's requests, less its free tier, rounded up to the
    table's billing unit, priced. {"list_usd": at list prices, "usd": invoiced, "classes": {class: {...}}}."""
    b = bill({k: v * days for k, v in per_day.items()}, table)
    free = table.data.get("free_tier") or {}
    unit = int(table.data.get("billing_unit") or 1)
    classes = {}
    for c, n in b.by_class().items():
        if c == "not billed":
            continue
        billable = max(0, n - int(free.get(c, 0)))
        units = -(-billable // unit)
        classes[c] = {"requests": n, "free": int(free.get(c, 0)), "billed": units * unit,
                      "usd": units * unit * table.per_million[c] / 1e6}
    return {"days": days, "list_usd": b.usd, "usd": sum(x["usd"] for x in classes.values()), "classes": classes}


def listing_per_day(nodes: int, period_ms: int = 3_000, reads_own: bool = True) -> dict[tuple[str, str], int]:
    """The heartbeat listing's requests a day (ADR 0020, "Cost, after"): each node lists nodes/ every period and
    reads each node's object, one LIST and then one GET per node; `reads_own` False: every object but its own
    (what the model does). All answered 2xx."""
    if nodes < 1 or period_ms < 1 or DAY_MS % period_ms:
        raise ValueError("a listing needs at least one node and a period that divides a day")
    periods = DAY_MS // period_ms
    gets = nodes * (nodes if reads_own else nodes - 1)
    return {("LIST", "2xx"): nodes * periods, ("GET", "2xx"): gets * periods}
