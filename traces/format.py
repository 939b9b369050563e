"""The trace format, version 1: what an implementation writes, one NDJSON file per process.

The first line of a file is its header (the process: node id, instance, machine, the timing it ran
with, the bucket prefix its keys sit under); every later line is one observation, stamped with the
process's wall clock (`wall_ms`) and its monotonic clock (`mono_ms`) when it happened. The kinds:

- the process's I/O with the bucket: `send` (a request left: its id, op, key, condition, If-Match
  token, body, timeout) and `answer` (what came back for that id: a status, an ETag, a GET's body, a
  LIST's entries; `timed_out` when the process gave up);
- the process's other inputs, for the conformance replay: `timer` (a wait of its own ended) and
  `command` (a client request, a hibernation, a stop... given to it from outside);
- what it did and believed, named as the model's observations are (model/observations.py: `served`,
  `answered`, `hold_began`, `hold_ended`, `lease_valid`, ...), with the same fields;
- `exit`: the process ends (status, reason). A file that ends without one is a process killed.

docs/traces.md states every field. The JSON schema (trace-v1.schema.json beside this file, built by
`schema()` and kept equal to it by a test) is the contract; `validate` checks a parsed line against it
with the standard library only (a subset of JSON Schema: type, const, enum, required, properties,
additionalProperties, items, minimum, $ref, allOf of if/then on `kind`); a test checks the
`jsonschema` package agrees on every sample.
"""

from __future__ import annotations

import json
import os

from model.observations import KINDS

TRACE = "nodelease-trace"
VERSION = 1
SCHEMA_FILE = os.path.join(os.path.dirname(__file__), "trace-v1.schema.json")

OPS = ("GET", "PUT", "DELETE", "LIST")
CONDS = ("if-match", "if-none-match")
STATUSES = ("ok", "not_found", "precondition_failed", "conflict", "timed_out", "failed_fast")
PARAMS = ("ttl_ms", "grace_ms", "safety_ms", "max_skew_ms", "heartbeat_period_ms", "attempt_timeout_ms")

# the model's observations a trace may carry (every kind the model observes: KINDS up to the world's own)
OBSERVED = tuple(KINDS)[:tuple(KINDS).index("start")]

INT = {"type": "integer"}
STR = {"type": "string"}
STR_OR_NULL = {"type": ["string", "null"]}
MS = {"type": "integer", "minimum": 0}

# the type of an observation's field, by its name (model/observations.py names them); others: any scalar
FIELD_TYPES = {
    "actor": STR, "generation": INT, "request": {"type": ["integer", "string"]}, "version": STR_OR_NULL,
    "how": STR_OR_NULL, "reason": STR_OR_NULL, "why": STR_OR_NULL, "written_at_ms": INT, "until_ms": INT,
    "left_ms": INT, "node": STR_OR_NULL, "instance": STR_OR_NULL, "command": STR_OR_NULL,
    "outcome": STR_OR_NULL, "cond": STR_OR_NULL, "to": STR_OR_NULL, "segment": STR,
    "segments": {"type": "array", "items": STR},
}
ANY = {"type": ["string", "integer", "null"]}


def _kind(name: str, props: dict, required: tuple) -> dict:
    p = {"wall_ms": INT, "mono_ms": INT, "kind": {"const": name}}
    p.update(props)
    return {"type": "object", "required": ["wall_ms", "mono_ms", "kind", *required], "properties": p,
            "additionalProperties": False}


