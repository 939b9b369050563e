"""The simulated bucket: linearizable, with S3's conditional-write semantics.

Each request takes effect at one instant (`apply`). Measured on real servers
(DEVELOPERS.md, tests/conformance): 412 on a failed condition; `If-Match` on
an absent key gives 404 (moto, AWS) or 412 (SeaweedFS), the seed's
*flavour*; AWS may answer 409 ConditionalRequestConflict to a conditional
write racing another (not applied): the world says whether one races it
(`apply`'s `racing`: another conditional write to the key in flight,
World.racing_write), and never asks in an R2 store, which documents no 409. Version tokens follow one of two
disciplines, chosen per seed:

- ``md5``: the ETag is the MD5 of the body, so identical bytes get the same
  token and an A-B-A rewrite lets a stale `If-Match` succeed (S3, moto,
  SeaweedFS);
- ``opaque``: a fresh token per write, and a read may return a different
  token for the same write (R2-like); either token matches `If-Match`.

Every object version also carries a serial number the model never sees: the
world uses it to record which write replaced which (INV-3).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, insort

from model.io import (
    CONFLICT,
    DELETE,
    GET,
    IF_MATCH,
    IF_NONE_MATCH,
    LIST,
    NOT_FOUND,
    OK,
    PRECONDITION_FAILED,
    PUT,
    Reply,
    Request,
)

MD5 = "md5"
OPAQUE = "opaque"
VERSIONINGS = (MD5, OPAQUE)

# the replies without a version, made once (replies are immutable); the others are made from a tuple
# of their fields in one call, without Reply's __new__ (every request is answered here)
_new_tuple = tuple.__new__
_NOT_FOUND = Reply(NOT_FOUND)
_PRECONDITION_FAILED = Reply(PRECONDITION_FAILED)
_CONFLICT = Reply(CONFLICT)
_OK = Reply(OK)


class _Obj:
    __slots__ = ("serial", "body", "write_token", "read_token")

    def __init__(self, serial: int, body: str, write_token: str, read_token: str) -> None:
        self.serial = serial
        self.body = body
        self.write_token = write_token
        self.read_token = read_token


class SimBucket:
    """A linearizable key-value store with S3 conditional semantics."""

    def __init__(self, versioning: str = MD5, absent_if_match: int = 404, p_conflict: float = 0.0,
                 p_alias: float = 0.0, rng=None, alias_rng=None) -> None:
        if versioning not in VERSIONINGS:
            raise ValueError(f"versioning must be one of {VERSIONINGS}, got {versioning!r}")
        if absent_if_match not in (404, 412):
            raise ValueError(f"absent_if_match must be 404 or 412, got {absent_if_match!r}")
        if (p_conflict or p_alias) and rng is None:
            raise ValueError("p_conflict and p_alias need the world's stream")
        self.versioning = versioning
        self.absent_status = NOT_FOUND if absent_if_match == 404 else PRECONDITION_FAILED
        self.p_conflict = p_conflict
        self.p_alias = p_alias
        self.rng = rng
        self.alias_rng = rng if alias_rng is None else alias_rng
        self.objects: dict[str, _Obj] = {}
        self._keys: list[str] = []  # the keys, sorted: LIST by prefix is a range of it
        self._serial = 0
        self._md5: dict[str, str] = {}  # body -> its MD5 token: every segment is the same 4 KiB body

    # --- the one operation -----------------------------------------------------

    def apply(self, req: Request, now_ms: int = 0, racing: bool = False) -> tuple[Reply, int, int]:
        """Apply `req` atomically. Returns (reply, prev_serial, serial). `racing`: another conditional
        write to its key is in flight (the world knows; the bucket applies one request at a time), so a
        conditional write may be answered 409 (at p_conflict) once its condition holds.

        For a GET, `serial` is the version read (0: absent). For a write or
        delete that took effect, `prev_serial` is the version it replaced
        (0: none) and `serial` the new one (0 after a delete); for a write
        that did not take effect both are -1.
        """
        op = req.op
        obj = self.objects.get(req.key)
        if op == GET:
            if obj is None:
                return _NOT_FOUND, -1, 0
            return _new_tuple(Reply, (OK, obj.read_token, obj.body, None)), -1, obj.serial
        if op == LIST:
            return Reply(OK, entries=self.list(req.key)), -1, -1
        if op not in (PUT, DELETE):
            raise ValueError(f"unknown bucket operation {op!r}")
        # conditions
        cond = req.cond
        if cond == IF_MATCH:
            if obj is None:
                return Reply(self.absent_status), -1, -1
            if req.version != obj.write_token and req.version != obj.read_token:
                return _PRECONDITION_FAILED, -1, -1
        elif cond == IF_NONE_MATCH:
            if op == DELETE:
                raise ValueError("If-None-Match on DELETE is not an S3 operation")
            if obj is not None:
                return _PRECONDITION_FAILED, -1, -1
        elif cond is not None:
            raise ValueError(f"unknown condition {cond!r}")
        if racing and cond is not None and self.p_conflict and self.chance("conflict", req.key, self.p_conflict):
            return _CONFLICT, -1, -1
        prev = obj.serial if obj is not None else 0
        if op == DELETE:
            if obj is not None:
                self.remove(req.key)
            return _OK, prev, 0
        self._serial += 1
        serial = self._serial
        body = req.body or ""
        if self.versioning == MD5:
            token = self._md5.get(body)
            if token is None:
                token = self._md5[body] = '"' + hashlib.md5(body.encode()).hexdigest() + '"'
            read_token = token
        else:
            token = f'"w{serial}"'
            read_token = f'"r{serial}"' if self.p_alias and self.chance("alias", req.key, self.p_alias) else token
        if obj is None:
            insort(self._keys, req.key)
        self.objects[req.key] = _Obj(serial, body, token, read_token)
        return _new_tuple(Reply, (OK, token, None, None)), prev, serial

    def chance(self, site: str, key: str, p: float) -> bool:
        """A conflict or an alias for `key` happens (with probability p, from the world's stream of each:
        `rng`, `alias_rng`); a world with a plan replaces this (scenarios/plan.py)."""
        return (self.alias_rng if site == "alias" else self.rng).random() < p

    def remove(self, key: str) -> None:
        """Delete `key` (also for a world's faults: an object deleted outside the protocol)."""
        if self.objects.pop(key, None) is not None:
            del self._keys[bisect_left(self._keys, key)]

    def list(self, prefix: str) -> tuple[tuple[str, str], ...]:
        keys, objects = self._keys, self.objects
        i = bisect_left(keys, prefix)
        out = []
        while i < len(keys) and str.startswith(keys[i], prefix):
            out.append((keys[i], objects[keys[i]].read_token))
            i += 1
        return tuple(out)

    # --- for tests and the world's final snapshot ----------------------------

    def snapshot(self) -> dict[str, str]:
        return {k: self.objects[k].body for k in sorted(self.objects)}
