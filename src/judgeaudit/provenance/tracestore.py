"""The report's row traces on disk, compact (issue 36): what rule `report_trace`
writes and rule `report` reads.

A table's traces (`report.cellpages.trace_table`: per row a list of
`provenance.cells.CellTrace`, one per number, or a `TraceFailed`) repeat themselves:
every cell of a row holds the same trials, rows of one judge x task hold the same
trial records again as other objects, and every row holds its provenance chain and
config, the same nodes as its neighbours'. `dumps` stores each distinct value once:
equal strings, lists, tuples and dicts (same keys in the same order, same types) are
made one object before pickling, so the pickle's memo writes each of them once; the
pickle is then compressed (zlib). `loads` gives back traces equal to the ones traced
(every field, every dict's key order, every type: the pages made from them are the
same bytes); equal values are then shared objects, which the report only reads.

Measured on the default run (issue 36): 593 MB of pickles -> see README.
"""

from __future__ import annotations

import os
import pickle
import struct
import zlib
from dataclasses import fields, is_dataclass
from typing import Any

from judgeaudit.io import write_bytes_atomic

MAGIC = b"JATRACE1"
LEVEL = 6


class TraceStoreError(ValueError):
    """A trace file that is not one `dumps` wrote."""


class _Interner:
    """One object per distinct value, type-exact (1, 1.0 and True stay apart; a float
    by its bits, so 0.0 and -0.0 too).

    A table's traces hold millions of values (issue 36: interning was a third of a
    trace job's CPU), so the walk is one closure over per-type memos: a scalar met
    inside a container is interned in the loop, not by a call; a container's key is
    the flat tuple of its interned children's ids (a dict: key, value, key, ...), in
    a memo of its own type. The same values end up shared as before, so the pickle
    is the same bytes."""

    def __init__(self) -> None:
        strs: dict[str, str] = {}
        ints: dict[int, int] = {}
        # a float by its value, except 0.0 / -0.0 and nan (equal or unequal to
        # themselves by value, not by bits): those by their bits
        floats: dict[Any, float] = {}
        dicts: dict[tuple, dict] = {}
        lists: dict[tuple, list] = {}
        tuples: dict[tuple, tuple] = {}
        # a container met again as the same object (a row's cells share its trials):
        # its value once made, by id (the object itself kept, so the id stays its own)
        seen: dict[int, tuple[Any, Any]] = {}
        pack = struct.Struct("<d").pack

        def scalar_float(o: float) -> float:
            k = o if o == o and o != 0.0 else pack(o)
            got = floats.get(k)
            if got is None:
                floats[k] = got = o
            return got

        def intern(o: Any) -> Any:
            t = type(o)
            if t is str:
                return strs.setdefault(o, o)
            if t is int:
                return ints.setdefault(o, o)
            if t is float:
                return scalar_float(o)
            if t is dict or t is list or t is tuple:
                got = seen.get(id(o))
                if got is not None:
                    return got[1]
                canon = container(o, t)
                seen[id(o)] = (o, canon)
                return canon
            if is_dataclass(o) and not isinstance(o, type):
                for f in fields(o):
                    setattr(o, f.name, intern(getattr(o, f.name)))
                return o
            return o

        strs_setdefault = strs.setdefault

        def container(o: Any, t: type) -> Any:
            if t is dict:
                items = []
                key: list[int] = []
                for k, v in o.items():
                    k = strs_setdefault(k, k) if type(k) is str else intern(k)
                    tv = type(v)  # the scalar cases inline: a trial row is a dict of ~30 scalars
                    if tv is str:
                        v = strs_setdefault(v, v)
                    elif v is not None and tv is not bool:
                        v = intern(v)
                    items.append((k, v))
                    key += (id(k), id(v))
                tkey = tuple(key)
                got = dicts.get(tkey)
                if got is None:  # the canonical dict holds its children: ids stay theirs
                    got = dicts[tkey] = dict(items)
                return got
            items = [intern(x) for x in o]  # a list or a tuple
            tkey = tuple(map(id, items))
            memo = lists if t is list else tuples
            got = memo.get(tkey)
            if got is None:
                got = memo[tkey] = items if t is list else tuple(items)
            return got

        self._intern = intern

    def __call__(self, o: Any) -> Any:
        return self._intern(o)


def dumps(traces: list) -> bytes:
    """A table's traces, each distinct value once, pickled and compressed. The traces
    passed in are rewritten to share their equal values (they stay equal)."""
    intern = _Interner()
    shared = [intern(row) if type(row) is list else row for row in traces]
    data = pickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL)
    return MAGIC + zlib.compress(data, LEVEL)


def loads(data: bytes, what: str = "trace file") -> list:
    if not data.startswith(MAGIC):
        raise TraceStoreError(f"{what}: not a compact trace file (no {MAGIC.decode()} header); "
                              "rerun rule report_trace")
    return pickle.loads(zlib.decompress(data[len(MAGIC):]))


def write(path: str | os.PathLike, traces: list) -> int:
    """Write `dumps(traces)` atomically; returns the bytes written."""
    data = dumps(traces)
    write_bytes_atomic(path, data)
    return len(data)


def read(path: str | os.PathLike) -> list:
    """A table's traces as `write` wrote them (the workflow's own output, so unpickling
    it runs no foreign code)."""
    with open(path, "rb") as fh:
        return loads(fh.read(), str(path))


__all__ = ["TraceStoreError", "dumps", "loads", "read", "write"]
