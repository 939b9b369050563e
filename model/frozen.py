"""Immutable helpers for model state: a read-only dict and copy-on-write updates.

The model never mutates the state it was given (DESIGN.md); these make the
cheap way the only way.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict):
    """A dict that refuses mutation. Build a new one with `with_item`/`without`."""

    __slots__ = ()

    def _refuse(self, *a: Any, **k: Any) -> None:
        raise TypeError("FrozenDict is immutable: use with_item() or without()")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]

    def with_item(self, k: Any, v: Any) -> "FrozenDict":
        d = dict(self)
        d[k] = v
        return FrozenDict(d)

    def without(self, k: Any) -> "FrozenDict":
        if k not in self:
            return self
        d = dict(self)
        del d[k]
        return FrozenDict(d)

    def __reduce__(self):
        # copy, deepcopy and pickle rebuild a dict subclass item by item, which this class
        # refuses: rebuild it whole instead
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> "FrozenDict":
        return self

    def __deepcopy__(self, memo) -> "FrozenDict":
        return FrozenDict(copy.deepcopy(dict(self), memo))

    def __hash__(self) -> int:  # type: ignore[override]
        raise TypeError("FrozenDict is not hashable")

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


EMPTY = FrozenDict()


_FIELD_INDEX: dict[type, dict[str, int]] = {}
_new_tuple = tuple.__new__


def field_index(cls) -> dict[str, int]:
    """name -> position of each field of the named tuple class `cls` (made once per class)."""
    try:
        return _FIELD_INDEX[cls]
    except KeyError:
        index = _FIELD_INDEX[cls] = {name: i for i, name in enumerate(cls._fields)}
        return index


def replace(obj, **changes):
    """A copy of the named tuple `obj` with `changes` (the model's only way to "update" state).

    Same result as `obj._replace(**changes)`, but copying the tuple once and setting only the
    changed positions: most updates change one or two of many fields (the hot path).
    """
    cls = type(obj)
    values = list(obj)
    index = _FIELD_INDEX.get(cls) or field_index(cls)
    for name in changes:
        values[index[name]] = changes[name]
    return _new_tuple(cls, values)