def schema() -> dict:
    """The JSON schema of trace format 1 (trace-v1.schema.json is this, written out)."""
    kinds = {
        "send": _kind("send", {"id": INT, "op": {"enum": list(OPS)}, "key": STR,
                               "cond": {"enum": [*CONDS, None]}, "version": STR_OR_NULL, "body": STR_OR_NULL,
                               "timeout_ms": MS}, ("id", "op", "key")),
        "answer": _kind("answer", {"id": INT, "status": {"enum": list(STATUSES)}, "version": STR_OR_NULL,
                                   "body": STR_OR_NULL,
                                   "entries": {"type": ["array", "null"],
                                               "items": {"type": "array", "items": STR}}}, ("id", "status")),
        "timer": _kind("timer", {"name": STR}, ("name",)),
        "command": _kind("command", {"name": STR, "args": {"type": "array"}}, ("name",)),
        "exit": _kind("exit", {"status": INT, "reason": STR_OR_NULL}, ("status",)),
    }
    for k in OBSERVED:
        kinds[k] = _kind(k, {f: FIELD_TYPES.get(f, ANY) for f in KINDS[k]}, ())
    header = {
        "type": "object",
        "required": ["trace", "version", "node_id", "instance", "machine", "params", "wall_ms", "mono_ms"],
        "properties": {
            "trace": {"const": TRACE}, "version": {"const": VERSION}, "node_id": STR, "instance": STR,
            "machine": STR, "prefix": STR, "implementation": STR, "wall_ms": INT, "mono_ms": INT,
            "config": {"type": "object"},
            "params": {"type": "object", "required": list(PARAMS), "properties": {k: MS for k in PARAMS},
                       "additionalProperties": False},
        },
        "additionalProperties": False,
    }
    line = {
        "type": "object", "required": ["wall_ms", "mono_ms", "kind"],
        "properties": {"kind": {"enum": list(kinds)}},
        "allOf": [{"if": {"properties": {"kind": {"const": k}}}, "then": {"$ref": f"#/$defs/{k}"}} for k in kinds],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://nodelease-check.invalid/trace-v1.schema.json",
        "title": "nodelease-check trace, format 1: the first line of a file is a header, every other a line",
        "$defs": {"header": header, "line": line, **kinds},
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=1, sort_keys=False) + "\n"


def load_schema() -> dict:
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        return json.load(f)


# --- the validator: the subset of JSON Schema the schema above uses ------------------------------------

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


class Validator:
    """Validates values against a schema of the subset above; `errors(value, ref)` is [] when valid."""

    def __init__(self, doc: dict) -> None:
        self.doc = doc
        self._by_kind: dict[int, dict] = {}  # id(allOf list) -> {kind const: then-schema}

    def _resolve(self, ref: str) -> dict:
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref are supported, not {ref!r}")
        node = self.doc
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def errors(self, value, schema: dict | str, where: str = "") -> list[str]:
        if isinstance(schema, str):
            schema = self._resolve(schema)
        out: list[str] = []
        if "$ref" in schema:
            out += self.errors(value, schema["$ref"], where)
        t = schema.get("type")
        if t is not None:
            types = t if isinstance(t, list) else [t]
            if not any(_TYPES[x](value) for x in types):
                return out + [f"{where or 'the line'}: {json.dumps(value)[:60]} is not of type {' or '.join(types)}"]
        if "const" in schema and value != schema["const"]:
            out.append(f"{where or 'the line'}: {json.dumps(value)[:60]} is not {json.dumps(schema['const'])}")
        if "enum" in schema and value not in schema["enum"]:
            out.append(f"{where or 'the line'}: {json.dumps(value)[:60]} is not one of "
                       f"{', '.join(json.dumps(x) for x in schema['enum'][:12])}"
                       + (", ..." if len(schema["enum"]) > 12 else ""))
        if "minimum" in schema and _TYPES["number"](value) and value < schema["minimum"]:
            out.append(f"{where}: {value} is below {schema['minimum']}")
        if isinstance(value, dict):
            for k in schema.get("required", ()):
                if k not in value:
                    out.append(f"{where + '.' if where else ''}{k} is missing")
            props = schema.get("properties", {})
            for k, v in value.items():
                sub = props.get(k)
                if sub is not None:
                    out += self.errors(v, sub, f"{where + '.' if where else ''}{k}")
                elif schema.get("additionalProperties") is False:
                    out.append(f"{where + '.' if where else ''}{k} is not a field of this kind")
        if isinstance(value, list) and "items" in schema:
            for i, v in enumerate(value):
                out += self.errors(v, schema["items"], f"{where}[{i}]")
        if "allOf" in schema:
            out += self._all_of(value, schema["allOf"], where)
        return out

    def _all_of(self, value, parts: list, where: str) -> list[str]:
        table = self._by_kind.get(id(parts))
        if table is None:  # an allOf of "if kind is K then ..." only: a table by K, read in one step
            table = {}
            for part in parts:
                const = part.get("if", {}).get("properties", {}).get("kind", {}).get("const")
                if set(part) != {"if", "then"} or const is None:
                    table = {}
                    break
                table[const] = part["then"]
            self._by_kind[id(parts)] = table
        if table and isinstance(value, dict):
            then = table.get(value.get("kind"))
            return [] if then is None else self.errors(value, then, where)
        out: list[str] = []
        for part in parts:
            if "if" in part:
                if not self.errors(value, part["if"], where):
                    out += self.errors(value, part.get("then", {}), where)
            else:
                out += self.errors(value, part, where)
        return out


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def parse_line(text: str):
    """One line of a trace as JSON (NaN and Infinity refused: they are not JSON)."""
    return json.loads(text, parse_constant=_no_constant)
