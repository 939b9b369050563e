"""The observation schema as types: an event and, per kind, its fields by name.

A history's event is `Event(t_ms, proc, kind, fields)`; its `fields` are a named tuple of the
kind's own type (`FIELDS[kind]`), named from model.observations.KINDS, so a checker reads
`f.state` and `e.t_ms`, never `f[6]` or `e[0]`. Both are tuples: a history encodes (and hashes)
exactly as it did when events were plain tuples.

`event(t_ms, proc, kind, fields)` makes one from a plain tuple of values; a kind's trailing
fields may be left out (hand-made histories), and take None. A kind not in the schema, or more
values than it names, is a loud error: the schema is the contract between worlds and checkers.
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

from model.observations import KINDS


class Event(NamedTuple):
    t_ms: int  # true time
    proc: int  # index into the history's processes; -1: the world itself
    kind: str
    fields: tuple  # a named tuple of FIELDS[kind]


def _type(kind: str, names: tuple[str, ...]):
    title = "".join(part.title() for part in kind.split("_")) + "Fields"
    cls = namedtuple(title, names, defaults=(None,) * len(names), module=__name__)
    globals()[title] = cls  # a module attribute of its own name: it pickles (worker processes send histories)
    return cls


FIELDS: dict[str, type] = {kind: _type(kind, names) for kind, names in KINDS.items()}

_new = tuple.__new__


class Sent(NamedTuple):
    """One request of the ledger (History.requests): what the world saw leave a process, and its fate."""

    sent_ms: int  # true time it left
    proc: int  # the sender: index into the history's processes
    op: str  # GET, PUT, LIST, DELETE
    key: str  # the key (a LIST's prefix)
    purpose: str  # the model's word on why (the first item of its in-flight entry: `lease_write`, `listing_get`)
    # what the bucket did with it: "2xx", "404", "412", "409", "5xx" (answered), "never_arrived" (lost on the
    # way, failed fast, refused by a cut-off), None (still on its way when the run ended, or held back)
    answer: str | None = None
    reply_lost: bool = False  # the bucket answered, and its answer was lost on the way back
    entries: int | None = None  # a LIST answered 2xx: how many keys it returned
    sdk_retry: bool = False  # the SDK's own retry of a write whose first answer was lost (a request of its own)
    detail: str | None = None  # the in-flight entry's second item when it is a string (the actor, a listed key)


def fields_of(kind: str, values: tuple) -> tuple:
    """`values` as the named fields of `kind` (the same values; missing trailing ones None)."""
    cls = FIELDS.get(kind)
    if cls is None:
        raise KeyError(f"not an observation kind: {kind!r} (model/observations.py names them all)")
    if type(values) is cls:
        return values
    n = len(cls._fields)
    if len(values) == n:
        return _new(cls, values)
    if len(values) > n:
        raise ValueError(f"{kind} has {n} fields ({', '.join(cls._fields)}), got {len(values)}: {values!r}")
    return cls(*values)


def event(t_ms: int, proc: int, kind: str, values: tuple = ()) -> Event:
    """One event, its fields named."""
    return _new(Event, (t_ms, proc, kind, fields_of(kind, values)))
